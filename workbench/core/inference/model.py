"""The contract ``dc.infer`` runs: a model with a name, a version, typed inputs and outputs,
loaded once per worker and called on batches of rows.

A model object is built in the driver and shipped (pickled) to each worker before ``load()``
runs there, so heavy state (an ONNX session, a tokenizer) is made in ``load()``, never in
``__init__``. ``dc.model`` wraps a plain function or class in this contract.
"""

from __future__ import annotations

import copy
import hashlib
import inspect
import json
import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from workbench.core.base.errors import InvalidArgumentError, ModelOutputsError

if TYPE_CHECKING:
    import pyarrow as pa

# What a model input takes. "text": str values (a media table's uri column is fetched and
# decoded as UTF-8); "bytes": binary values (a uri column is fetched); "value": the column's
# values as they are.
INPUT_KINDS = ("text", "bytes", "value")
UNNAMED_INPUT = "value"  # the batch key of a model that names no inputs, bound to one column


class Model(ABC):
    """A batch model. Subclasses set ``name``, ``version``, ``inputs``, ``parameters`` and
    implement ``output_schema``, ``load`` and ``predict``."""

    name: str
    version: str  # changes whenever weights or parameters change (e.g. a hash of both)
    inputs: Mapping[str, str]  # input name -> kind, one of INPUT_KINDS
    parameters: Mapping[str, Any] = {}
    description: str = ""

    @abstractmethod
    def output_schema(self) -> pa.Schema:
        """The Arrow schema of what ``predict`` returns: one field per output column."""

    @property
    def outputs_known(self) -> bool:
        """True when ``output_schema`` can be given before the model runs (see ``dc.model``)."""
        return True

    @abstractmethod
    def load(self) -> None:
        """Make the heavy state (sessions, tokenizers); called once per worker."""

    @abstractmethod
    def predict(self, batch: Mapping[str, list[Any]]) -> Mapping[str, Any]:
        """Outputs for a batch: ``batch`` maps each input name to a list of values (one per
        row); the result maps each output name to a sequence (list, NumPy or Arrow array) of
        the same length, in the same row order."""

    def __repr__(self) -> str:
        return f"<model {self.name} version {self.version}>"


def version_of(*parts: Any) -> str:
    """A short, stable version string: the SHA-256 of the parts (bytes, or JSON-able values)."""
    digest = hashlib.sha256()
    for part in parts:
        data = part if isinstance(part, bytes) else json.dumps(part, sort_keys=True, default=str)
        digest.update(data if isinstance(data, bytes) else data.encode())
    return digest.hexdigest()[:16]


def file_version(path: str, *parameters: Any) -> str:
    """The version of a model whose weights are in ``path``: a hash of the file and parameters."""
    digest = hashlib.sha256()
    with open(path, "rb") as weights:
        for block in iter(lambda: weights.read(1 << 20), b""):
            digest.update(block)
    return version_of(digest.digest(), *parameters)


class FunctionModel(Model):
    """A user's function (``fn(batch) -> outputs``) or class (built in ``load()``, called like
    the function) as a model. Its outputs may be unknown until ``dc.infer`` types them from the
    first batch (``with_outputs``)."""

    def __init__(
        self,
        fn: Callable[..., Any] | type,
        name: str,
        version: str | None,
        inputs: Mapping[str, str] | None,
        outputs: pa.Schema | None,
        parameters: Mapping[str, Any],
    ):
        self.fn = fn
        self.name = name
        self.pinned = version is not None  # else the version follows the function's behaviour
        # None: the model names no inputs; dc.infer names them after the columns it binds
        self.inputs_named = inputs is not None
        self.inputs = dict(inputs) if inputs is not None else {UNNAMED_INPUT: "value"}
        self.parameters = dict(parameters)
        self._outputs = outputs
        self._call: Callable[[Mapping[str, list[Any]]], Mapping[str, Any]] | None = None
        self.version = version if version is not None else self._behaviour_version()

    def _behaviour_version(self) -> str:
        """The default version: a hash of the function's behaviour (its code, closure, the
        globals it reads; see ``inference.fingerprint``), parameters and declared outputs."""
        from workbench.core.inference.fingerprint import fingerprint

        found = fingerprint(self.fn, self.parameters)
        if found.unstable:
            warnings.warn(
                f"Model {self.name!r} reads {', '.join(found.unstable)}, whose state cannot be "
                "hashed, so its version changes on every dc.infer call and every row is "
                "predicted again; pass dc.model(..., version='...') to pin one.",
                stacklevel=4,
            )
        outputs = None if self._outputs is None else str(self._outputs)
        return version_of(found.digest, outputs)

    def current(self) -> FunctionModel:
        """This model with its default version taken again now, so a closure value or global
        changed since ``dc.model`` made it gives a new version (a pinned version stays)."""
        if self.pinned:
            return self
        version = self._behaviour_version()
        if version == self.version:
            return self
        now = copy.copy(self)
        now.version = version
        now._call = None  # a loaded state of the old behaviour is not reused
        return now

    @property
    def outputs_known(self) -> bool:
        """False until the outputs' types are known (given, annotated, or learnt)."""
        return self._outputs is not None

    def with_outputs(self, outputs: pa.Schema) -> FunctionModel:
        """This model with the output types learnt from its first batch (same version)."""
        learnt = copy.copy(self)
        learnt._outputs = outputs
        return learnt

    def with_inputs(self, names: Sequence[str]) -> FunctionModel:
        """This model (which named no inputs) reading the batch keys ``names``, of kind
        "value" (same version)."""
        bound = copy.copy(self)
        bound.inputs = dict.fromkeys(names, "value")
        return bound

    def output_schema(self) -> pa.Schema:
        if self._outputs is None:
            raise ModelOutputsError(
                f"The outputs of model {self.name!r} are typed from its first batch when "
                "dc.infer runs it; to know them before, pass dc.model(..., outputs={...})."
            )
        return self._outputs

    def load(self) -> None:
        if self._call is not None:  # loaded in this process already (e.g. by the first batch)
            return
        if inspect.isclass(self.fn):
            self._call = self.fn(**self.parameters)
        else:
            parameters = self.parameters
            self._call = (lambda batch: self.fn(batch, **parameters)) if parameters else self.fn

    def predict(self, batch: Mapping[str, list[Any]]) -> Mapping[str, Any]:
        if self._call is None:
            self.load()
        if not self.inputs_named and len(batch) == 1 and UNNAMED_INPUT not in batch:
            (values,) = batch.values()  # one column: also under the unnamed input's key
            batch = {**batch, UNNAMED_INPUT: values}
        return self._call(batch)  # type: ignore[misc]

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_call": None}  # a loaded state stays in its worker


