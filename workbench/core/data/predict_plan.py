"""What an engine needs to run a model over rows: the model as engines see it, the work
table's layout and how to batch (the engine protocol's side of ``dc.infer``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import pyarrow as pa

    from workbench.core.storage.store import Storage

INPUT_PREFIX = "__wb_in_"  # work-table column holding a model input's values
URI_PREFIX = "__wb_uri_"  # work-table column keeping the URIs of an input the engine fetched
HASH_COLUMN = "__wb_input_hash"  # work-table column holding each row's input hash
DEFAULT_BATCH_SIZE = 256


class Model(Protocol):
    """A batch model as engines run it (``inference.model.Model`` is one): loaded once per
    worker, then given batches of input values by name."""

    name: str
    version: str
    inputs: Mapping[str, str]

    def output_schema(self) -> pa.Schema: ...

    def load(self) -> None: ...

    def predict(self, batch: Mapping[str, list[Any]]) -> Mapping[str, Any]: ...


def input_column(name: str) -> str:
    """The work-table column that carries model input ``name``."""
    return f"{INPUT_PREFIX}{name}"


def uri_column(name: str) -> str:
    """The work-table column that keeps the URIs of model input ``name`` once an engine has
    fetched their bytes into ``input_column(name)``."""
    return f"{URI_PREFIX}{name}"


def _sanitised(name: str) -> str:
    return re.sub(r"[^0-9A-Za-z_]", "_", name)


def model_column(model: Model) -> str:
    """The provenance column holding the version of the model that made a row's outputs."""
    return f"_model_{_sanitised(model.name)}"


def hash_column(model: Model) -> str:
    """The provenance column holding the hash of the inputs a row's outputs were made from."""
    return f"_input_{_sanitised(model.name)}"


@dataclass(frozen=True)
class PredictPlan:
    """How to run a model over a work table (its merge keys, one column per model input named by
    ``input_column``, and ``HASH_COLUMN``): batches, parallelism, and which inputs hold URIs
    whose bytes must be fetched first."""

    keys: tuple[str, ...]
    inputs: dict[str, str]  # model input -> kind
    batch_size: int = DEFAULT_BATCH_SIZE
    concurrency: int | None = None
    fetch: tuple[str, ...] = ()  # inputs whose values are URIs to read
    storage: Storage | None = None  # reads the fetched URIs (the catalog's storage)
    key_types: dict[str, pa.DataType] = field(default_factory=dict)
    # inputs whose bytes the engine fetched, with their URIs in ``uri_column``: a row whose
    # fetch failed (null bytes) is read again where the model runs, so a missing file raises
    # MediaNotFoundError on every engine
    prefetched: tuple[str, ...] = ()

    def fetched_by_engine(self) -> PredictPlan:
        """This plan for a work table whose URIs the engine has fetched (see ``prefetched``)."""
        from dataclasses import replace

        return replace(self, fetch=(), prefetched=self.fetch)

    def work_columns(self) -> list[str]:
        """The work table's columns: keys, inputs, input hash, URIs of prefetched inputs."""
        inputs = [input_column(i) for i in self.inputs]
        return [*self.keys, *inputs, HASH_COLUMN, *[uri_column(i) for i in self.prefetched]]


def result_schema(model: Model, plan: PredictPlan) -> pa.Schema:
    """The columns a prediction returns: merge keys, the model's outputs, and provenance."""
    import pyarrow as pa

    keys = [pa.field(k, plan.key_types[k]) for k in plan.keys]
    return pa.schema([*keys, *model.output_schema(), *provenance_fields(model)])


def provenance_fields(model: Model) -> list[pa.Field]:
    """The columns written beside a model's outputs: its version and the input hash."""
    import pyarrow as pa

    return [pa.field(model_column(model), pa.string()), pa.field(hash_column(model), pa.string())]
