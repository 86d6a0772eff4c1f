"""Catalog transaction benchmarks: multi-table commit latency against DuckLake and plain deltalake,
and the cost of catalog state, history and time travel with 10,000 transactions in the log.

Run with ``python -m benchmarks.txn_bench [--rounds R] [--history N] [--s3]``. The history is
200 real transactions over 10 tables plus log rows appended in batches of 100 through the real
log writer, each re-recording a real table version, so every ``as_of`` point reads real data.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from benchmarks.core_bench import ducklake_extension_path
from benchmarks.timing import seconds
from workbench.testing import LocalS3

DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "txn.json"
TABLES = 10
REAL_TRANSACTIONS = 200
TARGETS = {
    "two_table_txn_vs_ducklake": "<= 1.0x DuckLake",
    "state_overhead_ms": "< 10 ms",
    "transactions_10k_ms": "< 300 ms",
    "as_of_overhead_ms": "< 20 ms",
}


def _batch(rows: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({"id": np.arange(rows, dtype=np.int64), "value": rng.random(rows)})


class Systems:
    """Two tables in each system, ready for repeated two-table commits: local folders, or
    buckets on a local S3 server (no DuckLake there: its S3 access needs DuckDB's httpfs
    extension, which cannot be downloaded offline)."""

    def __init__(self, root: Path, first: pa.Table, s3: LocalS3 | None = None):
        import deltalake

        import workbench as dc

        self.dc, self.deltalake = dc, deltalake
        options = s3.options if s3 else None
        lake = f"s3://{s3.new_bucket()}" if s3 else str(root)
        catalog = dc.CatalogProperties(f"{lake}/workbench", options or {})
        dc.init({"default": dc.Catalog(catalog)})
        for name in ("a", "b"):
            dc.write(first, name)
            deltalake.write_deltalake(f"{lake}/delta/{name}", first, storage_options=options)
        self.delta = {
            n: deltalake.DeltaTable(f"{lake}/delta/{n}", storage_options=options) for n in "ab"
        }
        self.duck = None if s3 else self._ducklake(root, first)

    @staticmethod
    def _ducklake(root: Path, first: pa.Table) -> Any:
        import duckdb

        duck = duckdb.connect()
        duck.execute(f"LOAD '{ducklake_extension_path()}'")
        duck.execute(
            f"ATTACH 'ducklake:{root}/lake.ducklake' AS lake (DATA_PATH '{root}/lake_data/')"
        )
        duck.register("first", first)
        for name in ("a", "b"):
            duck.execute(f"CREATE TABLE lake.{name} AS SELECT * FROM first")
        return duck

    def workbench(self, batch: pa.Table) -> None:
        with self.dc.transaction(commit_message="bench"):
            self.dc.write(batch, "a", mode="append")
            self.dc.write(batch, "b", mode="append")

    def deltalake_pair(self, batch: pa.Table) -> None:
        for table in self.delta.values():
            self.deltalake.write_deltalake(table, batch, mode="append")

    def ducklake(self, batch: pa.Table) -> None:
        self.duck.register("batch", batch)
        self.duck.execute("BEGIN")
        self.duck.execute("INSERT INTO lake.a SELECT * FROM batch")
        self.duck.execute("INSERT INTO lake.b SELECT * FROM batch")
        self.duck.execute("COMMIT")


def bench_two_table_commits(rounds: int, s3: LocalS3 | None = None) -> dict[str, float]:
    """Median seconds of one two-table commit of 1k rows per table, systems alternating."""
    batch = _batch(1_000, 1)
    with tempfile.TemporaryDirectory() as folder:
        systems = Systems(Path(folder), batch, s3)
        runners = {"workbench": systems.workbench, "deltalake_two_appends": systems.deltalake_pair}
        if systems.duck is not None:
            runners["ducklake"] = systems.ducklake
        samples: dict[str, list[float]] = {name: [] for name in runners}
        for i in range(rounds):
            turn = i % len(runners)
            for name in list(runners)[turn:] + list(runners)[:turn]:
                samples[name].append(seconds(lambda name=name: runners[name](batch)))
    return {name: statistics.median(values) for name, values in samples.items()}


def build_history(root: Path, total: int, tables: int = TABLES) -> None:
    """A catalog whose log holds ``total`` transactions over ``tables`` tables (see the module
    docstring)."""
    import workbench as dc
    from workbench.core.catalog.scope import get_catalog
    from workbench.core.transactions.catalog_log import log_of
    from workbench.core.transactions.transaction import new_transaction_id

    dc.init_local(str(root))
    for i in range(REAL_TRANSACTIONS):
        name = f"t{i % tables}"
        dc.write(_batch(100, i), name, mode="append" if i >= tables else "create")
    log = log_of(get_catalog())
    state = log.refresh()
    real = [(key, entry) for key, entry in state.tables.items()]
    rng = random.Random(0)
    pending = total - REAL_TRANSACTIONS
    while pending > 0:
        rows = []
        sequence = log.next_sequence()
        for _ in range(min(100, pending)):
            (ns, name), entry = rng.choice(real)
            now = time.time_ns()
            rows.append(
                {
                    "transaction_id": new_transaction_id(),
                    "sequence": sequence,
                    "start_time": now,
                    "end_time": now,
                    "commit_message": "history",
                    "status": "COMMITTED",
                    "operation": "WRITE_APPEND",
                    "namespace": ns,
                    "table_name": name,
                    "table_version": rng.randint(0, entry.version),
                    "incarnation": entry.incarnation,
                    "rows_added": 0,
                    "rows_removed": 0,
                    "engine": "local",
                    "details": None,
                    "actions": None,  # the version's own Delta commit holds its actions
                }
            )
        log.commit(rows)
        pending -= len(rows)
    # leave the latest state pointing at each table's newest version again
    for i in range(tables):
        dc.write(_batch(100, i), f"t{i}", mode="append")


def _cold(root: Path, code: str) -> float:
    """Seconds a fresh process spends on ``code`` (after imports), as it reports them."""
    script = (
        "import time, workbench as dc\n"
        f"dc.init_local({str(root)!r})\n"
        "from workbench.core.catalog.registry import get_catalog\n"
        "from workbench.core.transactions.catalog_log import log_of\n"
        "start = time.perf_counter()\n"
        f"{code}\n"
        "print(time.perf_counter() - start)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def bench_history(root: Path, rounds: int) -> dict[str, float]:
    """State resolution, history listing and as_of read costs on the built catalog."""
    import deltalake

    import workbench as dc
    from workbench.core.catalog.scope import get_catalog
    from workbench.core.transactions.context import view

    cat = get_catalog()
    history = dc.transactions(read_as=dc.DatasetType.PYARROW)
    ends = history.column("end_time").to_pylist()
    state_s = [seconds(lambda: view(cat).entry("default", "t3")) for _ in range(rounds * 10)]
    listing_s = [seconds(lambda: dc.transactions()) for _ in range(5)]
    rng = random.Random(1)
    overhead = []
    for _ in range(rounds):
        point = rng.choice(ends)
        info = dc.get_table("t3", as_of=point)
        path = f"{cat.root}/default/t3"
        travelled = seconds(lambda p=point: dc.read("t3", read_as="pyarrow", as_of=p))
        plain = seconds(
            lambda v=info.version, p=path: deltalake.DeltaTable(p, version=v).to_pyarrow_table()
        )
        overhead.append(travelled - plain)
    return {
        "transactions_in_log": float(history.num_rows),
        "state_overhead_ms": statistics.median(state_s) * 1e3,
        "state_cold_ms": _cold(root, "log_of(get_catalog()).refresh()") * 1e3,
        "transactions_10k_ms": statistics.median(listing_s) * 1e3,
        "transactions_10k_cold_ms": _cold(root, "dc.transactions()") * 1e3,
        "as_of_overhead_ms": statistics.median(overhead) * 1e3,
    }


def main() -> int:
    """Run both parts, write JSON, print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--history", type=int, default=10_000)
    parser.add_argument("--out", type=Path)
    parser.add_argument(
        "--s3", action="store_true", help="two-table commits on a local moto S3 server only"
    )
    args = parser.parse_args()
    if args.s3:
        with LocalS3() as s3:
            result: dict[str, Any] = {
                "two_table_commit_s_on_s3": bench_two_table_commits(args.rounds, s3)
            }
    else:
        commits = bench_two_table_commits(args.rounds)
        print("two-table commits measured", file=sys.stderr)
        with tempfile.TemporaryDirectory() as folder:
            build_history(Path(folder), args.history)
            print(f"history of {args.history} transactions built", file=sys.stderr)
            result = {
                "two_table_commit_s": commits,
                "history": bench_history(Path(folder), args.rounds),
            }
    out = args.out or (DEFAULT_OUT.with_name("txn_s3.json") if args.s3 else DEFAULT_OUT)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2))
    print(markdown(result))
    return 0


def markdown(result: dict[str, Any]) -> str:
    """The measures as a Markdown table beside their targets."""
    lines = ["| measure | value | target |", "| --- | ---: | --- |"]
    commits = result.get("two_table_commit_s") or result["two_table_commit_s_on_s3"]
    where = "local" if "two_table_commit_s" in result else "S3"
    for name, spent in commits.items():
        lines.append(
            f"| two-table commit ({where}), 1k rows each: {name} | {spent * 1e3:.1f} ms | |"
        )
    base = "ducklake" if "ducklake" in commits else "deltalake_two_appends"
    ratio = commits["workbench"] / commits[base]
    target = TARGETS["two_table_txn_vs_ducklake"] if base == "ducklake" else ""
    lines.append(f"| workbench / {base} | {ratio:.2f}x | {target} |")
    for name, value in result.get("history", {}).items():
        lines.append(f"| {name} | {value:.2f} | {TARGETS.get(name, '')} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
