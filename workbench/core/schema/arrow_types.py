"""Arrow type rules with no table in sight: when two types are the same, and the narrowest
type that holds every value of two others."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyarrow as pa


def same_type(a: pa.DataType, b: pa.DataType) -> bool:
    """Types equal up to nested field names and nullability (Delta renames list items)."""
    import pyarrow.types as pt

    if a == b:
        return True
    if pt.is_list(a) and pt.is_list(b):
        return same_type(a.value_type, b.value_type)
    if pt.is_struct(a) and pt.is_struct(b):
        return a.num_fields == b.num_fields and all(
            x.name == y.name and same_type(x.type, y.type)
            for x, y in zip(a.fields, b.fields, strict=True)
        )
    if pt.is_map(a) and pt.is_map(b):
        return same_type(a.key_type, b.key_type) and same_type(a.item_type, b.item_type)
    return False


_INT_RANK = {8: 0, 16: 1, 32: 2, 64: 3}


def widen(current: pa.DataType, incoming: pa.DataType) -> pa.DataType | None:
    """The narrowest type holding every value of both types without loss, or None."""
    import pyarrow as pa
    import pyarrow.types as pt

    if same_type(current, incoming) or pt.is_null(incoming):
        return current
    if pt.is_null(current):
        return incoming
    if pt.is_integer(current) and pt.is_integer(incoming):
        return _wider_integer(current, incoming)
    if pt.is_floating(current) and pt.is_floating(incoming):
        return current if current.bit_width >= incoming.bit_width else incoming
    for ints, floats in ((current, incoming), (incoming, current)):
        if pt.is_integer(ints) and pt.is_floating(floats):
            # float64 holds every int up to 32 bits exactly, float32 up to 16 bits.
            if ints.bit_width <= (32 if floats.bit_width == 64 else 16):
                return floats
            return None
    if pt.is_decimal(current) and pt.is_decimal(incoming):
        scale = max(current.scale, incoming.scale)
        digits = max(current.precision - current.scale, incoming.precision - incoming.scale)
        return pa.decimal128(digits + scale, scale) if digits + scale <= 38 else None
    if _is_bytes(current) and _is_bytes(incoming):
        return _wider_bytes(current, incoming)
    return None


def is_uuid(t: pa.DataType) -> bool:
    """True for Arrow's ``arrow.uuid`` extension type (16 fixed bytes)."""
    import pyarrow as pa

    return isinstance(t, pa.BaseExtensionType) and t.extension_name == "arrow.uuid"


def _is_bytes(t: pa.DataType) -> bool:
    """A binary type of any width, fixed or not, or a uuid."""
    import pyarrow.types as pt

    return is_uuid(t) or pt.is_binary(t) or pt.is_large_binary(t) or pt.is_fixed_size_binary(t)


def fixed_width(t: pa.DataType) -> int | None:
    """The size of every value of a fixed_size_binary(n) or uuid type (None for others)."""
    import pyarrow as pa

    t = t.storage_type if is_uuid(t) else t
    return t.byte_width if pa.types.is_fixed_size_binary(t) else None


def _wider_bytes(current: pa.DataType, incoming: pa.DataType) -> pa.DataType:
    """``current`` when both hold values of one fixed size (a uuid column takes 16-byte
    binary, and the other way round), else binary."""
    import pyarrow as pa

    width = fixed_width(current)
    return current if width is not None and width == fixed_width(incoming) else pa.binary()


_SIGNED = {8: "int8", 16: "int16", 32: "int32", 64: "int64"}


def _wider_integer(a: pa.DataType, b: pa.DataType) -> pa.DataType | None:
    """The narrowest integer type holding every value of integer types ``a`` and ``b``."""
    import pyarrow as pa
    import pyarrow.types as pt

    if pt.is_signed_integer(a) == pt.is_signed_integer(b):
        return a if a.bit_width >= b.bit_width else b
    unsigned, signed = (a, b) if pt.is_unsigned_integer(a) else (b, a)
    if signed.bit_width > unsigned.bit_width:
        return signed
    width = unsigned.bit_width * 2
    return getattr(pa, _SIGNED[width])() if width in _SIGNED else None
