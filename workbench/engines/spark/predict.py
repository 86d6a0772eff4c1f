"""Model inference on Spark: ``mapInArrow`` over the work frame; each Python worker loads the
model once and keeps it for later tasks (by model version, see ``inference.worker.loaded``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from workbench.core.inference.plan import result_schema
from workbench.core.inference.worker import in_batches, loaded
from workbench.engines.spark.files import spark_schema

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame

    from workbench.core.inference.model import Model
    from workbench.core.inference.plan import PredictPlan


def predict_frame(frame: DataFrame, model: Model, plan: PredictPlan) -> Iterator[pa.Table]:
    """The model's predictions over a work frame, collected as Arrow."""
    schema = result_schema(model, plan)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import pyarrow as pa

        ready = loaded(model)
        for batch in batches:
            for done in in_batches(ready, pa.Table.from_batches([batch]), plan):
                yield from done.to_batches()

    if plan.concurrency:
        frame = frame.repartition(plan.concurrency)
    yield frame.mapInArrow(run, spark_schema(schema)).toArrow().cast(schema)
