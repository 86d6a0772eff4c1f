"""Many small commits: a commit a minute for a day, compressed. Workbench (automatic compaction
on, its steps included in the timings) beside DuckDB + DuckLake (default settings), in one run.

Run ``python -m benchmarks.small_commits_bench [--appends 1000] [--merges 1000]
[--uncompacted 500] [--s3 300]``.

- ``appends``: that many appends of 10 rows to a new table, then reads of the whole table;
  the same table after ``dc.optimize``; the same appends and reads on DuckLake. Also the write
  amplification: every data file byte written, over the bytes of the final rows written once.
- ``merges``: that many MERGEs of 10 rows (half updates, half new keys) into a 100k-row keyed
  table (deletion vectors on), the median of the first and last 50; then 50 more taken in
  turns with 50 into a fresh copy of the first state (the lived-in table's slowdown with the
  load the same for both), then reads; the same on DuckLake.
- ``uncompacted``: that many appends with automatic compaction off, then reads of the table's
  small files beside pyarrow's own dataset scan of the same files.
- ``s3``: on moto's S3 server, that many appends and then that many merges into a 10k-row
  table (the median commit), each followed by reads beside the same table after
  ``dc.optimize``, also a new process's first read.

Reads are timed warm (the median of several in one process, which keeps small data files
decoded, vectors decoded and object-store files fetched) and with nothing kept (each read after
those caches are emptied; the catalog log and the table's Delta log stay read). On S3 also the
first read of new processes (the median of several, each importing workbench and registering
the catalog before the clock starts): the catalog log, the table's Delta log and its files all
read anew.

Other jobs may load the machine: compare the ratios, which come from one run, not the seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.core_bench import DuckLake
from benchmarks.timing import forget_read_data, median_seconds, progress, seconds

ROWS_PER_COMMIT = 10
READ_REPEATS = 7
SEED = 20261126
TABLE = "events"
INTERLEAVED = 100
FIRST_READS = 7  # new processes timed per first-read figure

FIRST_READ = """
import json, sys, time
import deltalake, pyarrow.dataset, pyarrow.parquet  # imported before the clock starts
import workbench as dc
root, options, table = json.loads(sys.argv[1])
dc.init({"lake": dc.Catalog(dc.CatalogProperties(root, options))}, default="lake")
start = time.perf_counter()
dc.read(table, read_as=dc.DatasetType.PYARROW)
print(time.perf_counter() - start)
"""


def rows(ids: Any) -> Any:
    """A batch of the benchmark's rows for integer keys ``ids``."""
    import numpy as np
    import pyarrow as pa

    ids = np.asarray(ids, dtype=np.int64)
    return pa.table(
        {"id": ids, "value": ids * 0.5, "label": pa.array(ids % 1000).cast(pa.string())}
    )


def keyed_schema() -> Any:
    import pyarrow as pa

    import workbench as dc

    return dc.Schema.of(
        [
            dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True),
            dc.Field.of(pa.field("value", pa.float64())),
            dc.Field.of(pa.field("label", pa.string())),
        ]
    )


