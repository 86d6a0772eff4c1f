"""What runs where the model runs (a Daft UDF, a Ray actor, a Spark Python worker or this
process): a model loaded once per process, and batches of the work table turned into outputs."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from workbench.core.base.errors import MediaNotFoundError, ModelFailedError
from workbench.core.data.predict_plan import (
    HASH_COLUMN,
    input_column,
    result_schema,
    uri_column,
)
from workbench.core.storage.fetch import MISSING_FILE

if TYPE_CHECKING:
    import pyarrow as pa

    from workbench.core.data.predict_plan import PredictPlan
    from workbench.core.inference.model import FunctionModel, Model

# errors that already say what went wrong where (a failed row, a file gone): raised as they are
_NAMED = (ModelFailedError, MediaNotFoundError)
_loaded: dict[tuple[str, str], Model] = {}  # (name, version) -> loaded model, per process


def loaded(model: Model) -> Model:
    """The model loaded in this process: ``load()`` runs once per process and model version
    (Spark reuses its Python workers across tasks, so a task finds its model here)."""
    key = (model.name, model.version)
    if key not in _loaded:
        load(model)
        _loaded.clear()  # one model per worker process: a new version replaces the old
        _loaded[key] = model
    return _loaded[key]


def load(model: Model) -> None:
    """``model.load()``, its failure a ``ModelFailedError`` saying the model did not load."""
    try:
        model.load()
    except _NAMED:
        raise
    except Exception as e:
        raise ModelFailedError(
            f"Model {model.name!r} (version {model.version}) failed to load: "
            f"{type(e).__name__}: {e}. Nothing was committed; fix the model (its load(), or "
            "the class dc.model builds) and run again."
        ) from e


def forget_loaded() -> None:
    """Drop the models loaded in this process (tests, and a driver freeing memory)."""
    _loaded.clear()


def predict_table(model: Model, work: pa.Table, plan: PredictPlan) -> pa.Table:
    """The outputs of a loaded model for a work table, with merge keys and provenance columns;
    a model raising (or an input it cannot be given, such as a file that is not UTF-8 text)
    becomes ``ModelFailedError`` naming the first row it fails on."""
    try:
        outputs = model.predict(_inputs(work, plan))
    except _NAMED:
        raise
    except Exception as e:
        raise _failure(model, work, plan, e) from e
    return _result_table(model, work, plan, outputs)


def typed_by_first_batch(
    model: FunctionModel, work: pa.Table, plan: PredictPlan
) -> tuple[FunctionModel, pa.Table]:
    """The model with its output types read off its outputs for the first batch of ``work``
    (run here), and its predictions for that batch, so no batch is predicted twice."""
    from workbench.core.inference.outputs import outputs_of_values

    first = work.slice(0, plan.batch_size)
    load(model)
    try:
        outputs = model.predict(_inputs(first, plan))
    except _NAMED:
        raise
    except Exception as e:
        raise _failure(model, first, plan, e) from e
    typed = model.with_outputs(outputs_of_values(model.name, outputs))
    return typed, _result_table(typed, first, plan, outputs)


def _result_table(model: Model, work: pa.Table, plan: PredictPlan, outputs: Any) -> pa.Table:
    """A batch's outputs as the result table: merge keys, outputs in their types, provenance."""
    import pyarrow as pa

    try:
        columns = _output_columns(model, outputs, work.num_rows)
    except Exception as e:
        raise _failure(model, work, plan, e) from e
    schema = result_schema(model, plan)
    versions = pa.array([model.version] * work.num_rows, pa.string())
    arrays = [work.column(k) for k in plan.keys] + columns + [versions, work.column(HASH_COLUMN)]
    return pa.Table.from_arrays([_combined(a) for a in arrays], schema=schema)


def _inputs(work: pa.Table, plan: PredictPlan) -> dict[str, list[Any]]:
    """The model's batch: each input's values, fetched and decoded as its kind asks."""
    batch = {}
    for name, kind in plan.inputs.items():
        values = work.column(input_column(name)).to_pylist()
        if name in plan.fetch:
            values = _fetched(values, plan.storage)
        elif name in plan.prefetched:
            uris = work.column(uri_column(name)).to_pylist()
            values = _refetched(values, uris, plan.storage)
        if kind == "text":
            values = [_text(name, v) for v in values]
        batch[name] = values
    return batch


def _text(name: str, value: Any) -> Any:
    """A text input's value: bytes (a fetched file) decoded as UTF-8, others as they are."""
    if not isinstance(value, bytes):
        return value
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(
            f"input {name!r} is not UTF-8 text (byte {value[e.start]:#04x} at {e.start}); save "
            "the file as UTF-8"
        ) from None


