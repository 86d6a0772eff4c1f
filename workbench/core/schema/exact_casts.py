"""Data cast back into a column's narrower type where every value converts exactly, the rule
every engine's ``cast_exact`` applies (see ``data.exact_casts``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyarrow as pa


def exactly_cast(table: pa.Table, targets: Mapping[str, pa.DataType]) -> tuple[pa.Table, list[str]]:
    """``table`` with each column of ``targets`` cast to its type where every value converts
    exactly, and the names of the columns cast."""
    import pyarrow as pa

    cast = []
    for name, target in targets.items():
        try:  # a safe cast refuses fractions, NaN, values out of range and other widths
            column = table.column(name).cast(target)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            continue
        table = table.set_column(table.schema.get_field_index(name), name, column)
        cast.append(name)
    return table, cast
