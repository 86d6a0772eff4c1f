"""``make demo``: a Spark pipeline on the default local catalog, ending in an HTML report.

Raw events (generated on Spark) -> cleaned events -> daily aggregates. Late-arriving events are
merged by key and bring a new column; each refresh of the derived tables is one catalog
transaction; time travel compares the two runs. Then the sample files in ``media/`` become a
media table, built-in models run over it on Daft, and a search finds texts by meaning.
"""

from __future__ import annotations

import html
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

import workbench as dc

NAMESPACE = "pipeline"
MEDIA_NAMESPACE = "demo_media"
MEDIA = Path(__file__).resolve().parent.parent / "media"  # the repository's sample files
# (model, kind of file it runs on): the built-in models the demo runs over the media table
MODELS = (("image-facts", "image"), ("text-embedding", "text"), ("voice-activity", "audio"))
QUERY = "my order has not arrived"
REPORT = Path("reports") / "demo.html"
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
        with run.step("clean_events"):
            raw = dc.read("raw_events", NAMESPACE, read_as=dc.DatasetType.SPARK)
            clean = raw.filter("amount >= 0 AND kind IS NOT NULL")
            dc.write(clean, "clean_events", NAMESPACE, mode=rebuild_mode("clean_events"))
        with run.step("daily"):
            daily = clean.groupBy(F.to_date("ts").alias("day"), "kind").agg(
                F.count("*").alias("events"), F.round(F.sum("amount"), 2).alias("revenue")
            )
            keys = dc.Schema.of(
                [
                    dc.Field.of(pa.field("day", pa.date32()), is_merge_key=True),
                    dc.Field.of(pa.field("kind", pa.string()), is_merge_key=True),
                ]
            )
            dc.write(daily, "daily", NAMESPACE, mode=rebuild_mode("daily"), schema=keys)


@dataclass
class MediaSummary:
    """What the inference step did, for the report."""

    kinds: Any  # files per kind
    results: list[dc.InferResult]
    images: Any  # a few images with their facts
    hits: Any  # the search's best matches


def infer_media(step: Any) -> MediaSummary:
    """Import the sample media, run the built-in models on Daft and search the texts."""
    import pyarrow.compute as pc

    if dc.namespace_exists(MEDIA_NAMESPACE):
        dc.drop_namespace(MEDIA_NAMESPACE, purge=True)
    imported = dc.import_media(MEDIA, "samples", MEDIA_NAMESPACE)
    step(f"media: {imported.added} files of {MEDIA} referenced in {MEDIA_NAMESPACE}.samples")
    results = []
    for model, kind in MODELS:
        result = dc.infer(
            "samples",
            model,
            namespace=MEDIA_NAMESPACE,
            where=pc.field("kind") == kind,
            progress=False,  # the step line below says what it did
        )
        results.append(result)
        step(
            f"{model} on Daft: {result.rows_predicted} {kind} files in {result.seconds:.1f} s, "
            f"merged into version {result.table_version}"
        )
    table = dc.read("samples", MEDIA_NAMESPACE, read_as=dc.DatasetType.PANDAS)
    kinds = table.groupby("kind").size().rename("files").reset_index()
    images = table[table["kind"] == "image"].sort_values("key").head(5)
    images = images[["key", "width", "height", "dominant_colour", "brightness", "sharpness"]]
    hits = dc.search("samples", QUERY, k=3, namespace=MEDIA_NAMESPACE)[["key", "similarity"]]
    step(f"search {QUERY!r}: best match {hits['key'].iloc[0]}")
    return MediaSummary(kinds, results, images.astype({"sharpness": float}).round(3), hits.round(3))


def run() -> Path:
    """Run the pipeline twice (before and after late data) and write the report."""
    from workbench.engines.spark.session import spark_session

    catalog = dc.init_local()
    steps: list[str] = []

    def step(text: str) -> None:
        steps.append(text)
        print(f"[demo] {text}", flush=True)

    started = time.perf_counter()
    spark = spark_session()
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
    compare = dc.sql(
        "SELECT kind, sum(events) AS events, round(sum(revenue), 2) AS revenue "
        f"FROM {NAMESPACE}.daily GROUP BY kind ORDER BY kind"
    )
    before = dc.sql(
        f"SELECT kind, sum(events) AS events_run_1 FROM {NAMESPACE}.daily GROUP BY kind "
        "ORDER BY kind",
        as_of=first_run,
    )
    summary = compare.merge(before, on="kind")
    step(f"pipeline finished in {time.perf_counter() - started:.1f} s")
    inferring = time.perf_counter()
    media = infer_media(step)
    step(f"inference finished in {time.perf_counter() - inferring:.1f} s")
    step(f"demo finished in {time.perf_counter() - started:.1f} s")
    history = dc.transactions(read_as=dc.DatasetType.PANDAS).head(8)
    runs = dc.runs(name="refresh", limit=2, read_as=dc.DatasetType.PANDAS)
    inference_runs = dc.runs(kind="inference", limit=len(MODELS), read_as=dc.DatasetType.PANDAS)
    info = dc.get_table("raw_events", NAMESPACE)
    return _report(catalog.root, steps, info, summary, change, history, runs, media, inference_runs)


def _report(
    root: str,
    steps: list[str],
    info: dc.TableInfo,
    summary: Any,
    change: dc.TableDiff,
    history: Any,
    runs: Any,
    media: MediaSummary,
    inference_runs: Any,
) -> Path:
    items = "".join(f"<li>{html.escape(s)}</li>" for s in steps)
    recent = history[["commit_message", "engine", "tables", "operations", "rows_added"]]
    recorded = runs[["name", "parameters", "status", "duration_ns", "transactions"]]
    predictions = pd.DataFrame(
        {
            "model": [r.model for r in media.results],
            "model version": [r.model_version for r in media.results],
            "engine": [r.engine for r in media.results],
            "rows predicted": [r.rows_predicted for r in media.results],
            "rows skipped": [r.rows_skipped for r in media.results],
            "seconds": [round(r.seconds, 2) for r in media.results],
            "table version": [r.table_version for r in media.results],
        }
    )
    inferences = inference_runs[["name", "status", "duration_ns", "parameters", "transactions"]]
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    REPORT.write_text(
        "<!doctype html><html><head><meta charset='utf-8'><title>workbench demo</title></head>"
        "<body><h1>workbench demo: a Spark pipeline, then inference on media</h1>"
        f"<p>Catalog: <code>{html.escape(root)}</code></p><h2>Steps</h2><ol>{items}</ol>"
        f"<h2>Events per kind, run 2 beside run 1 (time travel)</h2>{summary.to_html(index=False)}"
        f"<h2>daily: run 1 -> run 2</h2>{change._repr_html_()}"
        f"<h2>Table raw_events</h2>{info._repr_html_()}"
        f"<h2>Recent catalog transactions</h2>{recent.to_html(index=False)}"
        f"<h2>Recorded runs</h2>{recorded.to_html(index=False)}"
        f"<h2>Media table {MEDIA_NAMESPACE}.samples</h2>{media.kinds.to_html(index=False)}"
        f"<h2>Inference on Daft</h2>{predictions.to_html(index=False)}"
        f"<h3>Image facts (first five images)</h3>{media.images.to_html(index=False)}"
        f"<h3>Search: {html.escape(QUERY)}</h3>{media.hits.to_html(index=False)}"
        f"<h2>Inference runs</h2>{inferences.to_html(index=False)}</body></html>",
        encoding="utf-8",
    )
    return REPORT.resolve()


if __name__ == "__main__":
    path = run()
    print(f"[demo] report written to {path}")
    sys.exit(0)
