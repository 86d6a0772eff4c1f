"""The catalog's transaction history as a dataset, one row per transaction, newest first."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from html import escape
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from workbench.core.base.arguments import flag, optional_whole_number
from workbench.core.base.errors import InvalidArgumentError, TimeTravelError
from workbench.core.base.types import DEFAULT_ENGINE, DatasetType
from workbench.core.catalog.registry import DEFAULT_NAMESPACE
from workbench.core.catalog.scope import get_catalog
from workbench.core.catalog.versions import label, split_key
from workbench.core.data.datasets import from_pyarrow, parse_dataset_type
from workbench.core.transactions.catalog_log import log_of

if TYPE_CHECKING:
    import pyarrow as pa

    from workbench.core.transactions.catalog_log import TransactionLog


COMPACTION = "AUTO_COMPACT"  # the operation of an automatic compaction step


def is_compaction(operations: Iterable[str]) -> bool:
    """True for a transaction of automatic compaction steps alone: upkeep after a write that
    changed no row, which histories leave out unless asked and runs never hold."""
    return set(operations) == {COMPACTION}


def without_compactions(history: pa.Table) -> pa.Table:
    """``history`` (rows of ``history_table``) without its compaction-only transactions: those
    whose distinct operations (``operation_types``) are ``COMPACTION`` alone."""
    import pyarrow.compute as pc

    return history.filter(pc.not_equal(history.column("operation_types"), COMPACTION))


def engines_of(engines: list[str | None]) -> str:
    """The engines that made a transaction's changes, as one label (e.g. 'local+spark')."""
    names = {n for label in engines if label for n in label.split("+")}
    return "+".join(sorted(names)) or DEFAULT_ENGINE


def _schema() -> pa.Schema:
    """The history's columns, one row per transaction."""
    import pyarrow as pa

    return pa.schema(
        [
            ("transaction_id", pa.string()),
            ("sequence", pa.int64()),
            ("start_time", pa.int64()),
            ("end_time", pa.int64()),
            ("commit_message", pa.string()),
            ("status", pa.string()),
            ("engine", pa.string()),
            ("tables", pa.list_(pa.string())),
            ("operations", pa.list_(pa.string())),
            ("rows_added", pa.int64()),
            ("rows_removed", pa.int64()),
            ("state", pa.string()),
            ("operation_count", pa.int64()),
            ("operation_types", pa.string()),
            ("namespace_count", pa.int64()),
            ("table_count", pa.int64()),
            ("details", pa.string()),  # JSON: target -> details of its change, if any
            ("branch", pa.string()),  # the line it committed on: main or a branch
            ("published_from", pa.string()),  # for a publish to main: the branch published
        ]
    )


@dataclass
class _Folded:
    """A log's rows folded into one entry per transaction, kept between calls and extended as
    the log grows, so the history of a long log is not rebuilt on every call."""

    rows: list[dict[str, Any]]  # the log's row list it was folded from
    count: int = 0  # rows folded so far
    entries: list[dict[str, Any]] = field(default_factory=list)  # oldest first
    table: pa.Table | None = None  # the entries newest first, built when first asked


_folded: WeakKeyDictionary[TransactionLog, _Folded] = WeakKeyDictionary()


def history_table(log: TransactionLog) -> pa.Table:
    """Every committed transaction of ``log``, one row each, newest first."""
    import pyarrow as pa

    rows = log.rows
    folded = _folded.get(log)
    if folded is None or folded.rows is not rows or folded.count > len(rows):
        folded = _folded[log] = _Folded(rows)
    if folded.count < len(rows):
        grouped: dict[str, list[dict[str, Any]]] = {}
        for row in rows[folded.count :]:  # a transaction's rows arrive together, in order
            grouped.setdefault(row["transaction_id"], []).append(row)
        branch = log.catalog.branch
        entries = [_fold(group, branch) for group in grouped.values()]
        folded.entries.extend(sorted(entries, key=lambda e: e["sequence"]))
        folded.count, folded.table = len(rows), None
    if folded.table is None:
        folded.table = pa.Table.from_pylist(folded.entries[::-1], schema=_schema())
    return folded.table


def _target(row: dict[str, Any]) -> str:
    """What a log row changed: a namespace, or ``namespace.table`` (with its version)."""
    if row["table_name"] is None:
        return row["namespace"]
    return f"{row['namespace']}.{label(row['table_name'])}"


def _fold(rows: list[dict[str, Any]], branch: str) -> dict[str, Any]:
    """One transaction's history row from its log rows on ``branch``; the five columns from
    ``state`` on carry DeltaCAT's names, so code written for DeltaCAT's history reads this
    one."""
    first = rows[0]
    keys = ("transaction_id", "sequence", "start_time", "end_time", "commit_message", "status")
    operations = [r["operation"] for r in rows]
    tables = {(r["namespace"], r["table_name"]) for r in rows if r["table_name"] is not None}
    return {
        **{k: first[k] for k in keys},
        "engine": engines_of([r["engine"] for r in rows]),
        "tables": [_target(r) for r in rows],
        "operations": operations,
        "rows_added": sum(r["rows_added"] or 0 for r in rows),
        "rows_removed": sum(r["rows_removed"] or 0 for r in rows),
        "state": "SUCCESS",  # DeltaCAT's word for a committed transaction
        "operation_count": len(operations),
        "operation_types": ",".join(dict.fromkeys(operations)),
        "namespace_count": len({r["namespace"] for r in rows}),
        "table_count": len(tables),
        "details": _details_by_target(rows),
        "branch": branch,
        "published_from": _published_branch(rows),
    }


