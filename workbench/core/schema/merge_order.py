"""Merge order: which of several rows with the same merge key a write keeps.

A field with a ``MergeOrder`` ranks rows sharing a key: under ``ASCENDING`` the smallest value
wins, under ``DESCENDING`` the largest. Without one, an event-time field ranks them as a
descending order (the latest event wins). Rows tied on every ranking field fall back to the
write's ``dedupe`` choice (the last row by default).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from workbench.core.base.arguments import choice
from workbench.core.base.errors import SchemaValidationError
from workbench.core.base.types import NullOrder, SortOrder

if TYPE_CHECKING:
    import pyarrow as pa


class MergeOrder(NamedTuple):
    """How a field ranks rows that share a merge key: sort direction and null placement."""

    sort_order: SortOrder = SortOrder.ASCENDING
    null_order: NullOrder = NullOrder.AT_END

    @classmethod
    def of(
        cls,
        sort_order: SortOrder | str = SortOrder.ASCENDING,
        null_order: NullOrder | str = NullOrder.AT_END,
    ) -> MergeOrder:
        """A merge order; ``sort_order`` ASCENDING keeps the smallest value of a key."""
        return cls(
            choice(SortOrder, sort_order, "sort_order", SchemaValidationError),
            choice(NullOrder, null_order, "null_order", SchemaValidationError),
        )

    def encode(self) -> str:
        """The order as field metadata text, e.g. ``ascending,at_end``."""
        return f"{self.sort_order.value},{self.null_order.value}"

    @classmethod
    def decode(cls, text: str) -> MergeOrder:
        """The order that ``encode`` wrote."""
        sort_order, _, null_order = text.partition(",")
        return cls.of(sort_order, null_order)


Ranking = list[tuple[str, MergeOrder]]


def refuse_ordered_duplicates(order: Ranking, engine: str, table: str) -> None:
    """Raise for an engine that cannot rank rows sharing a key by merge order."""
    from workbench.core.base.errors import UnsupportedFeatureError

    if order:
        raise UnsupportedFeatureError(
            f"Rows written to table {table!r} repeat a merge key, and the {engine} engine cannot "
            f"pick among them by merge order ({[name for name, _ in order]}); write the data as "
            "pandas or pyarrow, or remove the duplicates first."
        )


def winners(data: pa.Table, keys: list[str], order: Ranking, dedupe: str | None) -> pa.Table:
    """One row per key: the best ranked (ties go to the last row, or the first with
    ``dedupe='first'``), in the rows' original order."""
    import pyarrow as pa
    import pyarrow.compute as pc

    position = "__workbench_row"
    numbered = data.append_column(position, pa.array(range(data.num_rows), pa.int64()))
    sort_keys: list[tuple[str, Any, str]] = [(k, "ascending", "at_end") for k in keys]
    sort_keys += [(name, o.sort_order.value, o.null_order.value) for name, o in order]
    sort_keys.append((position, "ascending" if dedupe == "first" else "descending", "at_end"))
    ranked = numbered.take(pc.sort_indices(numbered, sort_keys=sort_keys))
    best = ranked.group_by(keys, use_threads=False).aggregate([(position, "first")])
    return data.take(best.column(f"{position}_first").combine_chunks().sort())
