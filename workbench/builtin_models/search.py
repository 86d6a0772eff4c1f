"""``dc.search``: a table's rows ranked by the cosine similarity of an embedding column to a
query embedded with the same model."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workbench.builtin_models.registry import builtin
from workbench.core.base.arguments import whole_number
from workbench.core.base.errors import InvalidArgumentError, SchemaValidationError
from workbench.core.base.types import DatasetType
from workbench.core.data.datasets import from_pyarrow, parse_dataset_type
from workbench.core.inference.model import Model
from workbench.core.io.reader import read

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa


def search(
    table: str,
    query: str,
    k: int = 5,
    namespace: str | None = None,
    column: str = "embedding",
    model: str | Model = "text-embedding",
    catalog: str | None = None,
    read_as: DatasetType | str = DatasetType.PANDAS,
    *,
    score_column: str = "similarity",
) -> Any:
    """The ``k`` rows of ``table`` whose ``column`` vectors are most similar (cosine) to
    ``query`` embedded by ``model``, best first, with their similarity in ``score_column``.

    ``column`` holds vectors the same model wrote (e.g. ``dc.infer(table, "text-embedding")``);
    rows whose vector is null are never returned. Example::

        dc.search("reviews", "the delivery came late", k=3)
    """
    import numpy as np
    import pyarrow as pa

    read_as = parse_dataset_type(read_as)
    k = whole_number("k", k, minimum=1)
    if not isinstance(query, str):
        raise InvalidArgumentError(f"query={query!r} must be text (a str) to embed.")
    rows = read(table, namespace, catalog, read_as=DatasetType.PYARROW)
    if score_column in rows.column_names:
        raise InvalidArgumentError(
            f"Table {table!r} already has a column {score_column!r}; pass score_column='...' "
            "to name the similarity column otherwise."
        )
    vectors = _vectors(rows, column, table)
    wanted = _query_vector(builtin(model) if isinstance(model, str) else model, query)
    if vectors.shape[1] != len(wanted):
        raise SchemaValidationError(
            f"Column {column!r} of {table!r} holds {vectors.shape[1]}-dimensional vectors but "
            f"model {getattr(model, 'name', model)!r} makes {len(wanted)}: search with the "
            "model that wrote the column."
        )
    scores = _cosine(vectors, wanted)
    valid = np.flatnonzero(~np.isnan(scores))
    best = valid[np.argsort(-scores[valid], kind="stable")[:k]]
    result = rows.take(pa.array(best)).append_column(
        score_column, pa.array(scores[best], type=pa.float32())
    )
    return from_pyarrow(result, read_as)


def _vectors(rows: pa.Table, column: str, table: str) -> np.ndarray:
    """The vectors of ``column`` as a (rows, dimensions) float32 matrix, NaN rows for nulls."""
    import numpy as np
    import pyarrow as pa

    if column not in rows.column_names:
        raise InvalidArgumentError(
            f"Table {table!r} has no column {column!r} (its columns are {rows.column_names}); "
            f"embed its text first, e.g. dc.infer({table!r}, 'text-embedding'), or pass column=."
        )
    values = rows.column(column).combine_chunks()
    kind = values.type
    if not (
        (
            pa.types.is_list(kind)
            or pa.types.is_large_list(kind)
            or pa.types.is_fixed_size_list(kind)
        )
        and pa.types.is_floating(kind.value_type)
    ):
        raise SchemaValidationError(
            f"Column {column!r} of {table!r} is {kind}, not embedding vectors (a list of floats, "
            "as the text-embedding model writes); pass the column that holds them as column=."
        )
    lengths = np.unique(values.value_lengths().drop_null().to_numpy())
    if len(lengths) > 1:
        raise SchemaValidationError(
            f"Column {column!r} of {table!r} holds vectors of {len(lengths)} different lengths; "
            "search needs the vectors of one model."
        )
    dimensions = int(lengths[0]) if len(lengths) else 0
    matrix = np.full((len(values), dimensions), np.nan, dtype=np.float32)
    present = values.is_valid().to_numpy(zero_copy_only=False)
    flat = values.drop_null().flatten().to_numpy(zero_copy_only=False)
    matrix[present] = flat.reshape(-1, dimensions) if dimensions else flat
    return matrix


def _query_vector(model: Model, query: str) -> np.ndarray:
    """``query`` embedded by ``model``: its one input gets the text, its list output is read."""
    import numpy as np
    import pyarrow as pa

    vectors = [f.name for f in model.output_schema() if pa.types.is_fixed_size_list(f.type)]
    vectors = vectors or [f.name for f in model.output_schema() if pa.types.is_list(f.type)]
    if len(model.inputs) != 1 or len(vectors) != 1:
        raise InvalidArgumentError(
            f"Model {model.name!r} cannot embed a search query: search needs a model with one "
            "text input and one vector output, such as 'text-embedding'."
        )
    (name,) = model.inputs
    (output,) = vectors
    first = model.predict({name: [query]})[output][0]
    return np.asarray(first.as_py() if hasattr(first, "as_py") else first, dtype=np.float32)


def _cosine(vectors: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Cosine similarity of each row of ``vectors`` to ``query`` (NaN for null rows)."""
    import numpy as np

    norms = np.linalg.norm(vectors, axis=1) * np.linalg.norm(query)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (vectors @ query) / norms
