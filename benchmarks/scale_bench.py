"""Scale-out checks (issue 22), one run, ratios: time travel on S3 without replaying history,
and where the rows of big Spark writes, merges and ``dc.infer`` calls go.

``as_of``: a catalog on the local S3 server (moto) whose table is replaced by 1,000
transactions, so every state holds one small file and a read costs the same whatever its age.
A fresh process opens the catalog, then times latest reads, the first ``as_of`` read (which
loads the catalog log's history once) and ``as_of`` reads of 20 random past states, among them
the one 1,000 transactions old. Target: an ``as_of`` read at most 2x a latest read.

Spark (``format_write``, ``merge``, ``format_merge``): a local Spark session writes ``--rows``
rows (default 10M: an id, a text and a double) with ``df.write.format("workbench")``; then
``dc.write(df, MERGE)`` and ``df.write.format("workbench").option("writeMode", "merge")`` each
merge as many rows (half updates) into a keyed table of that size; a sampler records the
driver's RSS growth and the largest RSS of any Spark Python worker. Targets: driver growth
< 200 MB, no Python worker over 400 MB.

``ray``: ``dc.infer`` on Ray three times over the same rows; the second and later calls reuse
the model's actor pool. Target: no pool start (the first call's extra cost gone).

``infer_spark``, ``infer_ray``: ``dc.infer`` writes a 384-dim float32 vector for each of
``--infer-rows`` rows (default 200k) into their keyed table; driver RSS growth and the largest
worker as above (Ray workers without the object-store pages they map). Targets: driver growth
< 200 MB, no worker over 400 MB.

Run ``python -m benchmarks.scale_bench [--transactions N] [--rows N] [--infer-rows N]
[--parts a,b]`` (parts: ``as_of``, ``format_write``, ``merge``, ``format_merge``, ``ray``,
``infer_spark``, ``infer_ray``; all by default).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import psutil

# The timed side, in a fresh process: nothing about the table is cached yet.
READER = """
import json, random, statistics, sys, time
import workbench as dc

root, options, oldest = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
dc.init({"default": dc.Catalog(dc.CatalogProperties(root, options))})
dc.read("t", read_as="pyarrow")  # the catalog is open, as in a session

def timed(**kwargs):
    started = time.perf_counter()
    dc.read("t", read_as="pyarrow", **kwargs)
    return time.perf_counter() - started

latest = statistics.median(timed() for _ in range(9))
first = timed(as_of=oldest)
past = random.Random(7).sample(dc.transactions()["transaction_id"].to_pylist(), 20)
as_of = statistics.median([timed(as_of=oldest)] + [timed(as_of=p) for p in past])
print(json.dumps({"latest": latest, "first_as_of": first, "as_of": as_of}))
"""


PARTS = ("as_of", "format_write", "merge", "format_merge", "ray", "infer_spark", "infer_ray")


def as_of_on_s3(transactions: int) -> dict[str, float]:
    """Latest and ``as_of`` read times on a moto S3 catalog ``transactions`` commits deep."""
    import pandas as pd

    import workbench as dc
    from workbench.testing import LocalS3

    with LocalS3() as s3:
        root = f"s3://{s3.new_bucket()}/catalog"
        dc.init({"default": dc.Catalog(dc.CatalogProperties(root, s3.options))})
        dc.write(pd.DataFrame({"id": [0], "v": ["x"]}), "t")
        oldest = dc.transactions()["transaction_id"][0].as_py()
        started = time.perf_counter()
        for i in range(1, transactions + 1):
            dc.write(pd.DataFrame({"id": [i], "v": ["x"]}), "t", mode="replace")
        built = time.perf_counter() - started
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
        out = subprocess.run(
            [sys.executable, "-c", READER, root, json.dumps(s3.options), oldest],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        )
    return {**json.loads(out.stdout.strip().splitlines()[-1]), "build_seconds": built}


def _spark_worker(process: psutil.Process) -> int:
    """A Spark Python worker's RSS (0 for other processes)."""
    if "pyspark" in " ".join(process.cmdline()) and "java" not in process.name():
        return process.memory_info().rss
    return 0


def _ray_worker(process: psutil.Process) -> int:
    """A Ray worker's RSS less its shared pages: Ray maps the object store's blocks into every
    worker that reads them, and they live once, in the store (capped at 256 MB here)."""
    command = " ".join(process.cmdline())
    if command.startswith("ray::") or "default_worker.py" in command:
        memory = process.memory_info()
        return memory.rss - memory.shared
    return 0


