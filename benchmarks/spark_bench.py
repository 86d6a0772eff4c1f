"""Spark engine benchmarks, side by side in one session: workbench writes, reads and MERGE against
the plain Spark work they stand on (``df.write.parquet``, ``spark.read.parquet``, the join and
write a merge needs) and against the local engine's MERGE. Keyed tables merge on read (deletion
vectors, the default); ``merge_spark_cow`` is the same MERGE on a table with vectors off.

Run with ``python -m benchmarks.spark_bench [--rows N] [--rounds R]``; medians of alternating
rounds.
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

from benchmarks.timing import seconds

DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "spark.json"
TARGETS = {"write": 1.3, "read": 1.2, "merge_vs_raw_spark": 1.0}
COPY_ON_WRITE = {"delta.enableDeletionVectors": False}


def _frame(spark: Any, first: int, rows: int, seed: int) -> Any:
    from pyspark.sql import functions as F

    return spark.range(first, first + rows).select(
        F.col("id"),
        F.concat(F.lit("name_"), (F.rand(seed) * 1e7).cast("long").cast("string")).alias("name"),
        F.rand(seed + 1).alias("value"),
        (F.lit(1_700_000_000_000) + (F.rand(seed + 2) * 1e9).cast("long")).alias("ts"),
    )


def run(rows: int, rounds: int) -> dict[str, Any]:
    """All measurements; returns medians in seconds and ratios."""
    from pyspark.sql import functions as F

    import workbench as dc
    from workbench.engines.spark import spark_session

    spark = spark_session()
    data = _frame(spark, 0, rows, 1).cache()
    data.count()
    keys = dc.Schema.of([dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True)])
    half = rows // 20
    source = _frame(spark, rows - half, 2 * half, 7).cache()  # half existing ids, half new
    source.count()
    source_arrow = source.toArrow()
    samples: dict[str, list[float]] = {
        k: []
        for k in (
            "write_workbench",
            "write_parquet",
            "read_workbench",
            "read_parquet",
            "merge_spark",
            "merge_spark_cow",
            "merge_local",
            "merge_raw_spark",
        )
    }
    for i in range(-1, rounds):  # round -1 warms Spark's code paths and is not counted
        folder = Path(tempfile.mkdtemp())
        dc.init_local(folder / "catalog")
        write_pair = [
            ("write_workbench", lambda: dc.write(data, "plain")),
            ("write_parquet", lambda out=str(folder / "raw"): data.write.parquet(out)),
        ]
        for name, fn in write_pair if i % 2 == 0 else write_pair[::-1]:
            samples[name].append(seconds(fn))
        files = [str(p) for p in (folder / "raw").glob("*.parquet")]
        read_pair = [
            (
                "read_workbench",
                lambda: dc.read("plain", read_as="spark").agg(F.sum("value")).collect(),
            ),
            (
                "read_parquet",
                lambda files=files: spark.read.parquet(*files).agg(F.sum("value")).collect(),
            ),
        ]
        for name, fn in read_pair if i % 2 == 0 else read_pair[::-1]:
            samples[name].append(seconds(fn))
        dc.write(data, "keyed", schema=keys)
        dc.write(data, "keyed_cow", schema=keys, table_properties=COPY_ON_WRITE)
        dc.write(data.toArrow(), "keyed_local", schema=keys)
        table_files = list(dc.read("keyed", read_as="spark").inputFiles())

        def raw_merge(table_files: list[str] = table_files, folder: Path = folder) -> None:
            old = spark.read.parquet(*table_files)
            merged = (
                old.alias("o")
                .join(source.alias("s"), "id", "full_outer")
                .select(
                    "id",
                    *[
                        F.coalesce(F.col(f"s.{c}"), F.col(f"o.{c}")).alias(c)
                        for c in ("name", "value", "ts")
                    ],
                )
            )
            merged.write.parquet(str(folder / "merged"))

        merge_runs = [
            ("merge_spark", lambda: dc.write(source, "keyed", mode="merge")),
            ("merge_spark_cow", lambda: dc.write(source, "keyed_cow", mode="merge")),
            ("merge_local", lambda: dc.write(source_arrow, "keyed_local", mode="merge")),
            ("merge_raw_spark", raw_merge),
        ]
        turn = i % len(merge_runs)
        for name, fn in merge_runs[turn:] + merge_runs[:turn]:
            samples[name].append(seconds(fn))
        shutil.rmtree(folder, ignore_errors=True)
    medians = {k: statistics.median(v[1:]) for k, v in samples.items()}
    ratios = {
        "write": medians["write_workbench"] / medians["write_parquet"],
        "read": medians["read_workbench"] / medians["read_parquet"],
        "merge_vs_raw_spark": medians["merge_spark"] / medians["merge_raw_spark"],
        "merge_cow_vs_raw_spark": medians["merge_spark_cow"] / medians["merge_raw_spark"],
        "merge_spark_vs_local": medians["merge_spark"] / medians["merge_local"],
    }
    return {"rows": rows, "rounds": rounds, "seconds": medians, "ratios": ratios}


def main() -> int:
    """Run, write JSON, print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    result = run(args.rows, args.rounds)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    print("| measure | seconds |\n| --- | ---: |")
    for name, value in result["seconds"].items():
        print(f"| {name} | {value:.3f} |")
    print("\n| ratio | value | target |\n| --- | ---: | --- |")
    for name, value in result["ratios"].items():
        target = TARGETS.get(name)
        verdict = "" if target is None else ("PASS" if value <= target else "MISS")
        print(f"| {name} | {value:.2f}x | {f'<= {target}x ' + verdict if target else ''} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