def model(
    fn: Callable[..., Any] | type,
    *,
    outputs: pa.Schema | Mapping[str, pa.DataType] | None = None,
    inputs: Sequence[str] | Mapping[str, str] | None = None,
    name: str | None = None,
    version: str | None = None,
    parameters: Mapping[str, Any] | None = None,
) -> FunctionModel:
    """A model from a function ``fn(batch, **parameters) -> {output: values}`` or a class
    whose instances (``cls(**parameters)``, made once per worker) are called the same way.

    ``inputs`` names the batch's keys (kind "value", or a mapping name -> kind); without it
    the batch holds the columns ``dc.infer(..., inputs=...)`` binds under their own names
    (one column also as ``batch["value"]``), or the column ``value``. ``outputs`` is
    the Arrow schema of the result: when not given, it comes from ``fn``'s return annotation (a
    ``TypedDict`` of columns) or else from the values of the first batch ``dc.infer`` runs. The
    version defaults to a hash of ``fn``'s behaviour (its code, the values its closure holds
    and the globals it reads, taken again at each ``dc.infer``) and the parameters, so editing
    the function or a value it uses makes ``dc.infer`` recompute its rows (a value that cannot
    be hashed makes every call recompute, with a warning; ``version=`` pins one).
    """
    import pyarrow as pa

    from workbench.core.inference.outputs import annotated_outputs

    if not callable(fn):
        raise InvalidArgumentError(
            f"dc.model needs a function or a class, not {type(fn).__name__}; pass e.g. "
            "dc.model(lambda batch: {'n': [len(t) for t in batch['text']]}, ...)"
        )
    kinds = _input_kinds(inputs)
    unknown = {k: v for k, v in (kinds or {}).items() if v not in INPUT_KINDS}
    if unknown or kinds == {}:
        raise InvalidArgumentError(
            f"dc.model inputs {kinds!r}: give at least one input, each of kind "
            f"{', '.join(INPUT_KINDS)}"
        )
    if outputs is None:
        schema = annotated_outputs(fn)
    elif isinstance(outputs, (pa.Schema, Mapping)):
        schema = outputs if isinstance(outputs, pa.Schema) else _schema_of(outputs)
    else:
        raise InvalidArgumentError(
            f"dc.model outputs={outputs!r} must be a pyarrow schema or a dict of output name -> "
            "pyarrow type, e.g. outputs={'score': pa.float64()}."
        )
    if schema is not None and not len(schema):
        raise InvalidArgumentError("dc.model needs at least one output column")
    if schema is not None and (not all(schema.names) or len(set(schema.names)) < len(schema)):
        raise InvalidArgumentError(
            f"dc.model outputs {schema.names} must each have a name of their own (no empty or "
            "repeated names): they become the table's columns."
        )
    parameters = dict(parameters or {})
    label = name or getattr(fn, "__name__", "model")
    if version is not None and (not isinstance(version, str) or not version):
        raise InvalidArgumentError(f"dc.model version={version!r} must be a non-empty string.")
    return FunctionModel(fn, label, version, kinds, schema, parameters)


def _input_kinds(inputs: Sequence[str] | Mapping[str, str] | None) -> dict[str, str] | None:
    """``inputs=`` as input name -> kind (None: the model names none)."""
    if inputs is None:
        return None
    if isinstance(inputs, Mapping):
        return dict(inputs)
    if isinstance(inputs, str):
        return {inputs: "value"}
    if not isinstance(inputs, (list, tuple)) or not all(isinstance(n, str) and n for n in inputs):
        raise InvalidArgumentError(
            f"dc.model inputs={inputs!r} must list input names (strings), e.g. inputs=['text'], "
            "or map them to kinds, e.g. inputs={'text': 'text'}."
        )
    return dict.fromkeys(inputs, "value")


def _schema_of(outputs: Mapping[Any, Any]) -> pa.Schema:
    """``outputs={'name': pa type}`` as a schema, refusing what is not a name and a type."""
    import pyarrow as pa

    wrong = {
        k: v for k, v in outputs.items() if not isinstance(k, str) or not isinstance(v, pa.DataType)
    }
    if wrong:
        raise InvalidArgumentError(
            f"dc.model outputs maps names to pyarrow types, e.g. {{'score': pa.float64()}}; "
            f"these entries are not: {wrong!r}."
        )
    return pa.schema(list(outputs.items()))
