"""What ``dc.infer`` returns: how many rows the model ran on, and the transaction it made."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.core.catalog.descriptions import html_table


@dataclass(frozen=True)
class InferResult:
    """The outcome of one ``dc.infer`` call (``transaction_id`` None when nothing changed)."""

    table: str
    model: str
    model_version: str
    engine: str
    rows_predicted: int
    rows_skipped: int
    seconds: float
    transaction_id: str | None
    table_version: int | None

    def _summary(self) -> dict[str, Any]:
        rate = self.rows_predicted / self.seconds if self.seconds else 0.0
        return {
            "table": self.table,
            "model": f"{self.model} (version {self.model_version})",
            "engine": self.engine,
            "rows predicted": self.rows_predicted,
            "rows skipped": self.rows_skipped,
            "time": f"{self.seconds:.2f} s ({rate:,.0f} rows/s)",
            "transaction": self.transaction_id or "none (nothing to do)",
        }

    def __str__(self) -> str:
        return "\n".join(f"{k}: {v}" for k, v in self._summary().items())

    def __repr__(self) -> str:
        return (
            f"InferResult({self.table}: {self.model} {self.model_version} on {self.engine}, "
            f"{self.rows_predicted} predicted, {self.rows_skipped} skipped, "
            f"{self.seconds:.2f} s, transaction {self.transaction_id})"
        )

    def _repr_html_(self) -> str:
        return html_table(self._summary(), "wb-infer")