class PeakMemory:
    """Samples, while its block runs, this process's RSS growth and the largest memory of a
    worker process below it (``worker_memory``: Spark's Python workers by default; every
    50 ms)."""

    def __init__(self, worker_memory: Callable[[psutil.Process], int] = _spark_worker):
        self.worker_memory = worker_memory

    def __enter__(self) -> PeakMemory:
        import threading

        import psutil

        self._me = psutil.Process()
        self._start = self._me.memory_info().rss
        self._driver, self._worker = self._start, 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        import psutil

        while not self._done.is_set():
            self._driver = max(self._driver, self._me.memory_info().rss)
            for child in self._me.children(recursive=True):
                try:
                    self._worker = max(self._worker, self.worker_memory(child))
                except psutil.Error:
                    continue
            time.sleep(0.05)

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()
        self.driver_growth_mb = (self._driver - self._start) / 2**20
        self.worker_peak_mb = self._worker / 2**20


SPARK_CASES = ("format_write", "merge", "format_merge")


def measured(
    name: str,
    action: Callable[[], object],
    worker_memory: Callable[[psutil.Process], int] = _spark_worker,
) -> dict[str, float]:
    """Wall seconds, driver RSS growth and largest worker (Spark's Python workers unless
    ``worker_memory`` says otherwise) of ``action``, as ``<name>_seconds``,
    ``<name>_driver_mb`` and ``<name>_worker_mb``."""
    started = time.perf_counter()
    with PeakMemory(worker_memory) as peak:
        action()
    return {
        f"{name}_seconds": time.perf_counter() - started,
        f"{name}_driver_mb": peak.driver_growth_mb,
        f"{name}_worker_mb": peak.worker_peak_mb,
    }


def spark_memory(rows: int, folder: Path, cases: tuple[str, ...] = SPARK_CASES) -> dict:
    """Memory and time of the Spark ``cases`` in a local catalog: ``format_write`` writes
    ``rows`` rows with ``format("workbench")``; ``merge`` (``dc.write(df, MERGE)``) and
    ``format_merge`` (``format("workbench")`` with ``writeMode`` merge) each merge ``rows``
    rows (half updates, half new keys) into a keyed table of ``rows`` rows of their own."""
    import pyarrow as pa

    import workbench as dc
    from workbench.engines.spark.session import spark_session

    dc.init_local(folder)
    spark = spark_session()
    frame = spark.range(rows).selectExpr("id", "cast(id AS string) AS v", "rand(7) AS x")
    results: dict[str, float] = {}
    if "format_write" in cases:
        write = frame.write.format("workbench").mode("append")
        results |= measured("format_write", lambda: write.save("default.big"))
        assert dc.get_table("big").row_count == rows
    keyed = dc.Schema.of(
        [
            dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True),
            pa.field("v", pa.string()),
            pa.field("x", pa.float64()),
        ]
    )
    source = spark.range(rows // 2, rows + rows // 2).selectExpr(
        "id", "concat('m', cast(id AS string)) AS v", "rand(8) AS x"
    )
    by_key = source.write.format("workbench").option("writeMode", "merge").mode("append")
    merges = {
        "merge": lambda table: dc.write(source, table, mode="merge"),
        "format_merge": lambda table: by_key.save(f"default.{table}"),
    }
    for case, merge in merges.items():
        if case in cases:
            table = f"keyed_{case}"  # each merge gets a table of its own
            dc.write(frame, table, schema=keyed)
            results |= measured(case, partial(merge, table))
            assert dc.get_table(table).row_count == rows + rows // 2
    return results


def ray_infer_calls(folder: Path) -> dict[str, float]:
    """Seconds of a first and a second ``dc.infer`` on Ray over the same 200 rows (Ray already
    running, so the first call's extra is the model's actor pool starting)."""
    import pyarrow as pa

    import workbench as dc
    from workbench.core.data.engine import get_engine

    dc.init_local(folder)
    get_engine("ray")
    keyed = dc.Schema.of(
        [dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True), pa.field("text", pa.string())]
    )
    rows = pa.table({"id": range(200), "text": [f"t{i}" for i in range(200)]})
    dc.write(rows, "docs", schema=keyed)
    model = dc.model(_lengths, inputs=["text"], outputs={"n": pa.int64()}, name="lengths")
    times = []
    for _ in range(3):
        started = time.perf_counter()
        dc.infer("docs", model, engine="ray", force=True, progress=False)
        times.append(time.perf_counter() - started)
    return {"ray_infer_first": times[0], "ray_infer_again": min(times[1:])}


def _lengths(batch: dict[str, list[str]]) -> dict[str, list[int]]:
    return {"n": [len(t) for t in batch["text"]]}


EMBEDDING_DIMENSIONS = 384
INFER_ENGINES = {"infer_spark": "spark", "infer_ray": "ray"}


