"""What a read of one table version will open: the files its filter could match, chosen by the
log's statistics before any file is opened, and, for ``dc.sql(..., explain=True)`` and
``%%dc sql --explain``, a plan that shows it."""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from workbench.core.delta.reading import plain_schema
from workbench.core.delta.skipping import skip_files

if TYPE_CHECKING:
    from workbench.core.catalog.locations import OpenTable
    from workbench.core.filters.expression import Expr


@dataclass(frozen=True)
class TableScan:
    """One table read by a query: which version, the filter skipping used, and the files and
    bytes it considered and kept."""

    table: str
    version: int
    condition: str  # the filter skipping read ('' for none)
    files: int
    bytes: int
    kept_files: int
    kept_bytes: int

    @property
    def skipped_files(self) -> int:
        return self.files - self.kept_files


def narrowed(opened: OpenTable, predicate: Expr | None) -> tuple[OpenTable, TableScan]:
    """``opened`` reading only the files ``predicate`` could match, and what that leaves."""
    skipped = skip_files(opened.files, predicate, plain_schema(opened), opened.storage.identity)
    scan = TableScan(
        opened.loc.qualified,
        opened.version,
        "" if predicate is None else _shown(predicate),
        len(opened.files),
        sum(f.size for f in opened.files),
        len(skipped.kept),
        sum(f.size for f in skipped.kept),
    )
    return (opened if predicate is None else opened.with_files(skipped.kept, predicate)), scan


def _shown(predicate: Expr) -> str:
    from workbench.core.base.errors import InvalidFilterError
    from workbench.core.filters.sql_text import to_sql

    try:
        return to_sql(predicate)
    except InvalidFilterError:
        return "(a condition only the engine reads)"


@dataclass(frozen=True)
class QueryPlan:
    """What ``dc.sql(..., explain=True)`` shows: each table the query reads, with the files
    skipping left it, and the engine's own plan."""

    query: str
    engine: str
    scans: list[TableScan] = field(default_factory=list)
    engine_plan: str = ""

    @property
    def files(self) -> int:
        return sum(s.files for s in self.scans)

    @property
    def kept_files(self) -> int:
        return sum(s.kept_files for s in self.scans)

    @property
    def kept_bytes(self) -> int:
        return sum(s.kept_bytes for s in self.scans)

    def __str__(self) -> str:
        lines = [f"{self.engine} query reads {self.kept_files} of {self.files} file(s)"]
        for s in self.scans:
            lines.append(
                f"  {s.table} v{s.version}: {s.kept_files} of {s.files} file(s), "
                f"{_size(s.kept_bytes)} of {_size(s.bytes)}, {s.skipped_files} skipped"
                + (f" by {s.condition}" if s.condition else "")
            )
        if self.engine_plan:
            lines += ["", self.engine_plan]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        rows = "".join(
            "<tr>"
            + "".join(
                f"<td>{html.escape(str(v))}</td>"
                for v in (
                    s.table,
                    s.version,
                    f"{s.kept_files} / {s.files}",
                    s.skipped_files,
                    f"{_size(s.kept_bytes)} / {_size(s.bytes)}",
                    s.condition or "—",
                )
            )
            + "</tr>"
            for s in self.scans
        )
        head = "".join(
            f"<th>{h}</th>"
            for h in ("table", "version", "files read", "skipped", "bytes", "skipped by")
        )
        plan = (
            f"<details><summary>{html.escape(self.engine)} plan</summary>"
            f"<pre>{html.escape(self.engine_plan)}</pre></details>"
            if self.engine_plan
            else ""
        )
        return (
            f"<div><b>{self.kept_files} of {self.files} file(s)</b> read "
            f"({_size(self.kept_bytes)})<table><thead><tr>{head}</tr></thead>"
            f"<tbody>{rows}</tbody></table>{plan}</div>"
        )


def _size(count: int) -> str:
    size = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GiB"
