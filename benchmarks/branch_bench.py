"""Catalog branches: creating one, reading and writing on one, and publishing one, measured
against the same work on ``main`` in one run, on a local catalog in a temporary folder.

``create``: a catalog of ``--tables`` small tables (default 1,000; written ``--tables-per-txn``
to a catalog transaction), then ``--creates`` ``dc.create_branch`` calls with new names in the
session that built it. Target: the median create < 50 ms, and no data copied: the catalog's
files outside ``_workbench/branches`` (count and bytes) are the same before and after, and the
branches' folder holds only JSON files. Beside it, without a target: the first catalog call of
a fresh process, a create or a ``dc.list_tables()`` (both load the catalog's log once).

``read_write``: tables of ``--rows`` rows (default 1M: an id, a double and a text): ``big``,
which main and the branch each changed with the same append of ``--append-rows`` rows;
``still``, which the branch did not change; ``keyed`` (merge key ``id``); and a small
``events``. Each of ``--rounds`` rounds reads ``big`` and ``still`` (``read_as="pyarrow"``) on
main and on the branch, appends ``--append-rows`` rows to ``events`` on each, and merges
``--merge-rows`` rows (half updates, half new keys) into ``keyed`` on each; main and the branch
take turns going first. Target: each branch/main ratio (the median of the rounds' ratios)
<= 1.1x.

``publish``: ``--publish-tables`` tables (default 10). Each of ``--publish-rounds`` rounds times
(a) one catalog transaction on main appending ``--publish-rows`` rows to each table and (b)
``dc.merge_branch`` of a fresh branch on which the same appends were made (only the publish is
timed; the branch is created and written just before it, and kept); (a) and (b) take turns
going first. Target: the median of the rounds' (b)/(a) <= 1.5x.

Run ``python -m benchmarks.branch_bench [--tables N] [--rows N] [--rounds N] [--parts a,b]``
(parts: ``create``, ``read_write``, ``publish``; all by default). Other jobs may load the machine:
compare the ratios, not the milliseconds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from benchmarks.timing import progress, seconds

PARTS = ("create", "read_write", "publish")
CREATE_TARGET_S = 0.050
READ_WRITE_TARGET = 1.1
PUBLISH_TARGET = 1.5
BRANCHES_FOLDER = Path("_workbench", "branches")
SEED = 20260301
T = TypeVar("T")

# The first catalog call of a fresh process, a create or a listing (both load the catalog's log
# once; the libraries a session has anyway are imported before the clock starts).
FIRST_CALL = """
import sys, time
import deltalake, pyarrow, pyarrow.parquet
import workbench as dc

dc.init_local(sys.argv[1])
started = time.perf_counter()
dc.create_branch(sys.argv[3]) if sys.argv[2] == "create" else dc.list_tables()
print(time.perf_counter() - started)
"""


def rows_of(count: int, start: int = 0, seed: int = SEED) -> Any:
    """``count`` rows of the benchmark tables with ids from ``start``."""
    import numpy as np
    import pyarrow as pa

    ids = np.arange(start, start + count, dtype=np.int64)
    values = np.random.default_rng(seed + start).random(count)
    return pa.table({"id": ids, "value": values, "label": pa.array(ids % 1000).cast(pa.string())})


def paired(
    first: Callable[[], object], second: Callable[[], object], swap: bool
) -> tuple[float, float]:
    """Seconds of ``first`` and of ``second``, run in that order, or the other when ``swap``."""
    if swap:
        later = seconds(second)
        return seconds(first), later
    earlier = seconds(first)
    return earlier, seconds(second)


def summary(pairs: list[tuple[float, float]]) -> dict[str, float]:
    """Medians of main's and the branch's seconds, and the median of the per-round ratios."""
    return {
        "main": statistics.median(m for m, _ in pairs),
        "branch": statistics.median(b for _, b in pairs),
        "ratio": statistics.median(b / m for m, b in pairs),
    }


# ------------------------------------------------------------------------------------- create
def data_files(root: Path) -> tuple[int, int]:
    """Count and bytes of the catalog's files outside the branches' folder."""
    count = size = 0
    for path in root.rglob("*"):
        if path.is_file() and BRANCHES_FOLDER not in path.relative_to(root).parents:
            count += 1
            size += path.stat().st_size
    return count, size


def branch_files(root: Path) -> list[Path]:
    """Every file under the branches' folder."""
    folder = root / BRANCHES_FOLDER
    return [p for p in folder.rglob("*") if p.is_file()] if folder.exists() else []


