"""Layout for skipping: what a point lookup reads from a workbench table in other Delta readers,
and what the layout costs a write, before (pyarrow's defaults) and after (``parquet_layout``).

Run ``python -m benchmarks.layout_bench [--rows 5000000] [--write-rows 10000000] [--rounds 3]``.

- ``lookups``: a table of ``rows`` rows (``user``, 100k values; ``category``, 300 strings; an
  amount, a 16-character note and a time) written in each layout: sorted by ``user``, and
  clustered by ``dc.optimize(cluster_by=["user", "category"])`` from random order. Each reader
  (polars ``scan_delta``, deltalake's ``QueryBuilder``, DuckDB's ``delta_scan``) looks five
  values up with ``SELECT *``, each in a fresh process after one lookup in another table (so
  imports and the reader's start are not counted): the bytes its read calls returned
  (``rchar`` of ``/proc/self/io``) and the seconds, medians. Then ``dc.optimize``'s time.
- ``writes``: ``dc.write`` of ``write-rows`` rows of the same columns into a new table, ``rounds``
  times in turns with each layout: the median seconds, the least CPU seconds (every thread of
  the process; other jobs change it less) and their ratios.

Other jobs may load the machine: compare the ratios and the bytes, not the seconds.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

USERS = 100_000
LOOKUPS = (123, 40_000, 54_321, 77_777, 99_000)
READERS = ("polars", "deltalake", "duckdb")


def events(rows: int, seed: int = 0) -> Any:
    """Rows of the benchmark table, in random order."""
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    categories = np.array([f"category-{c:03d}" for c in range(300)])
    return pa.table(
        {
            "user": rng.integers(0, USERS, rows),
            "category": categories[rng.integers(0, 300, rows)],
            "amount": rng.random(rows) * 100,
            "note": [f"{n:016x}" for n in rng.integers(0, 2**62, rows)],
            "at": pa.array(rng.integers(0, 10**15, rows), pa.timestamp("us", "UTC")),
        }
    )


@contextmanager
def layout(name: str) -> Iterator[None]:
    """Write Parquet in workbench's layout (``after``) or with pyarrow's defaults (``before``)."""
    from workbench.core.delta import data_files

    kept = data_files.parquet_layout
    if name == "before":
        data_files.parquet_layout = lambda data: {"use_dictionary": True}
    try:
        yield
    finally:
        data_files.parquet_layout = kept


def probe(reader: str, uri: str, value: int, warm_uri: str) -> dict[str, Any]:
    """One ``SELECT * WHERE user = value`` by ``reader``, after one in ``warm_uri``: the bytes
    its read calls returned and the seconds."""
    if reader == "polars":
        import polars as pl

        def run(where: str) -> int:
            return pl.scan_delta(where).filter(pl.col("user") == value).collect().height

    elif reader == "deltalake":
        from deltalake import DeltaTable, QueryBuilder

        def run(where: str) -> int:
            query = QueryBuilder().register("t", DeltaTable(where))
            return query.execute(f"SELECT * FROM t WHERE user = {value}").read_all().num_rows

    else:
        import duckdb
        import duckdb_extension_delta

        package = os.path.dirname(duckdb_extension_delta.__file__)
        (extension,) = glob.glob(os.path.join(package, "extensions", "*", "delta.duckdb_extension"))
        con = duckdb.connect()
        con.execute(f"LOAD '{extension}'")

        def run(where: str) -> int:
            query = f"SELECT * FROM delta_scan('{where}') WHERE user = {value}"
            return con.execute(query).to_arrow_table().num_rows

    run(warm_uri)
    before = _read_chars()
    start = time.perf_counter()
    found = run(uri)
    return {
        "rows": found,
        "bytes": _read_chars() - before,
        "seconds": time.perf_counter() - start,
    }


def _read_chars() -> int:
    with open("/proc/self/io") as io:
        return next(int(line.split()[1]) for line in io if line.startswith("rchar"))


def lookups(root: Path, rows: int) -> None:
    import pyarrow.compute as pc

    import workbench as dc

    dc.init_local(root)
    data = events(rows)
    ordered = data.sort_by("user")
    with layout("before"):
        dc.write(events(10_000, seed=1), "warm")
    for name in ("before", "after"):
        with layout(name):
            dc.write(ordered, f"sorted_{name}", auto_compact=False)
            dc.write(data, f"clustered_{name}", auto_compact=False)
            start = time.perf_counter()
            dc.optimize(f"clustered_{name}", cluster_by=["user", "category"])
            took = time.perf_counter() - start
        files = dc.get_table(f"clustered_{name}").file_count
        print(f"{name}: dc.optimize(cluster_by=['user', 'category']) {took:.2f} s, {files} files")
    warm = dc.get_table("warm").uri
    print(f"{'table':18} {'reader':10} {'read (median)':>14} {'max':>10} {'seconds':>8}")
    for table in ("sorted_before", "sorted_after", "clustered_before", "clustered_after"):
        uri = dc.get_table(table).uri
        for reader in READERS:
            runs = [_probe_process(reader, uri, value, warm) for value in LOOKUPS]
            for value, found in zip(LOOKUPS, runs, strict=True):
                want = pc.sum(pc.equal(data.column("user"), value)).as_py()
                assert found["rows"] == want, (table, reader, value, found)
            middle = statistics.median(r["bytes"] for r in runs) / 1024
            most = max(r["bytes"] for r in runs) / 1024
            took = statistics.median(r["seconds"] for r in runs)
            print(f"{table:18} {reader:10} {middle:11.0f} KiB {most:6.0f} KiB {took:8.3f}")


def _probe_process(reader: str, uri: str, value: int, warm: str) -> dict[str, Any]:
    arguments = ["--probe", reader, uri, str(value), warm]
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.layout_bench", *arguments],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.splitlines()[-1])


def writes(root: Path, rows: int, rounds: int) -> None:
    import workbench as dc

    dc.init_local(root)
    data = events(rows, seed=2)
    wall: dict[str, list[float]] = {"before": [], "after": []}
    cpu: dict[str, list[float]] = {"before": [], "after": []}
    for n in range(rounds):
        for name in wall:
            with layout(name):
                start, used = time.perf_counter(), time.process_time()
                dc.write(data, f"w_{name}_{n}", auto_compact=False)
                wall[name].append(time.perf_counter() - start)
                cpu[name].append(time.process_time() - used)
            dc.drop_table(f"w_{name}_{n}")
            dc.vacuum(retain=0)
    for label, taken, pick in (("seconds", wall, statistics.median), ("CPU seconds", cpu, min)):
        before, after = pick(taken["before"]), pick(taken["after"])
        print(
            f"dc.write of {rows:,} rows, {label}: before {before:.2f}, after {after:.2f}, "
            f"ratio {after / before:.3f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--write-rows", type=int, default=10_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--probe", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe:
        reader, uri, value, warm = args.probe
        print(json.dumps(probe(reader, uri, int(value), warm)))
        return
    with tempfile.TemporaryDirectory() as root:
        lookups(Path(root) / "lookups", args.rows)
    with tempfile.TemporaryDirectory() as root:
        writes(Path(root) / "writes", args.write_rows, args.rounds)


if __name__ == "__main__":
    main()
