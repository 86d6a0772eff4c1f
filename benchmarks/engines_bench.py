"""Daft and Ray engines against the libraries' own ways of doing the same work, in one run.

Daft: writing 1M rows (``dc.write(daft_df)`` vs ``df.write_deltalake``), reading with a filter
and an aggregate (``dc.read`` vs ``daft.read_deltalake``), and the peak RSS of reading 10 rows of
a 5M-row table (each in a fresh process). Ray: writing 1M rows (``dc.write(ds)`` vs
``ds.write_parquet``) and reading with an aggregate (``dc.read(read_as=RAY_DATASET)`` vs
``ray.data.read_parquet`` of the same files); Ray's start is reported apart.

Run with ``python -m benchmarks.engines_bench [--rows N] [--rounds R] [--big-rows N]``;
medians of alternating rounds after a warm-up round, ratios workbench / baseline.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.core_bench import generate_data
from benchmarks.timing import seconds

DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "engines.json"
TARGETS = {
    "daft_write": 1.2,
    "daft_read_filter_aggregate": 1.1,
    "daft_limit_peak_rss": 1.2,
    "ray_write": 1.3,
    "ray_read_aggregate": 1.2,
}


def _alternate(pairs: list[tuple[str, Callable[[], Any]]], rounds: int) -> dict[str, float]:
    """Median seconds of each callable over ``rounds`` rounds (after one warm-up round), the
    order swapped every round so drift in machine load hits both alike."""
    samples: dict[str, list[float]] = {name: [] for name, _ in pairs}
    for i in range(-1, rounds):
        for name, fn in pairs if i % 2 == 0 else pairs[::-1]:
            elapsed = seconds(fn)
            if i >= 0:
                samples[name].append(elapsed)
    return {name: statistics.median(values) for name, values in samples.items()}


def daft_timings(rows: int, rounds: int, folder: Path) -> dict[str, float]:
    """Daft write and read timings, workbench and plain Daft side by side."""
    import daft
    from daft import col

    import workbench as dc

    dc.init_local(folder / "catalog")
    frame = daft.from_arrow(generate_data(rows).base)
    counter = iter(range(10**6))

    def write_workbench() -> None:
        dc.write(frame, f"w{next(counter)}")

    def write_daft() -> None:
        frame.write_deltalake(str(folder / f"raw{next(counter)}"))

    timings = _alternate(
        [("daft_write_workbench", write_workbench), ("daft_write_daft", write_daft)], rounds
    )
    dc.write(frame, "table")
    frame.write_deltalake(str(folder / "raw_table"))

    def query(source: Any) -> Any:
        return (
            source.where(col("value") > 0.5)
            .groupby(col("id") % 10)
            .agg(col("value").sum().alias("total"))
            .collect()
        )

    timings |= _alternate(
        [
            ("daft_read_workbench", lambda: query(dc.read("table"))),
            ("daft_read_daft", lambda: query(daft.read_deltalake(str(folder / "raw_table")))),
        ],
        rounds,
    )
    return timings


# The child leaves with os._exit once its figure is out: Daft's native threads can still be
# scanning past an early limit when the interpreter finalizes, and a thread taking the GIL
# then aborts the process (a CPython finalization race, python/cpython#124619).
RSS_PROGRAM = """
import os, resource, sys
import daft, workbench as dc
dc.init_local(sys.argv[1])
if sys.argv[2] == "workbench":
    dc.read("big").limit(10).collect()
