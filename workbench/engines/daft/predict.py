"""Model inference on Daft: a class UDF whose instances each load the model once, fed batches of
the work table; media URIs are downloaded by Daft before the UDF (a file Daft could not fetch
is read again in the UDF, which raises ``MediaNotFoundError`` for it as every engine does)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from workbench.core.data.predict_plan import input_column, result_schema, uri_column
from workbench.core.inference.worker import BatchPredictor
from workbench.engines.daft.write import io_config

if TYPE_CHECKING:
    import daft
    import pyarrow as pa

    from workbench.core.data.predict_plan import PredictPlan
    from workbench.core.inference.model import Model

OUTPUT = "__wb_predicted"
PROGRESS_VARIABLE = "DAFT_PROGRESS_BAR"  # read by Daft's native executor when a query runs


def predict_frame(frame: daft.DataFrame, model: Model, plan: PredictPlan) -> Iterator[pa.Table]:
    """The model's predictions over a lazy work frame, streamed as Arrow tables."""
    import daft
    import pyarrow as pa
    from daft import col
    from daft.functions import download

    config = io_config(plan.storage) if plan.storage is not None else None
    for name in plan.fetch:  # a failed download is null, read again (and named) in the UDF
        uris = col(input_column(name))
        frame = frame.with_column(uri_column(name), uris).with_column(
            input_column(name), download(uris, on_error="null", io_config=config)
        )
    schema = result_schema(model, plan)
    struct = daft.DataType.from_arrow_type(pa.struct(list(schema)))
    fetched = plan.fetched_by_engine()
    predictor = _predictor(struct, plan.batch_size, plan.concurrency)(model, fetched)
    predicted = frame.select(predictor(*[col(n) for n in fetched.work_columns()]))
    with _without_daft_bar():
        for part in predicted.to_arrow_iter():
            yield pa.Table.from_batches([part]).select(schema.names)


@contextmanager
def _without_daft_bar() -> Iterator[None]:
    """Turn Daft's own progress bar off while it predicts: dc.infer draws one bar with rows done,
    total and rate (or none with ``progress=False``), and Daft's adds an elapsed-time bar to
    every call. A value the user set for the variable is left alone."""
    if PROGRESS_VARIABLE in os.environ:
        yield
        return
    os.environ[PROGRESS_VARIABLE] = "0"
    try:
        yield
    finally:
        os.environ.pop(PROGRESS_VARIABLE, None)


def _predictor(struct: daft.DataType, batch_size: int, concurrency: int | None) -> Any:
    """A Daft class whose instances (one per worker, at most ``concurrency``) hold a loaded
    model and turn batches of work columns into a struct of the result's columns."""
    import daft

    @daft.cls(max_concurrency=concurrency, use_process=False, name_override="workbench_infer")
    class Predictor:
        def __init__(self, model: Model, plan: PredictPlan):
            self.predict = BatchPredictor(model, plan)
            self.names = plan.work_columns()

        @daft.method.batch(return_dtype=struct, unnest=True, batch_size=batch_size)
        def __call__(self, *columns: daft.Series) -> pa.StructArray:
            import pyarrow as pa

            work = pa.table([c.to_arrow() for c in columns], names=self.names)
            done = self.predict(work)
            columns = [c.combine_chunks() for c in done.columns]
            return pa.StructArray.from_arrays(columns, fields=list(done.schema))

    return Predictor
