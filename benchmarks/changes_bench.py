"""The change feed (issue 45): the changes of one MERGE of ``--merged`` rows (half updates, half
inserts) into a keyed table of ``--rows`` rows, through ``dc.changes`` beside DuckLake's
``table_changes`` and deltalake's ``load_cdf``, and the same at a tenth of the size (the feed
should cost the change, not the table).

Run ``python -m benchmarks.changes_bench [--rows 10000000] [--merged 100] [--repeats 7]`` from
the repository root; a quick run: ``--rows 1000000``.

Workbench's table is merge-on-read (deletion vectors) with ``delta.enableChangeDataFeed``, so
its MERGE commit carries a change data file; ``dc.changes`` reads it (and deltalake's
``load_cdf`` reads the same file). "computed" is ``dc.changes`` deriving the same rows from the
commit's adds and deletion vectors instead (what a table without the property gets). DuckLake
(default settings) gets the same rows, the MERGE as one UPDATE and one INSERT in a transaction.
Each path runs once, then ``repeats`` times in turns with the others, in one process; times are
medians. Targets: dc.changes <= 1.0x DuckLake and <= 1.0x load_cdf; the bigger table within
1.2x of the smaller.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from benchmarks.core_bench import ducklake_extension_path
from benchmarks.timing import seconds


def rows(start: int, stop: int, seed: int) -> pa.Table:
    """Rows ``start`` to ``stop`` of the table: a key, a number, a short text."""
    rng = np.random.default_rng(seed)
    ids = np.arange(start, stop, dtype=np.int64)
    return pa.table(
        {
            "id": ids,
            "n": rng.integers(0, 1_000_000, len(ids)),
            "s": pa.array([f"s{i % 997}" for i in ids.tolist()], pa.string()),
        }
    )


def merged_rows(size: int, merged: int) -> pa.Table:
    """Half updates of keys spread over the table, half new keys."""
    rng = np.random.default_rng(7)
    updated = np.sort(rng.choice(size, merged // 2, replace=False)).astype(np.int64)
    new = np.arange(size, size + merged - len(updated), dtype=np.int64)
    ids = np.concatenate([updated, new])
    return pa.table({"id": ids, "n": -ids - 1, "s": pa.array(["merged"] * len(ids), pa.string())})


class Workbench:
    """A keyed merge-on-read workbench table with change data files, and its MERGE."""

    def __init__(self, folder: Path, size: int, merged: int):
        import workbench as dc

        self.dc = dc
        self.catalog = f"changes{size}"
        dc.put_catalog(self.catalog, dc.Catalog(dc.CatalogProperties(str(folder / "wb"))))
        schema = dc.Schema.of(
            [
                dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True),
                dc.Field.of(pa.field("n", pa.int64())),
                dc.Field.of(pa.field("s", pa.string())),
            ]
        )
        properties = {"delta.enableChangeDataFeed": True}
        dc.create_table("t", catalog=self.catalog, schema=schema, table_properties=properties)
        step = 2_000_000
        for start in range(0, size, step):
            data = rows(start, min(start + step, size), start)
            dc.write(data, "t", catalog=self.catalog, mode="merge")
        self.version = dc.write(
            merged_rows(size, merged), "t", catalog=self.catalog, mode="merge"
        ).version
        self.uri = str(folder / "wb" / "default" / "t")

    def changes(self) -> pa.Table:
        return self.dc.changes(
            "t", self.version, self.version, catalog=self.catalog, read_as="pyarrow"
        )

    def computed(self) -> pa.Table:
        from workbench.core.io.changes import table_changes

        return table_changes(
            "t", self.version, self.version, catalog=self.catalog, change_files=False
        )

    def load_cdf(self) -> pa.Table:
        from deltalake import DeltaTable

        reader = DeltaTable(self.uri).load_cdf(
            starting_version=self.version, ending_version=self.version
        )
        return reader.read_all()


class DuckLake:
    """The same rows in DuckLake, the MERGE as one transaction, and its ``table_changes``."""

    def __init__(self, folder: Path, size: int, merged: int):
        import duckdb

        self.con = duckdb.connect()
        self.con.execute(f"LOAD '{ducklake_extension_path()}'")
        root = folder / "ducklake"
        root.mkdir()
        self.con.execute(
            f"ATTACH 'ducklake:{root}/meta.ducklake' AS lake (DATA_PATH '{root}/data/')"
        )
        self.con.execute("CREATE TABLE lake.t (id BIGINT, n BIGINT, s VARCHAR)")
        step = 2_000_000
        for start in range(0, size, step):
            self._with(rows(start, min(start + step, size), start), "INSERT INTO lake.t FROM src")
        self._with(
            merged_rows(size, merged),
            "BEGIN; UPDATE lake.t SET n = src.n, s = src.s FROM src WHERE lake.t.id = src.id; "
            "INSERT INTO lake.t SELECT * FROM src WHERE id NOT IN (SELECT id FROM lake.t); "
            "COMMIT",
        )
        self.snapshot = self.con.execute("FROM lake.current_snapshot()").fetchone()[0]

    def _with(self, table: pa.Table, sql: str) -> None:
        self.con.register("src", table)
        self.con.execute(sql)
        self.con.unregister("src")

    def changes(self) -> pa.Table:
        return self.con.execute(
            f"FROM lake.table_changes('t', {self.snapshot}, {self.snapshot})"
        ).to_arrow_table()


def timed(paths: dict[str, Callable[[], Any]], repeats: int) -> dict[str, float]:
    """Each path once, then ``repeats`` times in turns: the median seconds of each."""
    times: dict[str, list[float]] = {name: [] for name in paths}
    for fn in paths.values():
        fn()
    for _ in range(repeats):
        for name, fn in paths.items():
            times[name].append(seconds(fn))
    return {name: statistics.median(t) for name, t in times.items()}


def kinds(table: pa.Table, column: str) -> dict[str, int]:
    values = table.column(column).to_pylist()
    return {k: values.count(k) for k in sorted(set(values))}


def run(size: int, merged: int, repeats: int) -> dict[str, float]:
    """Build both tables of ``size`` rows, check the feeds agree, and time them."""
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as folder:
        wb = Workbench(Path(folder), size, merged)
        lake = DuckLake(Path(folder), size, merged)
        ours, theirs, delta = wb.changes(), lake.changes(), wb.load_cdf()
        assert kinds(ours, "_change_type") == kinds(delta, "_change_type"), (ours, delta)
        assert kinds(ours, "_change_type") == kinds(theirs, "change_type"), (ours, theirs)
        assert wb.computed().num_rows == ours.num_rows
        print(f"{size:>11,} rows: changes {kinds(ours, '_change_type')}", flush=True)
        return timed(
            {
                "dc.changes": wb.changes,
                "dc.changes computed": wb.computed,
                "deltalake load_cdf": wb.load_cdf,
                "ducklake table_changes": lake.changes,
            },
            repeats,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000, help="rows of the big table")
    parser.add_argument("--merged", type=int, default=100, help="rows the MERGE writes")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}", flush=True)
    small = run(args.rows // 10, args.merged, args.repeats)
    big = run(args.rows, args.merged, args.repeats)
    print(f"\n{'path':<24}{'small ms':>10}{'big ms':>10}{'big/small':>11}")
    for name in big:
        print(
            f"{name:<24}{small[name] * 1e3:>10.2f}{big[name] * 1e3:>10.2f}"
            f"{big[name] / small[name]:>11.2f}"
        )
    print()
    for name in ("dc.changes", "dc.changes computed"):
        for peer, target in (("ducklake table_changes", 1.0), ("deltalake load_cdf", 1.0)):
            ratio = big[name] / big[peer]
            verdict = "PASS" if ratio <= target else "MISS"
            print(f"{name} / {peer}: {ratio:.2f}x (target <= {target}x) {verdict}")
    flat = big["dc.changes"] / small["dc.changes"]
    print(f"dc.changes {args.rows:,} vs {args.rows // 10:,} rows: {flat:.2f}x (target <= 1.2x)")
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