def first_call(folder: Path, call: str, name: str) -> float:
    """Seconds of the first catalog call of a fresh process: ``create`` (a branch ``name``) or
    ``list`` (``dc.list_tables()``)."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    out = subprocess.run(
        [sys.executable, "-c", FIRST_CALL, str(folder), call, name],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    return float(out.stdout.strip().splitlines()[-1])


def bench_create(folder: Path, tables: int, per_txn: int, creates: int) -> dict[str, Any]:
    """Build a catalog of ``tables`` small tables, then time ``creates`` branch creations."""
    import workbench as dc

    dc.init_local(folder)
    frame = rows_of(10)
    chunks = range(0, tables, per_txn)

    def build() -> None:
        for start in progress(chunks, len(chunks), f"writing {tables:,} tables"):
            with dc.transaction(commit_message="branch_bench tables"):
                for i in range(start, min(start + per_txn, tables)):
                    dc.write(frame, f"t{i:05d}")

    build_seconds = seconds(build)
    assert len(dc.list_tables()) == tables
    before = data_files(folder)
    times = [
        seconds(lambda i=i: dc.create_branch(f"b{i}"))
        for i in progress(range(creates), creates, "creating branches")
    ]
    after = data_files(folder)
    files = branch_files(folder)
    firsts: dict[str, list[float]] = {"create": [], "list": []}
    for i in progress(range(3), 3, "fresh processes"):
        for call in ("create", "list") if i % 2 == 0 else ("list", "create"):
            firsts[call].append(first_call(folder, call, f"fresh{i}"))
    return {
        "tables": tables,
        "transactions": len(chunks),
        "build_seconds": build_seconds,
        "create": statistics.median(times),
        "create_max": max(times),
        "creates": creates,
        "first_create": statistics.median(firsts["create"]),
        "first_list": statistics.median(firsts["list"]),
        "files_before": before,
        "files_after": after,
        "branch_files": len(files),
        "branch_json": all(p.suffix == ".json" for p in files),
        "branch_bytes": sum(p.stat().st_size for p in files),
        "largest_branch_file": max((p.stat().st_size for p in files), default=0),
    }


# --------------------------------------------------------------------------------- read/write
def bench_read_write(
    folder: Path, rows: int, rounds: int, append_rows: int, merge_rows: int
) -> dict[str, Any]:
    """Reads, appends and merges on main and on a branch, taking turns (see the docstring)."""
    import pyarrow as pa

    import workbench as dc

    dc.init_local(folder)
    keyed = dc.Schema.of(
        [
            dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True),
            dc.Field.of(pa.field("value", pa.float64())),
            dc.Field.of(pa.field("label", pa.string())),
        ]
    )
    base = rows_of(rows)
    dc.write(base, "big")
    dc.write(base, "still")
    dc.write(base, "keyed", schema=keyed)
    dc.write(rows_of(append_rows), "events")
    dc.create_branch("rw")
    change = rows_of(append_rows, rows)
    dc.write(change, "big", mode="append")  # both sides change big alike
    dc.write(change, "big", mode="append", branch="rw")
    sides = {"main": "main", "branch": "rw"}
    for name in sides.values():  # the first read of each side opens its log and warms caches
        for table in ("big", "still", "keyed", "events"):
            dc.read(table, read_as="pyarrow", branch=name)
    assert dc.read("big", read_as="pyarrow", branch="rw").num_rows == rows + append_rows

    def read(table: str, side: str) -> Callable[[], object]:
        return lambda: dc.read(table, read_as="pyarrow", branch=side)

    half = merge_rows // 2
    steps: dict[str, list[tuple[float, float]]] = {
        "read_changed": [],
        "read_unchanged": [],
        "append": [],
        "merge": [],
    }
    for r in progress(range(rounds), rounds, "main and branch in turns"):
        swap = r % 2 == 1
        appended = rows_of(append_rows, (r + 1) * append_rows)
        merged = rows_of(merge_rows, rows + r * half - half, seed=SEED + r)  # half present

        def append(side: str, data: Any = appended) -> Callable[[], object]:
            return lambda: dc.write(data, "events", mode="append", branch=side)

        def merge(side: str, data: Any = merged) -> Callable[[], object]:
            return lambda: dc.write(data, "keyed", mode="merge", branch=side)

        for step, action in (
            ("read_changed", lambda side: read("big", side)),
            ("read_unchanged", lambda side: read("still", side)),
            ("append", append),
            ("merge", merge),
        ):
            steps[step].append(paired(action("main"), action("rw"), swap))
    for side in sides.values():
        assert dc.read("big", read_as="pyarrow", branch=side).num_rows == rows + append_rows
        appended_rows = append_rows * (rounds + 1)
        assert dc.read("events", read_as="pyarrow", branch=side).num_rows == appended_rows
        assert dc.read("keyed", read_as="pyarrow", branch=side).num_rows == rows + rounds * half
    return {
        "rows": rows,
        "append_rows": append_rows,
        "merge_rows": merge_rows,
        "rounds": rounds,
        **{step: summary(pairs) for step, pairs in steps.items()},
    }


# ------------------------------------------------------------------------------------ publish
def bench_publish(folder: Path, tables: int, rounds: int, frame_rows: int) -> dict[str, Any]:
    """A ``tables``-table transaction on main against publishing a branch that made it."""
    import workbench as dc

    dc.init_local(folder)
    names = [f"p{i}" for i in range(tables)]
    with dc.transaction():
        for name in names:
            dc.write(rows_of(frame_rows), name)
    pairs = []
    for r in progress(range(rounds), rounds, "publishing branches"):
        frame = rows_of(frame_rows, (r + 1) * frame_rows)

        def on_main(frame: Any = frame) -> None:
            with dc.transaction(commit_message="branch_bench on main"):
                for name in names:
                    dc.write(frame, name, mode="append")

        def publish(branch: str = f"pub{r}", frame: Any = frame) -> float:
            dc.create_branch(branch)
            with dc.transaction(branch=branch, commit_message="branch_bench on a branch"):
                for name in names:
                    dc.write(frame, name, mode="append")
            return seconds(lambda: dc.merge_branch(branch))  # the branch stays

        if r % 2:
            published = publish()
            main = seconds(on_main)
        else:
            main = seconds(on_main)
            published = publish()
        pairs.append((main, published))
    for name in names:
        assert dc.read(name, read_as="pyarrow").num_rows == frame_rows * (2 * rounds + 1)
    return {"tables": tables, "rounds": rounds, "frame_rows": frame_rows, **summary(pairs)}


# ------------------------------------------------------------------------------------- report
def verdict(passed: bool) -> str:
    """PASS or FAIL."""
    return "PASS" if passed else "FAIL"


def report(results: dict[str, Any]) -> str:
    """The figures of the parts that ran, with their ratios and PASS/FAIL against the targets."""
    start, end = (" ".join(f"{x:.2f}" for x in results[k]) for k in ("load_start", "load_end"))
    lines = [
        f"load average (1, 5, 15 min) at start: {start}; at end: {end} ({os.cpu_count()} cores)"
    ]
    create = results.get("create")
    if create:
        ratio = create["create"] / CREATE_TARGET_S
        (count0, size0), (count1, size1) = create["files_before"], create["files_after"]
        copied = (count0, size0) != (count1, size1) or not create["branch_json"]
        lines += [
            f"catalog of {create['tables']:,} tables built in {create['build_seconds']:.1f} s "
            f"({create['transactions']} transactions)",
            f"create_branch at {create['tables']:,} tables: {create['create'] * 1e3:.1f} ms "
            f"(median of {create['creates']}, slowest {create['create_max'] * 1e3:.1f} ms) = "
            f"{ratio:.2f}x the 50 ms target: {verdict(ratio < 1)}",
            f"first catalog call of a fresh process (loads the catalog's log; median of 3): "
            f"create_branch {create['first_create'] * 1e3:.0f} ms, dc.list_tables "
            f"{create['first_list'] * 1e3:.0f} ms, create/list "
            f"{create['first_create'] / create['first_list']:.2f}x (no target)",
            f"catalog files outside the branches' folder: {count0:,} ({size0 / 1e6:.2f} MB) "
            f"before, {count1:,} ({size1 / 1e6:.2f} MB) after; branches' folder: "
            f"{create['branch_files']} files, {'all' if create['branch_json'] else 'NOT all'} "
            f"JSON, {create['branch_bytes'] / 1e3:.0f} kB (largest "
            f"{create['largest_branch_file'] / 1e3:.0f} kB) for {create['creates']} "
            f"branches: no data copied: {verdict(not copied)}",
        ]
    rw = results.get("read_write")
    if rw:
        labels = {
            "read_changed": f"read {rw['rows']:,} rows, table both sides changed",
            "read_unchanged": f"read {rw['rows']:,} rows, table the branch did not change",
            "append": f"append {rw['append_rows']:,} rows",
            "merge": f"MERGE {rw['merge_rows']:,} rows into {rw['rows']:,} keyed",
        }
        lines.append(f"branch vs main, median of {rw['rounds']} rounds taking turns:")
        for step, label in labels.items():
            row = rw[step]
            lines.append(
                f"  {label}: main {row['main'] * 1e3:.1f} ms, branch {row['branch'] * 1e3:.1f} "
                f"ms, branch/main {row['ratio']:.2f}x (target <= {READ_WRITE_TARGET}x): "
                f"{verdict(row['ratio'] <= READ_WRITE_TARGET)}"
            )
    pub = results.get("publish")
    if pub:
        lines.append(
            f"publish a branch that appended to {pub['tables']} tables: "
            f"{pub['branch'] * 1e3:.1f} ms; a {pub['tables']}-table transaction on main "
            f"({pub['frame_rows']:,} rows each): {pub['main'] * 1e3:.1f} ms; publish/main "
            f"{pub['ratio']:.2f}x (median of {pub['rounds']} rounds; target <= "
            f"{PUBLISH_TARGET}x): {verdict(pub['ratio'] <= PUBLISH_TARGET)}"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=1000, help="tables for create_branch")
    parser.add_argument("--tables-per-txn", type=int, default=100, help="tables per transaction")
    parser.add_argument("--creates", type=int, default=25, help="branches created and timed")
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of the read tables")
    parser.add_argument("--rounds", type=int, default=41, help="read/write rounds")
    parser.add_argument("--append-rows", type=int, default=10_000)
    parser.add_argument("--merge-rows", type=int, default=1_000)
    parser.add_argument("--publish-tables", type=int, default=10)
    parser.add_argument("--publish-rounds", type=int, default=21)
    parser.add_argument("--publish-rows", type=int, default=1_000, help="rows per append")
    parser.add_argument(
        "--parts",
        default=",".join(PARTS),
        help=f"comma-separated parts to run, of {','.join(PARTS)} (all by default)",
    )
    parser.add_argument("--out", type=Path, help="also write the results as JSON here")
    args = parser.parse_args()
    parts = tuple(args.parts.split(","))
    unknown = set(parts) - set(PARTS)
    if unknown:
        parser.error(f"unknown parts {sorted(unknown)}; choose from {list(PARTS)}")
    results: dict[str, Any] = {"load_start": os.getloadavg()}
    with tempfile.TemporaryDirectory() as folder:
        if "create" in parts:
            results["create"] = bench_create(
                Path(folder, "create"), args.tables, args.tables_per_txn, args.creates
            )
        if "read_write" in parts:
            results["read_write"] = bench_read_write(
                Path(folder, "read_write"),
                args.rows,
                args.rounds,
                args.append_rows,
                args.merge_rows,
            )
        if "publish" in parts:
            results["publish"] = bench_publish(
                Path(folder, "publish"), args.publish_tables, args.publish_rounds, args.publish_rows
            )
    results["load_end"] = os.getloadavg()
    print(report(results))
    if args.out:
        args.out.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
