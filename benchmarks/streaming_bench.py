"""Spark Structured Streaming into workbench tables, side by side in one session, and exactly
once under kill -9.

Throughput: the same micro-batches of ``--rows`` rows (Parquet files Spark's file source reads
one per micro-batch) written by

- ``sink``: ``df.writeStream.format("workbench")`` (executors write, one keyed commit a batch);
- ``foreach_batch_write``: the same stream calling plain ``dc.write(batch_df, ...)`` in
  ``foreachBatch``, what a Spark user writes without the sink;
- ``noop_sink``: the same stream into Spark's ``noop`` sink (no write at all: Spark's own cost
  of a micro-batch, the floor for any sink);
- ``python_noop_sink``: the same stream into a PySpark Python data source whose tasks read their
  rows and whose commit does nothing: the floor of the API the sink is built on (no jars);
- ``write_spark_loop`` / ``write_arrow_loop``: plain ``dc.write`` calls of the same batches as
  Spark DataFrames / as pyarrow tables, no stream.

Exactly once: ``--kills`` kill -9 of a table -> table streaming query at random moments while
rows are appended, each followed by a restart from its checkpoint (``tests/engines/stream_kills``);
after every kill the sink's rows match its committed source offset, and at the end every source
row is in the sink once.

Run with ``python -m benchmarks.streaming_bench [--batches N] [--rows R] [--rounds K]
[--kills M]``; medians of alternating rounds.
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

import pyarrow as pa
import pyarrow.parquet as pq

from benchmarks.timing import seconds

DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "streaming.json"
TARGET = 0.9  # the sink's rows/s over plain dc.write calls of the same micro-batches
SCHEMA = "id long, name string, value double"


def _batches(folder: Path, batches: int, rows: int) -> list[pa.Table]:
    """``batches`` tables of ``rows`` rows, also written as one Parquet file each."""
    import numpy as np

    folder.mkdir(parents=True)
    tables = []
    for b in range(batches):
        ids = np.arange(b * rows, (b + 1) * rows, dtype=np.int64)
        table = pa.table(
            {
                "id": ids,
                "name": pa.array([f"name_{i}" for i in ids]),
                "value": np.random.default_rng(b).random(rows),
            }
        )
        pq.write_table(table, folder / f"part-{b:05d}.parquet")
        tables.append(table)
    return tables


def _stream(spark: Any, files: Path, checkpoint: Path) -> Any:
    """A stream of the files, one per micro-batch, run until all are written."""
    source = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).parquet(str(files))
    writer = source.writeStream.option("checkpointLocation", str(checkpoint))
    return writer.trigger(availableNow=True)


def _register_python_noop(spark: Any) -> str:
    """Register a Python data source stream sink that only reads its rows; its name."""
    from pyspark.sql.datasource import DataSource, DataSourceStreamArrowWriter, WriterCommitMessage

    class NoopWriter(DataSourceStreamArrowWriter):
        def write(self, iterator: Any) -> WriterCommitMessage:
            return WriterCommitMessage() if sum(b.num_rows for b in iterator) >= 0 else None

        def commit(self, messages: list[Any], batchId: int) -> None:
            pass

    class PythonNoop(DataSource):
        @classmethod
        def name(cls) -> str:
            return "python_noop"

        def streamWriter(self, schema: Any, overwrite: bool) -> NoopWriter:
            return NoopWriter()

    spark.dataSource.register(PythonNoop)
    return PythonNoop.name()


def _ways(spark: Any, folder: Path, batches: int, rows: int) -> dict[str, Any]:
    """Each way to write the same micro-batches, as a call, over fresh files and catalog."""
    import workbench as dc

    dc.init_local(folder / "catalog")
    files = folder / "files"
    tables = _batches(files, batches, rows)
    frames = [spark.read.parquet(str(files / f"part-{b:05d}.parquet")) for b in range(batches)]

    def sink() -> None:
        query = _stream(spark, files, folder / "c1").format("workbench").start("default.sink")
        query.awaitTermination()

    def foreach_batch_write() -> None:
        writer = _stream(spark, files, folder / "c2")
        writer.foreachBatch(lambda batch, _: dc.write(batch, "foreach")).start().awaitTermination()

    def noop_sink() -> None:
        _stream(spark, files, folder / "c3").format("noop").start().awaitTermination()

    def python_noop_sink() -> None:
        query = _stream(spark, files, folder / "c4").format(_register_python_noop(spark)).start()
        query.awaitTermination()

    def write_spark_loop() -> None:
        for frame in frames:
            dc.write(frame, "spark_loop")

    def write_arrow_loop() -> None:
        for table in tables:
            dc.write(table, "arrow_loop")

    ways = [sink, foreach_batch_write, noop_sink, python_noop_sink, write_spark_loop]
    ways.append(write_arrow_loop)
    return {way.__name__: way for way in ways}


def throughput(batches: int, rows: int, rounds: int) -> dict[str, Any]:
    """Seconds (medians of ``rounds``, after a warm-up round) of each way to write the same
    micro-batches, rows/s and the ratios."""
    import workbench as dc
    from workbench.engines.spark import spark_session

    spark = spark_session()
    samples: dict[str, list[float]] = {}
    for i in range(-1, rounds):  # round -1 warms Spark and its Python workers, not counted
        folder = Path(tempfile.mkdtemp())
        ways = list(_ways(spark, folder, batches, rows).items())
        turn = max(i, 0) % len(ways)
        for name, fn in ways[turn:] + ways[:turn]:
            samples.setdefault(name, []).append(seconds(fn))
        for table in ("sink", "foreach", "spark_loop", "arrow_loop"):
            assert dc.read(table, read_as="pyarrow").num_rows == batches * rows, table
        shutil.rmtree(folder, ignore_errors=True)
    medians = {k: statistics.median(v[1:]) for k, v in samples.items()}
    total = batches * rows
    return {
        "batches": batches,
        "rows_per_batch": rows,
        "rounds": rounds,
        "seconds": medians,
        "rows_per_second": {k: total / v for k, v in medians.items()},
        "ratios": {
            "sink_vs_foreach_batch_write": medians["foreach_batch_write"] / medians["sink"],
            "sink_vs_write_spark_loop": medians["write_spark_loop"] / medians["sink"],
            "sink_vs_write_arrow_loop": medians["write_arrow_loop"] / medians["sink"],
            "sink_vs_noop_sink": medians["noop_sink"] / medians["sink"],
            "sink_vs_python_noop_sink": medians["python_noop_sink"] / medians["sink"],
            "noop_sink_vs_write_spark_loop": medians["write_spark_loop"] / medians["noop_sink"],
        },
    }


def exactly_once(kills: int, seed: int) -> dict[str, Any]:
    """Kill -9 a table -> table query ``kills`` times and restart it; what landed."""
    import workbench as dc
    from tests.engines.stream_kills import killed_runs

    folder = Path(tempfile.mkdtemp())
    try:
        catalog = dc.init_local(folder / "catalog")
        report = killed_runs(Path(catalog.root), kills, seed)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return {
        "kills": report.kills,
        "batches_committed": report.batches_committed,
        "rows_each_once": report.rows,
        "seconds": report.seconds,
    }


def main() -> int:
    """Run, write JSON, print Markdown tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=20)
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--kills", type=int, default=50, help="0 skips the kill -9 run")
    parser.add_argument("--seed", type=int, default=45)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    result: dict[str, Any] = {"throughput": throughput(args.batches, args.rows, args.rounds)}
    shown = result["throughput"]
    print(f"{args.batches} micro-batches of {args.rows} rows\n")
    print("| way | seconds | rows/s |\n| --- | ---: | ---: |")
    for name, value in shown["seconds"].items():
        print(f"| {name} | {value:.3f} | {shown['rows_per_second'][name]:,.0f} |")
    print("\n| rows/s of | over | ratio | target |\n| --- | --- | ---: | --- |")
    for name, value in shown["ratios"].items():
        way, over = name.split("_vs_")
        target = "(a floor)"
        if way == "sink" and "noop" not in over:
            target = f">= {TARGET}x {'PASS' if value >= TARGET else 'MISS'}"
        print(f"| {way} | {over} | {value:.2f}x | {target} |")
    if args.kills:
        result["exactly_once"] = once = exactly_once(args.kills, args.seed)
        print(
            f"\nkill -9: {once['kills']} kills and restarts, {once['batches_committed']} "
            f"micro-batches committed, {once['rows_each_once']} source rows each in the sink "
            f"once, offsets and rows matched after every kill ({once['seconds']:.0f} s)"
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
