"""Model inference on Spark: ``mapInArrow`` over the work frame; each Python worker loads the
model once and keeps it for later tasks (by model version, see ``inference.worker.loaded``).
Each task writes its predictions as Parquet files, and only the files' descriptions come
back."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from workbench.core.delta.part_writer import written_parts
from workbench.core.inference.worker import in_batches, loaded
from workbench.engines.spark.remote import WRITTEN, written_file, written_record

PARTITIONS_PER_CORE = 4

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame

    from workbench.core.data.predict_plan import PredictPlan
    from workbench.core.delta.data_files import WrittenFile
    from workbench.core.inference.model import Model


def predict_files(
    frame: DataFrame, model: Model, plan: PredictPlan, schema: pa.Schema, folder: str
) -> Iterator[WrittenFile]:
    """The model's predictions over a work frame, written by the tasks into ``folder``; the
    files are reported as tasks finish."""
    storage = plan.storage

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        predicted = _predicted(model, plan, batches)
        for written in written_parts(predicted, schema, folder, storage):
            yield written_record(written)

    for row in _spread(frame, plan).mapInArrow(run, WRITTEN).toLocalIterator():
        yield written_file(row)


def _predicted(
    model: Model, plan: PredictPlan, batches: Iterator[pa.RecordBatch]
) -> Iterator[pa.Table]:
    """A task's predictions, batch by batch, by the model loaded in its worker."""
    import pyarrow as pa

    ready = loaded(model)
    for batch in batches:
        yield from in_batches(ready, pa.Table.from_batches([batch]), plan)


def _spread(frame: DataFrame, plan: PredictPlan) -> DataFrame:
    """The work frame in ``plan.concurrency`` partitions, else in a few per core, so every
    core predicts and no task holds much."""
    parts = (
        plan.concurrency or PARTITIONS_PER_CORE * frame.sparkSession.sparkContext.defaultParallelism
    )
    return frame.repartition(parts)
