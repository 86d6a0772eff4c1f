"""The output types of a model that declared none: from its function's return annotation (a
``TypedDict`` of columns), or from the values of its first batch, as Ray's ``map_batches`` does."""

from __future__ import annotations

import datetime
import decimal
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from workbench.core.base.errors import ModelOutputsError

if TYPE_CHECKING:
    import pyarrow as pa

FIX = "pass the types with dc.model(..., outputs={'name': pa.float64(), ...})"
# Python types an annotation may name for a column's values, and their Arrow types
_SCALARS: dict[type, str] = {
    bool: "bool_",
    int: "int64",
    float: "float64",
    str: "string",
    bytes: "binary",
    datetime.date: "date32",
}
_SEQUENCES = (list, tuple, Sequence)  # origins of list[T], tuple[T, ...], Sequence[T]


def annotated_outputs(fn: Callable[..., Any] | type) -> pa.Schema | None:
    """The schema a ``TypedDict`` return annotation of ``fn`` (or of a class's ``__call__``)
    declares, one field per output: ``list[T]`` (the batch's values) or ``T`` names a column of
    ``T``. None when the annotation declares no columns."""
    import pyarrow as pa

    target = fn.__call__ if isinstance(fn, type) else fn
    try:
        returned = typing.get_type_hints(target).get("return")
    except Exception:  # names the annotation uses are not importable here: no declared types
        return None
    if returned is None or not typing.is_typeddict(returned):
        return None
    columns = typing.get_type_hints(returned)
    fields = []
    for name, hint in columns.items():
        origin = typing.get_origin(hint)
        column = (
            typing.get_args(hint)[0] if origin in _SEQUENCES and typing.get_args(hint) else hint
        )
        fields.append(pa.field(name, _arrow_type(column, f"{returned.__name__}.{name}")))
    return pa.schema(fields)


def _arrow_type(hint: Any, where: str) -> pa.DataType:
    """The Arrow type of one value of type ``hint`` (``T | None`` is ``T``; ``list[T]`` a list)."""
    import pyarrow as pa

    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        present = [a for a in args if a is not type(None)]
        if len(present) == 1:
            return _arrow_type(present[0], where)
    elif origin in _SEQUENCES and args:
        return pa.list_(_arrow_type(args[0], where))
    elif hint is datetime.datetime:
        return pa.timestamp("us")
    elif hint is decimal.Decimal:
        return pa.decimal128(38, 18)
    elif hint in _SCALARS:
        return getattr(pa, _SCALARS[hint])()
    raise ModelOutputsError(
        f"The return annotation gives {where} the type {hint!r}, which has no column type; use "
        f"int, float, str, bytes, bool, date, datetime or list[...] of them, or {FIX}."
    )


def outputs_of_values(model_name: str, outputs: Any) -> pa.Schema:
    """The schema of one batch's outputs (a mapping of output name to values), typed from the
    values as Arrow infers them; a column with no typed value cannot be typed."""
    import pyarrow as pa

    if not isinstance(outputs, Mapping) or not outputs:
        raise ModelOutputsError(
            f"Model {model_name!r} returned {type(outputs).__name__} for its first batch, not a "
            "mapping of output name to values (e.g. {'score': [0.1, 0.7]}); return one, or "
            f"{FIX}."
        )
    fields = []
    for name, values in outputs.items():
        if not isinstance(name, str) or not name:
            raise ModelOutputsError(
                f"Model {model_name!r} names an output {name!r}; output names are non-empty "
                "strings (they become the table's columns)."
            )
        try:
            if isinstance(values, (pa.Array, pa.ChunkedArray)):
                kind = values.type
            else:
                if getattr(values, "ndim", 1) > 1:  # a 2-D NumPy array: one vector per row
                    values = list(values)
                kind = pa.array(values).type
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError) as e:
            raise ModelOutputsError(
                f"The values model {model_name!r} gave for output {name!r} have no one type "
                f"({e}); return values of one type, or {FIX}."
            ) from None
        if _untyped(kind):
            raise ModelOutputsError(
                f"Model {model_name!r} gave only nulls (or empty lists) for output {name!r} in "
                f"its first batch, so its type cannot be told; {FIX}."
            )
        fields.append(pa.field(name, kind))
    return pa.schema(fields)


def _untyped(kind: pa.DataType) -> bool:
    """True for a type Arrow infers from nulls alone (``null``, or a list of them)."""
    import pyarrow as pa

    if pa.types.is_null(kind):
        return True
    nested = pa.types.is_list(kind) or pa.types.is_large_list(kind)
    return nested and _untyped(kind.value_type)