def _fetched(uris: list[str | None], storage: Any) -> list[bytes | None]:
    """The bytes behind each URI (None for a null URI), with the catalog's credentials."""
    from workbench.core.storage.fetch import options_for, read_many

    present = [u for u in uris if u is not None]
    options = options_for(present[0], storage) if present else {}
    found = iter(read_many(present, options or None))
    return [next(found) if u is not None else None for u in uris]


def _refetched(values: list[Any], uris: list[str | None], storage: Any) -> list[Any]:
    """``values`` an engine fetched from ``uris``, with the bytes of each URI whose fetch
    failed (a null value) read here: ``MediaNotFoundError`` when the file is gone."""
    failed = [i for i, (v, u) in enumerate(zip(values, uris, strict=True)) if v is None and u]
    if not failed:
        return values
    again = dict(zip(failed, _fetched([uris[i] for i in failed], storage), strict=True))
    return [again.get(i, v) for i, v in enumerate(values)]


def _output_columns(model: Model, outputs: Mapping[str, Any], rows: int) -> list[pa.Array]:
    """Each output of the model's schema as an Arrow array of ``rows`` values."""
    import pyarrow as pa

    if not isinstance(outputs, Mapping):
        raise TypeError(f"predict returned {type(outputs).__name__}, not a mapping of outputs")
    columns = []
    for f in model.output_schema():
        if f.name not in outputs:
            raise KeyError(f"predict returned no output {f.name!r} (it gave {sorted(outputs)})")
        values = outputs[f.name]
        if isinstance(values, (pa.Array, pa.ChunkedArray)):
            array = values.cast(f.type)
        else:
            if getattr(values, "ndim", 1) > 1:  # a 2-D NumPy array: one vector per row
                values = list(values)
            array = pa.array(values, type=f.type)
        if len(array) != rows:
            raise ValueError(f"output {f.name!r} has {len(array)} values for {rows} rows")
        columns.append(array)
    return columns


def _combined(array: pa.Array | pa.ChunkedArray) -> pa.Array:
    return array.combine_chunks() if hasattr(array, "combine_chunks") else array


def _failure(model: Model, work: pa.Table, plan: PredictPlan, error: Exception) -> ModelFailedError:
    """The error for a failed batch, naming the first row the model fails on by itself (its
    inputs made again for that row alone)."""
    keys = work.select(list(plan.keys)).to_pylist()
    culprit, cause = keys[0] if keys else {}, error
    if work.num_rows > 1:
        for i, key in enumerate(keys):
            try:
                outputs = model.predict(_inputs(work.slice(i, 1), plan))
                if model.outputs_known:  # a first batch's types are learnt from it
                    _output_columns(model, outputs, 1)
            except _NAMED:
                raise
            except Exception as e:
                culprit, cause = key, e
                break
    return ModelFailedError(
        f"Model {model.name!r} (version {model.version}) failed on the row with key "
        f"{json.dumps(culprit, default=str)}: {type(cause).__name__}: {cause}. Nothing was "
        "committed; fix the model, or leave the row out with where=..."
    )


class BatchPredictor:
    """A model loaded once, when this is made on its worker (a Daft UDF instance), then
    called on batches of the work table."""

    def __init__(self, model: Model, plan: PredictPlan):
        load(model)
        self.model, self.plan = model, plan

    def __call__(self, work: pa.Table) -> pa.Table:
        return predict_table(self.model, work, self.plan)


def in_batches(model: Model, work: pa.Table, plan: PredictPlan) -> Iterator[pa.Table]:
    """Predictions of a loaded model for a work table, on slices of ``plan.batch_size`` rows."""
    for start in range(0, work.num_rows, plan.batch_size):
        yield predict_table(model, work.slice(start, plan.batch_size), plan)


def worker_error(error: BaseException) -> ModelFailedError | MediaNotFoundError | None:
    """The ``ModelFailedError`` or ``MediaNotFoundError`` an engine wrapped in its own error
    (Ray and Daft keep it as a cause, Spark only as text), without the engine's traceback;
    None for other errors."""
    seen: BaseException | None = error
    while seen is not None:
        for kind, pattern in _MESSAGES:
            found = pattern.search(str(seen))
            if found:
                return kind(found.group(0))
        if isinstance(seen, _NAMED):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


_FAILURE = re.compile(
    r"Model '.*?' \(version .*?\) failed (on the row with key .*?where=\.\.\.|to load: .*?"
    r"and run again\.)",
    re.S,
)
_MESSAGES = ((ModelFailedError, _FAILURE), (MediaNotFoundError, MISSING_FILE))