def _published_branch(rows: list[dict[str, Any]]) -> str | None:
    """The branch a transaction published to ``main`` (None for other transactions)."""
    for row in rows:
        details = json.loads(row["details"]) if row.get("details") else {}
        if "branch_id" in details:
            return details.get("branch")
    return None


def _details_by_target(rows: list[dict[str, Any]]) -> str | None:
    """The details of a transaction's table changes as one JSON object keyed by target."""
    found = {_target(r): json.loads(r["details"]) for r in rows if r.get("details")}
    return json.dumps(found, sort_keys=True) if found else None


def transactions(
    read_as: DatasetType | str = DatasetType.PYARROW,
    catalog: str | None = None,
    table: str | None = None,
    since: Any = None,
    limit: int | None = None,
    as_of: Any = None,
    *,
    compactions: bool = False,
) -> Any:
    """Committed transactions, newest first; filter by ``table`` ("ns.table"), ``since`` a
    time/transaction/tag, ``as_of`` one (the history as it was then; a report's pinned state
    when not given), and keep the first ``limit``. Automatic compaction steps
    (``AUTO_COMPACT``, no row changed) are left out unless ``compactions=True``, so the
    newest row is the newest change a user made."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from workbench.core.transactions.context import pinned_state
    from workbench.core.transactions.time_travel import resolve_sequence

    limit = optional_whole_number("limit", limit)
    flag("compactions", compactions)
    cat = get_catalog(catalog)
    log = log_of(cat)
    log.refresh()
    history = history_table(log)
    if not compactions:
        history = without_compactions(history)
    if since is not None and history.num_rows:
        first = resolve_sequence(cat, since, "since")
        history = history.filter(pc.greater_equal(history.column("sequence"), first))
    pinned = pinned_state(cat) if as_of is None else None  # a report's kernel reads a pin
    if (as_of is not None or pinned is not None) and history.num_rows:
        last = resolve_sequence(cat, as_of, "as_of") if pinned is None else pinned.sequence
        history = history.filter(pc.less_equal(history.column("sequence"), last))
    if table is not None:
        if not isinstance(table, str) or not table.strip("."):
            raise InvalidArgumentError(
                f"table={table!r} must name a table as 'namespace.table' (or 'table' in the "
                "default namespace)."
            )
        namespace, _, name = table.rpartition(".")
        wanted = {
            t["transaction_id"]
            for t in log.rows
            if t["table_name"] is not None
            and split_key(t["table_name"])[0] == name
            and t["namespace"] == (namespace or DEFAULT_NAMESPACE)
        }
        ids = pa.array(sorted(wanted), pa.string())
        history = history.filter(pc.is_in(history.column("transaction_id"), value_set=ids))
    if limit is not None:
        history = history.slice(0, limit)
    return from_pyarrow(history, parse_dataset_type(read_as))


@dataclass(frozen=True)
class TransactionRecord:
    """One committed transaction and the tables and namespaces it changed."""

    transaction_id: str
    sequence: int
    start_time: int
    end_time: int
    commit_message: str | None
    engine: str
    changes: list[dict[str, Any]] = field(default_factory=list)

    def __str__(self) -> str:
        lines = [
            f"transaction {self.transaction_id} (#{self.sequence}) {self.commit_message or ''}"
        ]
        for c in self.changes:
            target = c["target"]
            lines.append(
                f"  {c['operation']:<28} {target:<30} version={c['table_version']} "
                f"+{c['rows_added']} -{c['rows_removed']}"
            )
            if c["details"]:
                lines.append(f"    details: {json.dumps(c['details'], sort_keys=True)}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        body = "".join(
            f"<tr><td>{escape(c['operation'])}</td><td>{escape(c['target'])}</td>"
            f"<td>{c['table_version']}</td><td>+{c['rows_added']}</td>"
            f"<td>-{c['rows_removed']}</td>"
            f"<td><code>{escape(json.dumps(c['details'], sort_keys=True)) if c['details'] else ''}"
            "</code></td></tr>"
            for c in self.changes
        )
        return (
            f"<p><b>{escape(self.commit_message or 'transaction')}</b> "
            f"<code>{self.transaction_id}</code> #{self.sequence}</p><table><thead><tr>"
            "<th>operation</th><th>target</th><th>version</th><th>added</th><th>removed</th>"
            f"<th>details</th></tr></thead><tbody>{body}</tbody></table>"
        )


def read_transaction(transaction_id: str, catalog: str | None = None) -> TransactionRecord:
    """The committed transaction with this id."""
    log = log_of(get_catalog(catalog))
    log.refresh()
    rows = [r for r in log.rows if r["transaction_id"] == transaction_id]
    if not rows:
        raise TimeTravelError(
            f"No committed transaction {transaction_id!r}; see dc.transactions() for ids."
        )
    first = rows[0]
    changes = [
        {
            "target": _target(r),
            **{k: r[k] for k in ("operation", "namespace")},
            "table_name": None if r["table_name"] is None else split_key(r["table_name"])[0],
            "table_version_name": None
            if r["table_name"] is None
            else split_key(r["table_name"])[1],
            **{k: r[k] for k in ("table_version", "rows_added", "rows_removed", "engine")},
            "details": json.loads(r["details"]) if r.get("details") else None,
        }
        for r in rows
    ]
    return TransactionRecord(
        first["transaction_id"],
        first["sequence"],
        first["start_time"],
        first["end_time"],
        first["commit_message"],
        engines_of([r["engine"] for r in rows]),
        changes,
    )