def merge_sources(existing: int, count: int, next_key: int | None = None) -> list[Any]:
    """``count`` MERGE sources of 10 rows: 5 keys below ``existing`` (updates), 5 new ones
    from ``next_key`` on (by default ``existing``)."""
    import numpy as np

    rng = np.random.default_rng(SEED + (next_key or 0))
    sources, next_key = [], existing if next_key is None else next_key
    for _ in range(count):
        present = rng.choice(existing, ROWS_PER_COMMIT // 2, replace=False)
        new = np.arange(next_key, next_key + ROWS_PER_COMMIT // 2)
        next_key += len(new)
        sources.append(rows(np.concatenate([present, new])))
    return sources


def timed_loop(label: str, batches: list[Any], call: Callable[[Any], Any]) -> list[float]:
    """Seconds each ``call(batch)`` takes, in order."""
    return [seconds(lambda b=b: call(b)) for b in progress(batches, len(batches), label)]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def ms(value: float) -> str:
    return f"{value * 1000:8.2f} ms"


def folder_bytes(root: str, storage: Any | None = None) -> int:
    """Bytes of every Parquet data file under a table folder (removed ones too: nothing is
    vacuumed during the benchmark), locally or through a catalog's storage; the Delta log's
    checkpoints are Parquet too, but not data."""
    if storage is not None:
        entries = storage.list("")
        return sum(e["size"] for e in entries if _is_data_file(e["path"]))
    total = 0
    for folder, _, files in os.walk(root):
        paths = [Path(folder, f) for f in files]
        total += sum(p.stat().st_size for p in paths if _is_data_file(str(p)))
    return total


def _is_data_file(path: str) -> bool:
    return path.endswith(".parquet") and "_delta_log" not in Path(path).parts


class Report:
    """Lines of ``name  workbench  other  ratio``, printed as they come."""

    def line(self, name: str, ours: float, theirs: float | None = None, note: str = "") -> None:
        other = ms(theirs) if theirs is not None else " " * 11
        ratio = f"{ours / theirs:6.2f}x" if theirs else "       "
        print(f"{name:<52} {ms(ours)} {other} {ratio} {note}", flush=True)


def read_seconds(dc: Any, catalog: str | None = None) -> float:
    return median_seconds(
        lambda: dc.read(TABLE, catalog=catalog, read_as=dc.DatasetType.PYARROW), READ_REPEATS
    )


def ducklake(folder: str) -> DuckLake:
    """A DuckLake catalog in a new subfolder of ``folder``."""
    root = Path(folder, "lake")
    root.mkdir()
    return DuckLake(root)


def cold_read_seconds(dc: Any) -> float:
    """A read with nothing kept from earlier reads (the median of several, each after the
    process's data file, decoded file and vector caches are emptied): a new process's first
    read of the table, its catalog already open."""

    def read() -> None:
        forget_read_data()
        dc.read(TABLE, read_as=dc.DatasetType.PYARROW)

    return median_seconds(read, READ_REPEATS)


def first_read_seconds(root: str, options: dict[str, str]) -> float:
    """The median seconds of a new process's first read of the table in the catalog at
    ``root`` (``FIRST_READS`` processes; imports and ``dc.init`` happen before the clock)."""
    argument = json.dumps([root, options, TABLE])
    took = [
        float(
            subprocess.run(
                [sys.executable, "-c", FIRST_READ, argument],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
        )
        for _ in range(FIRST_READS)
    ]
    return statistics.median(took)


def appends(count: int, report: Report) -> None:
    import workbench as dc

    batches = [rows(range(i * ROWS_PER_COMMIT, (i + 1) * ROWS_PER_COMMIT)) for i in range(count)]
    with tempfile.TemporaryDirectory() as folder:
        dc.init_local(Path(folder, "wb"))
        took = timed_loop("workbench appends", batches, lambda b: dc.write(b, TABLE))
        lake = ducklake(folder)
        lake.create_log(batches[0])
        theirs = timed_loop("ducklake appends", batches[1:], lake.append_log)
        report.line(
            f"{count} appends of 10 rows: median append",
            statistics.median(took),
            statistics.median(theirs),
        )
        report.line(
            "   ... p99 append (compaction steps included)",
            percentile(took, 0.99),
            percentile(theirs, 0.99),
        )
        files, theirs_read = len(_files(dc)), median_seconds(lake.read_log, READ_REPEATS)
        report.line(
            f"   then read the {count * ROWS_PER_COMMIT}-row table",
            read_seconds(dc),
            theirs_read,
            f"({files} files)",
        )
        lived_cold = cold_read_seconds(dc)
        report.line("   ... nothing kept from earlier reads", lived_cold, theirs_read)
        uri = dc.get_table(TABLE).uri
        written = folder_bytes(uri)
        final = dc.read(TABLE, read_as=dc.DatasetType.PYARROW)
        dc.write(final, "once")
        once = folder_bytes(dc.get_table("once").uri)
        dc.optimize(TABLE)
        report.line("   the same table after dc.optimize", read_seconds(dc))
        report.line(
            "   ... nothing kept, beside the optimized table",
            lived_cold,
            cold_read_seconds(dc),
        )
        by_step = ", ".join(f"{op} {n / once:.2f}x" for op, n in bytes_by_operation(uri).items())
        print(
            f"   write amplification: {written / once:.2f}x ({written:,} bytes written, "
            f"{once:,} for the final rows written once; by step: {by_step})",
            flush=True,
        )


def bytes_by_operation(uri: str) -> dict[str, int]:
    """Bytes of the data files each kind of commit added (the appends themselves, the
    compaction steps), from the table's Delta log (JSON commits: a local table)."""
    import json

    totals: dict[str, int] = {}
    for commit in sorted(Path(uri, "_delta_log").glob("*.json")):
        actions = [json.loads(line) for line in commit.read_text().splitlines() if line]
        operation = next(
            (a["commitInfo"].get("operation") for a in actions if "commitInfo" in a), ""
        )
        added = sum(a["add"]["size"] for a in actions if "add" in a)
        totals[operation or "?"] = totals.get(operation or "?", 0) + added
    return {op: n for op, n in totals.items() if n}


def _files(dc: Any) -> list[Any]:
    """The data files of the benchmark's table, as the catalog shows it now."""
    from workbench.core.catalog.locations import locate
    from workbench.core.transactions.table_versions import open_table

    return open_table(locate(TABLE, None, None)).files


def merges(count: int, report: Report) -> None:
    import workbench as dc

    base = rows(range(100_000))
    sources = merge_sources(100_000, count)
    with tempfile.TemporaryDirectory() as folder:
        dc.init_local(Path(folder, "wb"))
        dc.write(base, TABLE, schema=keyed_schema())
        took = timed_loop("workbench merges", sources, lambda s: dc.write(s, TABLE, mode="merge"))
        lake = ducklake(folder)
        lake.write(base)
        theirs = timed_loop("ducklake merges", sources, lake.merge)
        report.line(
            f"{count} MERGEs of 10 rows into 100k keyed rows: median",
            statistics.median(took),
            statistics.median(theirs),
        )
        first, last = statistics.median(took[:50]), statistics.median(took[-50:])
        report.line("   ... first 50 merges' median", first, statistics.median(theirs[:50]))
        report.line(
            "   ... last 50 merges' median",
            last,
            statistics.median(theirs[-50:]),
            f"(last/first {last / first:.2f}x)",
        )
        report.line("   ... p99 merge", percentile(took, 0.99), percentile(theirs, 0.99))
        lived, fresh = interleaved_merges(dc, base, 100_000 + count * ROWS_PER_COMMIT // 2)
        report.line(
            f"   ... {INTERLEAVED} more, in turns with a fresh table's",
            lived,
            fresh,
            "(lived-in / fresh; workbench both)",
        )
        files, theirs_read = len(_files(dc)), median_seconds(lake.read_arrow, READ_REPEATS)
        report.line("   then read the table", read_seconds(dc), theirs_read, f"({files} files)")
        lived_cold = cold_read_seconds(dc)
        report.line("   ... nothing kept from earlier reads", lived_cold, theirs_read)
        dc.optimize(TABLE)
        report.line("   the same table after dc.optimize", read_seconds(dc))
        report.line(
            "   ... nothing kept, beside the optimized table",
            lived_cold,
            cold_read_seconds(dc),
        )


def interleaved_merges(dc: Any, base: Any, next_key: int) -> tuple[float, float]:
    """Median seconds of ``INTERLEAVED`` merges into the lived-in table and as many into a
    fresh copy of its first state, taken in turns: a load that comes and goes weighs on both
    alike, where the first and last 50 of one loop are minutes apart."""
    dc.write(base, "fresh", schema=keyed_schema())
    sources = merge_sources(100_000, INTERLEAVED, next_key)
    lived, fresh = [], []
    for source in progress(sources, INTERLEAVED, "merges in turns"):
        fresh.append(seconds(lambda s=source: dc.write(s, "fresh", mode="merge")))
        lived.append(seconds(lambda s=source: dc.write(s, TABLE, mode="merge")))
    return statistics.median(lived), statistics.median(fresh)


def on_s3(count: int, report: Report) -> None:
    import workbench as dc
    from workbench.core.delta import upkeep
    from workbench.testing import LocalS3

    with LocalS3() as s3:
        for kind in ("appends", "merges"):
            root = f"s3://{s3.new_bucket()}/lake"
            dc.init({"lake": dc.Catalog(dc.CatalogProperties(root, s3.options))}, default="lake")
            if kind == "appends":
                batches = [rows(range(i * 10, (i + 1) * 10)) for i in range(count)]
                took = timed_loop("s3 appends", batches, lambda b: dc.write(b, TABLE))
            else:
                dc.write(rows(range(10_000)), TABLE, schema=keyed_schema())
                sources = merge_sources(10_000, count)
                took = timed_loop("s3 merges", sources, lambda s: dc.write(s, TABLE, mode="merge"))
            upkeep.flush()  # background checkpoints done, as a later process would find them
            files = len(_files(dc))
            lived_cold, lived = cold_read_seconds(dc), read_seconds(dc)
            lived_first = first_read_seconds(root, s3.options)
            dc.optimize(TABLE)
            upkeep.flush()
            optimized_cold, optimized = cold_read_seconds(dc), read_seconds(dc)
            optimized_first = first_read_seconds(root, s3.options)
            report.line(f"moto S3: {count} {kind} of 10 rows: median", statistics.median(took))
            report.line(
                "   then a read",
                lived,
                optimized,
                f"({files} files; beside the optimized table)",
            )
            report.line("   ... nothing kept from earlier reads", lived_cold, optimized_cold)
            report.line("   ... a new process's first read", lived_first, optimized_first)


def uncompacted(count: int, report: Report) -> None:
    """``count`` appends with automatic compaction off, then reads of every small file beside
    pyarrow's own dataset scan of the same files: what a read costs between compaction steps."""
    import pyarrow.dataset as pads

    import workbench as dc

    with tempfile.TemporaryDirectory() as folder:
        dc.init_local(Path(folder, "wb"))
        off = {"delta.autoOptimize.autoCompact": "false"}
        dc.create_table(TABLE, schema=keyed_schema(), table_properties=off)
        batches = [
            rows(range(i * ROWS_PER_COMMIT, (i + 1) * ROWS_PER_COMMIT)) for i in range(count)
        ]
        timed_loop("appends, compaction off", batches, lambda b: dc.write(b, TABLE))
        paths = [f.absolute for f in _files(dc)]
        schema = rows([0]).schema

        def scan() -> None:
            pads.dataset(paths, schema=schema, format="parquet").to_table()

        theirs = median_seconds(scan, READ_REPEATS)
        report.line(
            f"{count} files of 10 rows (compaction off): read",
            read_seconds(dc),
            theirs,
            "(beside pyarrow's dataset scan)",
        )
        report.line("   ... nothing kept from earlier reads", cold_read_seconds(dc), theirs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--appends", type=int, default=1000)
    parser.add_argument("--merges", type=int, default=1000)
    parser.add_argument("--s3", type=int, default=300)
    parser.add_argument("--uncompacted", type=int, default=500)
    args = parser.parse_args()
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'':<52} {'workbench':>11} {'other':>11} {'ratio':>7}")
    report = Report()
    started = time.monotonic()
    if args.appends:
        appends(args.appends, report)
    if args.merges:
        merges(args.merges, report)
    if args.uncompacted:
        uncompacted(args.uncompacted, report)
    if args.s3:
        on_s3(args.s3, report)
    print(
        f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
        f"{time.monotonic() - started:.0f} s"
    )


if __name__ == "__main__":
    main()
