"""Paired step timings: workbench and raw deltalake alternate in one process, round after round.

Each round builds both tables afresh and runs every step on both, swapping which goes first, so
machine-load drift hits the two alike; the per-step figure is the median of per-round ratios.
Run with ``python -m benchmarks.paired_bench [--rows N] [--rounds R] [--s3]``; ``--s3`` puts both
on a local moto S3 server (a child process) instead of local folders.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.core_bench import DeltaLake, WorkbenchLake, generate_data
from benchmarks.timing import seconds
from workbench.testing import LocalS3

STEPS = ("write", "read_arrow", "merge", "delete", "read_first_version", "append_20x1k")
TARGET = 1.2
DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "paired.json"
DEFAULT_OUT_S3 = DEFAULT_OUT.with_name("paired_s3.json")


def _round(data: Any, swap: bool, s3: LocalS3 | None) -> dict[str, tuple[float, float]]:
    """One round: each step on both systems (order swapped when ``swap``), fresh folders or
    buckets."""
    folders = [Path(tempfile.mkdtemp()), Path(tempfile.mkdtemp())]
    if s3 is None:
        lakes = [WorkbenchLake(folders[0]), DeltaLake(folders[1])]
    else:
        roots = [f"s3://{s3.new_bucket()}/lake" for _ in folders]
        lakes = [WorkbenchLake(roots[0], s3.options), DeltaLake(roots[1], s3.options)]
    batches = data.log_batches()
    actions = {
        "write": lambda lake: lake.write(data.base),
        "read_arrow": lambda lake: lake.read_arrow(),
        "merge": lambda lake: lake.merge(data.merge),
        "delete": lambda lake: lake.delete(data.delete),
        "read_first_version": lambda lake: lake.read_first_version(),
        "append_20x1k": lambda lake: (
            lake.create_log(batches[0]),
            [lake.append_log(b) for b in batches[1:]],
        ),
    }
    times: dict[str, tuple[float, float]] = {}
    try:
        for step in STEPS:
            order = [1, 0] if swap else [0, 1]
            action = actions[step]
            measured = {i: seconds(lambda i=i, action=action: action(lakes[i])) for i in order}
            times[step] = (measured[0], measured[1])
    finally:
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)
    return times


def run(rows: int, rounds: int, s3: LocalS3 | None = None) -> dict[str, dict[str, float]]:
    """Median seconds per system and median per-round ratio workbench/deltalake per step."""
    data = generate_data(rows)
    samples = [_round(data, i % 2 == 1, s3) for i in range(rounds)]
    print(f"{rounds} rounds done", file=sys.stderr)
    summary = {}
    for step in STEPS:
        wb = [s[step][0] for s in samples]
        raw = [s[step][1] for s in samples]
        summary[step] = {
            "workbench_s": statistics.median(wb),
            "deltalake_s": statistics.median(raw),
            "ratio": statistics.median(a / b for a, b in zip(wb, raw, strict=True)),
        }
    return summary


def markdown(summary: dict[str, dict[str, float]]) -> str:
    """The summary as a Markdown table with a PASS/MISS column against the 1.2x target."""
    lines = [
        "| step | workbench (s) | deltalake (s) | wb/deltalake (median of pairs) | status |",
        "| --- | ---: | ---: | ---: | --- |",
    ]
    for step, row in summary.items():
        status = "PASS" if row["ratio"] <= TARGET else "MISS"
        lines.append(
            f"| {step} | {row['workbench_s']:.3f} | {row['deltalake_s']:.3f} | "
            f"{row['ratio']:.2f}x | {status} |"
        )
    return "\n".join(lines)


def main() -> int:
    """Parse arguments, run the paired rounds, write JSON and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--s3", action="store_true", help="on a local moto S3 server")
    args = parser.parse_args()
    if args.s3:
        with LocalS3() as s3:
            summary = run(args.rows, args.rounds, s3)
    else:
        summary = run(args.rows, args.rounds)
    out = args.out or (DEFAULT_OUT_S3 if args.s3 else DEFAULT_OUT)
    out.parent.mkdir(parents=True, exist_ok=True)
    record = {"rows": args.rows, "rounds": args.rounds, "s3": args.s3, "steps": summary}
    out.write_text(json.dumps(record))
    print(markdown(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
