"""``make demo``: a Spark pipeline on the default local catalog, ending in an HTML report.

Raw events (generated on Spark) -> cleaned events -> daily aggregates. Late-arriving events are
merged by key and bring a new column; each refresh of the derived tables is one catalog
transaction; time travel compares the two runs. Then the sample files in ``media/`` become a
media table, built-in models run over it on Daft, and a search finds texts by meaning. Last,
papermill renders the report templates in ``notebooks/`` to HTML in ``reports/``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import pyarrow as pa

import workbench.api as dc

NAMESPACE = "pipeline"
MEDIA_NAMESPACE = "demo_media"
MEDIA = Path(__file__).resolve().parent.parent / "media"  # the repository's sample files
# (model, kind of file it runs on): the built-in models the demo runs over the media table
MODELS = (("image-facts", "image"), ("text-embedding", "text"), ("voice-activity", "audio"))
QUERY = "my order has not arrived"
REPORT_FOLDER = Path("reports")
# the reports the demo renders (bundled templates in notebooks/) and their parameters
REPORTS = (
    ("pipeline_run", {"name": "refresh", "title": "Demo pipeline: the latest refresh"}),
    ("catalog_overview", {"title": "Demo catalog"}),
    ("inference_run", {"namespace": MEDIA_NAMESPACE, "table": "samples"}),
)
EVENTS = 30_000


def raw_events(spark: Any, first_id: int, count: int, seed: int, with_channel: bool) -> Any:
    """Synthetic purchase events; a few are invalid (negative amounts, missing kinds)."""
    from pyspark.sql import functions as F

    frame = spark.range(first_id, first_id + count).select(
        F.col("id").alias("event_id"),
        (F.rand(seed) * 500).cast("long").alias("user_id"),
        F.when(F.rand(seed + 1) < 0.01, None)
        .otherwise(
            F.element_at(
                F.array(F.lit("view"), F.lit("cart"), F.lit("buy")),
                (F.rand(seed + 2) * 3).cast("int") + 1,
            )
        )
        .alias("kind"),
        F.round(F.rand(seed + 3) * 120 - 2, 2).alias("amount"),
        F.expr(
            f"timestamp_seconds(1767225600 + cast(rand({seed + 4}) * 14 * 86400 as long))"
        ).alias("ts"),
    )
    if with_channel:
        channel = F.element_at(
            F.array(F.lit("web"), F.lit("app")), (F.rand(seed + 5) * 2).cast("int") + 1
        )
        frame = frame.withColumn("channel", channel)
    return frame


def rebuild_mode(table: str) -> str:
    """REPLACE a derived table's rows, or CREATE it on the first run (REPLACE needs a table)."""
    return "replace" if dc.table_exists(table, NAMESPACE) else "create"


def refresh(spark: Any, label: str) -> None:
    """Rebuild the cleaned and daily tables from raw events in one catalog transaction, as a
    recorded run with a step per table."""
    from pyspark.sql import functions as F

    with (
        dc.run("refresh", {"label": label}) as run,
        dc.transaction(commit_message=f"refresh {label}"),
    ):
        with run.step("clean_events") as step:
            raw = dc.read("raw_events", NAMESPACE, read_as=dc.DatasetType.SPARK)
            clean = raw.filter("amount >= 0 AND kind IS NOT NULL")
            written = dc.write(clean, "clean_events", NAMESPACE, mode=rebuild_mode("clean_events"))
            step.rows_in, step.rows_out = raw.count(), written.rows_added
        with run.step("daily") as step:
            step.rows_in = written.rows_added
            daily = clean.groupBy(F.to_date("ts").alias("day"), "kind").agg(
                F.count("*").alias("events"), F.round(F.sum("amount"), 2).alias("revenue")
            )
            keys = dc.Schema.of(
                [
                    dc.Field.of(pa.field("day", pa.date32()), is_merge_key=True),
                    dc.Field.of(pa.field("kind", pa.string()), is_merge_key=True),
                ]
            )
            written = dc.write(daily, "daily", NAMESPACE, mode=rebuild_mode("daily"), schema=keys)
            step.rows_out = written.rows_added


def infer_media(step: Any) -> None:
    """Import the sample media, run the built-in models on Daft and search the texts."""
    import pyarrow.compute as pc

    if dc.namespace_exists(MEDIA_NAMESPACE):
        dc.drop_namespace(MEDIA_NAMESPACE, purge=True)
    imported = dc.import_media(MEDIA, "samples", MEDIA_NAMESPACE)
    step(f"media: {imported.added} files of {MEDIA} referenced in {MEDIA_NAMESPACE}.samples")
    for model, kind in MODELS:
        result = dc.infer(
            "samples",
            model,
            namespace=MEDIA_NAMESPACE,
            where=pc.field("kind") == kind,
            progress=False,  # the step line below says what it did
        )
        step(
            f"{model} on Daft: {result.rows_predicted} {kind} files in {result.seconds:.1f} s, "
            f"merged into version {result.table_version}"
        )
    hits = dc.search("samples", QUERY, k=3, namespace=MEDIA_NAMESPACE)
    step(f"search {QUERY!r}: best match {hits['key'].iloc[0]}")


def run() -> list[Path]:
    """Run the pipeline twice (before and after late data), infer over the sample media, then
    render the reports with papermill; returns their paths."""

    dc.init_local()

    def step(text: str) -> None:
        print(f"[demo] {text}", flush=True)

    started = time.perf_counter()
    spark = dc.spark_session()
    step(f"Spark session ready ({spark.sparkContext.master})")
    if dc.namespace_exists(NAMESPACE):
        dc.drop_namespace(NAMESPACE, purge=True)
    keyed = dc.Schema.of([dc.Field.of(pa.field("event_id", pa.int64()), is_merge_key=True)])
    result = dc.write(
        raw_events(spark, 0, EVENTS, 1, False),
        "raw_events",
        NAMESPACE,
        schema=keyed,
        auto_create_namespace=True,
    )
    step(f"raw_events: {result.rows_added} generated events written by Spark")
    refresh(spark, "run 1")
    first_run = dc.transactions(read_as="pyarrow", limit=1).column("transaction_id")[0].as_py()
    dc.tag(f"demo-run-1-{first_run[:12]}", first_run)
    step("run 1: clean_events and daily rebuilt in one transaction")
    late = raw_events(spark, EVENTS - 1_000, 3_000, 2, True)
    result = dc.write(late, "raw_events", NAMESPACE)
    step(
        f"late data merged: {result.rows_added} new, {result.rows_updated} updated, "
        f"schema changes {', '.join(result.schema_changes) or '-'}"
    )
    refresh(spark, "run 2")
    step("run 2: derived tables rebuilt in one transaction")
    change = dc.diff("daily", NAMESPACE, before=first_run)
    step(f"daily, run 1 -> run 2: {change.changed} rows changed, {change.added} added")
    step(f"pipeline finished in {time.perf_counter() - started:.1f} s")
    inferring = time.perf_counter()
    infer_media(step)
    step(f"inference finished in {time.perf_counter() - inferring:.1f} s")
    reports = []
    for template, parameters in REPORTS:
        rendered = dc.report(
            template, output=REPORT_FOLDER / f"{template}.html", parameters=parameters
        )
        step(f"{template} report rendered by papermill in {rendered.seconds:.1f} s")
        reports.append(rendered.html)
    step(f"demo finished in {time.perf_counter() - started:.1f} s")
    return reports


if __name__ == "__main__":
    for path in run():
        print(f"[demo] report written to {path}")
    sys.exit(0)