elif sys.argv[2] == "daft":
    daft.read_deltalake(sys.argv[3]).limit(10).collect()
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, flush=True)
os._exit(0)
"""


def daft_peak_rss(rows: int, folder: Path) -> dict[str, float]:
    """Peak RSS (MB) of a fresh process reading 10 rows of a ``rows``-row table, both ways
    (both import the same libraries; a third process only imports them, for scale)."""
    import pyarrow as pa

    import workbench as dc

    dc.init_local(folder / "catalog")
    chunk = 1_000_000
    for start in range(0, rows, chunk):
        data = generate_data(min(chunk, rows - start), seed=start).base
        ids = pa.array(range(start, start + data.num_rows), pa.int64())
        data = data.set_column(0, "id", ids)
        dc.write(data, "big", mode="append" if start else "create")
    uri = dc.get_table("big").uri
    peaks = {}
    for way in ("workbench", "daft", "imports_only"):
        out = subprocess.run(
            [sys.executable, "-c", RSS_PROGRAM, str(folder / "catalog"), way, uri],
            capture_output=True,
            text=True,
        )
        if out.returncode or not out.stdout.split():
            raise RuntimeError(
                f"the {way} peak-RSS child exited with {out.returncode}: {out.stderr[-2000:]}"
            )
        peaks[f"daft_limit_rss_mb_{way}"] = int(out.stdout.split()[-1]) / 1024
    return peaks


def ray_timings(rows: int, rounds: int, folder: Path) -> dict[str, float]:
    """Ray start, write and read timings, workbench and plain Ray Data side by side."""
    import ray.data

    import workbench as dc
    from workbench.core.data.engine import get_engine

    start = seconds(lambda: get_engine("ray"))
    dc.init_local(folder / "catalog")
    data = ray.data.from_arrow(generate_data(rows).base).repartition(4).materialize()
    counter = iter(range(10**6))

    def write_workbench() -> None:
        dc.write(data, f"w{next(counter)}")

    def write_ray() -> None:
        data.write_parquet(str(folder / f"raw{next(counter)}"))

    timings = _alternate(
        [("ray_write_workbench", write_workbench), ("ray_write_ray", write_ray)], rounds
    )
    dc.write(data, "table")
    files = [f.absolute for f in _files("table")]
    timings |= _alternate(
        [
            ("ray_read_workbench", lambda: dc.read("table", read_as="ray_dataset").sum("value")),
            ("ray_read_ray", lambda: ray.data.read_parquet(files).sum("value")),
        ],
        rounds,
    )
    timings["ray_start"] = start
    return timings


def _files(table: str) -> list[Any]:
    from workbench.core.catalog.locations import locate
    from workbench.core.transactions.table_versions import open_table

    return open_table(locate(table)).files


def run(rows: int, rounds: int, big_rows: int) -> dict[str, Any]:
    """Every measurement, with the machine's load average before and after."""
    load_before = os.getloadavg()[0]
    folder = Path(tempfile.mkdtemp())
    try:
        seconds = daft_timings(rows, rounds, folder / "daft")
        peaks = daft_peak_rss(big_rows, folder / "rss")
        seconds |= ray_timings(rows, rounds, folder / "ray")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    ratios = {
        "daft_write": seconds["daft_write_workbench"] / seconds["daft_write_daft"],
        "daft_read_filter_aggregate": seconds["daft_read_workbench"] / seconds["daft_read_daft"],
        "daft_limit_peak_rss": peaks["daft_limit_rss_mb_workbench"]
        / peaks["daft_limit_rss_mb_daft"],
        "ray_write": seconds["ray_write_workbench"] / seconds["ray_write_ray"],
        "ray_read_aggregate": seconds["ray_read_workbench"] / seconds["ray_read_ray"],
    }
    return {
        "rows": rows,
        "big_rows": big_rows,
        "rounds": rounds,
        "load_average": [load_before, os.getloadavg()[0]],
        "seconds": seconds,
        "peak_rss_mb": peaks,
        "ratios": ratios,
    }


def main() -> int:
    """Run, write JSON, print Markdown tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--big-rows", type=int, default=5_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    result = run(args.rows, args.rounds, args.big_rows)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    print(f"load average: {result['load_average'][0]:.2f} -> {result['load_average'][1]:.2f}")
    print("| measure | value |\n| --- | ---: |")
    for name, value in result["seconds"].items():
        print(f"| {name} (s) | {value:.3f} |")
    for name, value in result["peak_rss_mb"].items():
        print(f"| {name} | {value:.0f} |")
    print("\n| ratio | value | target |\n| --- | ---: | --- |")
    for name, value in result["ratios"].items():
        target = TARGETS[name]
        print(f"| {name} | {value:.2f}x | <= {target}x {'PASS' if value <= target else 'MISS'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
