"""A pyarrow compute expression (``pc.field("id") == 5``) as a filter tree.

pyarrow does not show an expression's parts, but it serialises one (as it does to pickle it)
as an Arrow IPC file: each literal a column of one row, and the tree written out in prefix order
as the schema's key-value metadata (``call``/``end`` around a function's arguments,
``field_ref``, ``literal``, ``options``). The metadata's pairs repeat keys, which pyarrow's
``Schema.metadata`` dict would merge, so they are read in order through the Arrow C data
interface, whose layout is fixed by the Arrow specification.
"""

from __future__ import annotations

import ctypes
from typing import Any

from workbench.core.base.errors import InvalidFilterError
from workbench.core.filters.expression import (
    And,
    Cast,
    Column,
    Compare,
    Expr,
    In,
    IsNaN,
    IsNull,
    Like,
    Literal,
    Not,
    Or,
)

_COMPARISONS = {
    "equal": "==",
    "not_equal": "!=",
    "less": "<",
    "less_equal": "<=",
    "greater": ">",
    "greater_equal": ">=",
}
_LOGIC = {"and": And, "and_kleene": And, "or": Or, "or_kleene": Or}


def is_arrow_expression(value: Any) -> bool:
    """True for a pyarrow compute expression."""
    import pyarrow.compute as pc

    return isinstance(value, pc.Expression)


def from_arrow(expression: Any) -> Expr:
    """The filter tree of a pyarrow expression; raises ``InvalidFilterError`` for a function
    filters do not model (SQL text takes any)."""
    import pyarrow as pa

    _, (buffer,) = expression.__reduce__()
    literals = pa.ipc.open_file(buffer).read_all()
    tokens = _metadata_pairs(literals.schema)
    tree, end = _read(tokens, 0, literals, str(expression))
    if end != len(tokens):
        raise _unsupported(str(expression), "its serialised form")
    return tree


def _read(tokens: list[tuple[str, str]], i: int, literals: Any, shown: str) -> tuple[Any, int]:
    """The node starting at ``tokens[i]``, and the index after it."""
    key, value = tokens[i]
    if key == "field_ref":
        return Column((value,)), i + 1
    if key == "nested_field_ref":
        count = int(value)
        path = tuple(v for _, v in tokens[i + 1 : i + 1 + count])
        return Column(path), i + 1 + count
    if key == "literal":
        scalar = literals.column(int(value))[0]
        return Literal(scalar.as_py(), scalar.type), i + 1
    if key != "call":
        raise _unsupported(shown, key)
    name, i = value, i + 1
    arguments: list[Any] = []
    options = None
    while tokens[i] != ("end", name):
        if tokens[i][0] == "options":
            options = literals.column(int(tokens[i][1]))[0]
            i += 1
            continue
        node, i = _read(tokens, i, literals, shown)
        arguments.append(node)
    return _call(name, arguments, options, shown), i + 1


def _call(name: str, args: list[Any], options: Any, shown: str) -> Expr:
    if name in _COMPARISONS and len(args) == 2:
        left, right = args
        if isinstance(left, Literal) and not isinstance(right, Literal):
            from workbench.core.filters.expression import FLIPPED

            return Compare(FLIPPED[_COMPARISONS[name]], right, left)
        return Compare(_COMPARISONS[name], left, right)
    if name in _LOGIC:
        return _LOGIC[name](tuple(args))
    if name == "invert" and len(args) == 1:
        return Not(args[0])
    if name in ("is_null", "is_valid") and len(args) == 1:
        missing = IsNull(args[0], name == "is_valid")
        if name == "is_null" and options is not None and options["nan_is_null"].as_py():
            return Or((missing, IsNaN(args[0])))
        return missing
    if name == "is_nan" and len(args) == 1:
        return IsNaN(args[0])
    if name == "is_in" and len(args) == 1 and options is not None:
        return _is_in(args[0], options)
    if name == "cast" and len(args) == 1 and options is not None:
        return Cast(args[0], options.type.field("to_type").type)
    if name in ("starts_with", "match_like") and len(args) == 1 and options is not None:
        pattern = options["pattern"].as_py()
        folded = options["ignore_case"].as_py()
        if name == "starts_with":
            if any(c in pattern for c in "%_\\"):
                raise _unsupported(shown, f"starts_with({pattern!r})")
            return Like(args[0], pattern + "%", case_insensitive=folded)
        return Like(args[0], pattern, case_insensitive=folded)
    raise _unsupported(shown, name)


def _is_in(operand: Expr, options: Any) -> Expr:
    """``is_in``: SQL's IN over the set's values; a null in the set matches nulls when the
    options say so (pyarrow's default), as ``OR IS NULL``."""
    values = options["value_set"].values
    present = tuple(Literal(v.as_py(), values.type) for v in values if v.is_valid)
    matching = options["null_matching_behavior"].as_py() == 0  # MATCH
    found = In(operand, present)
    if matching and values.null_count:
        return Or((found, IsNull(operand)))
    return found


def _unsupported(shown: str, part: str) -> InvalidFilterError:
    return InvalidFilterError(
        f"The filter {shown} uses {part}, which filters do not take from a pyarrow "
        "expression (comparisons, isin, is_null, is_valid, is_nan, casts, starts_with, "
        "match_like, &, |, ~ do); write it as SQL text instead, e.g. "
        "filter=\"lower(name) = 'x'\"."
    )


class _ArrowSchema(ctypes.Structure):
    """``struct ArrowSchema`` of the Arrow C data interface."""

    _fields_ = [
        ("format", ctypes.c_char_p),
        ("name", ctypes.c_char_p),
        ("metadata", ctypes.c_void_p),
        ("flags", ctypes.c_int64),
        ("n_children", ctypes.c_int64),
        ("children", ctypes.c_void_p),
        ("dictionary", ctypes.c_void_p),
        ("release", ctypes.c_void_p),
        ("private_data", ctypes.c_void_p),
    ]


def _metadata_pairs(schema: Any) -> list[tuple[str, str]]:
    """A schema's key-value metadata in order, repeated keys kept: the C interface's
    metadata is an int32 count, then each key and value as an int32 length and bytes."""
    capsule = schema.__arrow_c_schema__()
    pointer = ctypes.pythonapi.PyCapsule_GetPointer
    pointer.restype = ctypes.c_void_p
    pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    exported = _ArrowSchema.from_address(pointer(capsule, b"arrow_schema"))
    address = exported.metadata
    if not address:
        return []

    def int32(offset: int) -> int:
        return int.from_bytes(ctypes.string_at(address + offset, 4), "little", signed=True)

    pairs, offset = [], 4
    for _ in range(int32(0)):
        text = []
        for _ in range(2):
            size = int32(offset)
            text.append(ctypes.string_at(address + offset + 4, size).decode())
            offset += 4 + size
        pairs.append((text[0], text[1]))
    return pairs
