"""Turning ``dc.infer``'s arguments into a model and input bindings, with errors that say how
to fix them."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from workbench.core.base.errors import InputColumnError, InvalidArgumentError, UnknownModelError
from workbench.core.base.wiring import wire
from workbench.core.inference.model import FunctionModel, Model
from workbench.core.media.columns import URI_PROPERTY

if TYPE_CHECKING:
    from workbench.core.catalog.locations import OpenTable

FETCHED_KINDS = ("bytes", "text")
_named_models: list[Callable[[str], Model]] = []


def use_named_models(lookup: Callable[[str], Model]) -> None:
    """Let ``dc.infer`` take a model by name through ``lookup`` (the built-in models register
    theirs, so core never imports them)."""
    if lookup not in _named_models:
        _named_models.append(lookup)


def resolve_model(model: Model | str) -> Model:
    """A model object (a ``dc.model`` with its default version taken again now), or the
    built-in model of that name."""
    if isinstance(model, FunctionModel):
        return model.current()
    if isinstance(model, Model):
        return model
    if not isinstance(model, str):
        raise InvalidArgumentError(
            f"model={model!r} must be a model (dc.model(fn, outputs=...)) or a built-in "
            "model's name."
        )
    wire()
    if not _named_models:
        raise UnknownModelError(
            f"No model is named {model!r}: no named models are registered (import workbench "
            "loads the built-in ones); pass a model made with dc.model(...)."
        )
    return _named_models[-1](model)


def named_inputs(model: Model, inputs: str | Sequence[str] | Mapping[str, str] | None) -> Model:
    """A ``dc.model`` that named no inputs, reading the columns ``inputs`` binds under their own
    names (a dict: under its keys); other models as they are."""
    if not isinstance(model, FunctionModel) or model.inputs_named or inputs is None:
        return model
    names = [inputs] if isinstance(inputs, str) else inputs
    if not isinstance(names, (Mapping, list, tuple)) or not all(isinstance(n, str) for n in names):
        return model  # bind_inputs says what is wrong with them
    return model.with_inputs(list(names))


def media_uri_column(table: OpenTable) -> str | None:
    """The uri column of a media table (None for other tables)."""
    return table.properties.get(URI_PROPERTY)


def bind_inputs(
    model: Model, inputs: str | Sequence[str] | Mapping[str, str] | None, table: OpenTable
) -> dict[str, str]:
    """Model input -> table column: ``inputs`` as given (a column name for a one-input model, a
    list of columns in the model's input order, or a dict), else the media table's uri column
    for a one-input media model, else same-named columns."""
    names = list(model.inputs)
    uri = media_uri_column(table)
    if inputs is None:
        one_uri = uri is not None and len(names) == 1
        bindings = {names[0]: uri} if one_uri else {n: n for n in names}
    elif isinstance(inputs, str):
        if len(names) != 1:
            raise InvalidArgumentError(
                f"Model {model.name!r} takes inputs {names}; map each to a column, e.g. "
                f"inputs={dict.fromkeys(names, '<column>')}."
            )
        bindings = {names[0]: inputs}
    elif isinstance(inputs, Mapping):
        unknown = sorted(set(inputs) - set(names))
        missing = sorted(set(names) - set(inputs))
        if unknown or missing:
            raise InvalidArgumentError(
                f"inputs={dict(inputs)!r} must map each input of model {model.name!r} "
                f"({names}) to a column; unknown {unknown}, missing {missing}."
            )
        bindings = dict(inputs)
    elif isinstance(inputs, (list, tuple)):
        bindings = _in_order(model, names, list(inputs))
    else:
        raise InvalidArgumentError(
            f"inputs={inputs!r} must be a column name, a list of column names (one per model "
            "input, in order) or a dict of model input -> column."
        )
    columns = table.schema.names
    absent = {i: c for i, c in bindings.items() if c not in columns}
    if absent:
        raise InputColumnError(
            f"Table {table.loc.qualified!r} has no column for model {model.name!r} input(s) "
            f"{absent}; its columns are {columns}. Name the columns with inputs={{'input': "
            "'column'}}."
        )
    return bindings


def _in_order(model: Model, names: list[str], columns: list[Any]) -> dict[str, str]:
    """A list of columns bound to the model's inputs in order."""
    if not all(isinstance(c, str) and c for c in columns):
        raise InvalidArgumentError(
            f"inputs={columns!r} must list column names (strings), one per input of model "
            f"{model.name!r} ({names})."
        )
    if len(columns) != len(names):
        raise InvalidArgumentError(
            f"Model {model.name!r} takes {len(names)} inputs {names}, in this order; inputs="
            f"{columns!r} names {len(columns)} column(s). List one column per input, or map "
            f"them: inputs={dict.fromkeys(names, '<column>')}."
        )
    return dict(zip(names, columns, strict=True))


def fetched_inputs(model: Model, bindings: Mapping[str, str], table: OpenTable) -> tuple[str, ...]:
    """Inputs whose values are a media table's URIs whose bytes the model wants."""
    uri = media_uri_column(table)
    return tuple(
        name
        for name, column in bindings.items()
        if uri is not None and column == uri and model.inputs[name] in FETCHED_KINDS
    )