def infer_memory(part: str, rows: int, folder: Path) -> dict[str, float]:
    """Memory and time of ``dc.infer`` on the part's engine (already started) writing a
    384-dim float32 vector for each of ``rows`` rows into their keyed table."""
    import pyarrow as pa

    import workbench as dc
    from workbench.core.data.engine import get_engine

    engine = INFER_ENGINES[part]
    dc.init_local(folder)
    get_engine(engine)
    keyed = dc.Schema.of(
        [dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True), pa.field("text", pa.string())]
    )
    texts = [f"document {i} about nothing in particular" for i in range(rows)]
    dc.write(pa.table({"id": range(rows), "text": texts}), "docs", schema=keyed)
    del texts
    model = dc.model(
        _embeddings,
        inputs=["text"],
        outputs={"embedding": pa.list_(pa.float32(), EMBEDDING_DIMENSIONS)},
        name="embeddings",
    )
    infer = partial(dc.infer, "docs", model, engine=engine, batch_size=2048, progress=False)
    results = measured(part, infer, _ray_worker if engine == "ray" else _spark_worker)
    assert dc.read("docs", read_as="pyarrow", columns=["embedding"]).drop_null().num_rows == rows
    return results


def _embeddings(batch: dict[str, list[str]]) -> dict[str, object]:
    """Made-up vectors, one per text (the benchmark measures where rows go, not a model)."""
    import numpy as np
    import pyarrow as pa

    count = len(batch["text"])
    values = np.random.default_rng(count).random(count * EMBEDDING_DIMENSIONS, dtype=np.float32)
    return {"embedding": pa.FixedSizeListArray.from_arrays(values, EMBEDDING_DIMENSIONS)}


SPARK_LABELS = {
    "format_write": "format('workbench') write",
    "merge": "dc.write(spark_df, MERGE)",
    "format_merge": "format('workbench') writeMode=merge",
}


def report(results: dict[str, float], transactions: int) -> str:
    """The figures of the parts that ran (``as_of`` reads as ratios to a latest read)."""
    lines = ["load average at start (1, 5, 15 min): " + " ".join(results["load"])]
    if "latest" in results:
        latest = results["latest"]
        lines += [
            f"catalog of {transactions} transactions built in {results['build_seconds']:.0f} s",
            f"latest read: {latest * 1e3:.1f} ms",
            f"as_of read (median of 21 past states): {results['as_of'] * 1e3:.1f} ms "
            f"({results['as_of'] / latest:.2f}x latest; target <= 2x)",
            f"first as_of read (loads the log's history): {results['first_as_of'] * 1e3:.1f} ms "
            f"({results['first_as_of'] / latest:.1f}x latest)",
        ]
    measured_lines = {
        case: f"{label} of {results['rows']:,} rows" for case, label in SPARK_LABELS.items()
    } | {
        part: f"dc.infer on {engine} of {results['infer_rows']:,} rows x "
        f"{EMBEDDING_DIMENSIONS} floats"
        for part, engine in INFER_ENGINES.items()
    }
    if "ray_infer_first" in results:
        lines.append(
            f"dc.infer on Ray, 200 rows: first call {results['ray_infer_first']:.2f} s, again "
            f"{results['ray_infer_again']:.2f} s"
        )
    for name, label in measured_lines.items():
        if f"{name}_seconds" in results:
            lines.append(
                f"{label}: {results[f'{name}_seconds']:.1f} s, driver RSS "
                f"+{results[f'{name}_driver_mb']:.0f} MB (target < 200), largest worker "
                f"{results[f'{name}_worker_mb']:.0f} MB (target < 400)"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--transactions", type=int, default=1000)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--infer-rows", type=int, default=200_000)
    parser.add_argument(
        "--parts",
        default=",".join(PARTS),
        help=f"comma-separated parts to run, of {','.join(PARTS)} (all by default)",
    )
    args = parser.parse_args()
    parts = tuple(args.parts.split(","))
    unknown = set(parts) - set(PARTS)
    if unknown:
        parser.error(f"unknown parts {sorted(unknown)}; choose from {list(PARTS)}")
    results = {
        "load": Path("/proc/loadavg").read_text().split()[:3],
        "rows": args.rows,
        "infer_rows": args.infer_rows,
    }
    if "as_of" in parts:
        results |= as_of_on_s3(args.transactions)
    with tempfile.TemporaryDirectory() as folder:
        cases = tuple(p for p in parts if p in SPARK_CASES)
        if cases:
            results |= spark_memory(args.rows, Path(folder, "spark"), cases)
        if "ray" in parts:
            results |= ray_infer_calls(Path(folder, "ray"))
        for part in (p for p in parts if p in INFER_ENGINES):
            results |= infer_memory(part, args.infer_rows, Path(folder, part))
    print(report(results, args.transactions))


if __name__ == "__main__":
    main()
