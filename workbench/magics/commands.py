"""What each ``%dc`` command does: resolve names, call the public API, return a displayable result.

Handlers never touch storage themselves, so a notebook does exactly what a script calling
``workbench`` would.
"""

from __future__ import annotations

import ast
import re
from argparse import Namespace as Args
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from html import escape
from typing import Any

import workbench.api as dc
from workbench.api import InvalidArgumentError, InvalidUrlError
from workbench.frontend.views import catalog_name_of
from workbench.magics.parser import MagicUsageError, help_text
from workbench.reports import parse_parameters


@dataclass
class Session:
    """What ``%dc use`` set: the catalog and namespace that short names refer to."""

    catalog: str | None = None
    namespace: str | None = None


@dataclass(frozen=True)
class Message:
    """A short result or error line, plain in a terminal and styled in a notebook."""

    text: str
    error: bool = False

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return self.text

    def _repr_html_(self) -> str:
        style = "color:#b00020;border-left:3px solid #b00020" if self.error else "color:#1b5e20"
        body = escape(self.text)  # pre-wrap keeps an error's caret under the place it marks
        return (
            f"<div style='{style};padding:4px 8px;font-family:monospace;white-space:pre-wrap'>"
            f"{body}</div>"
        )


@dataclass(frozen=True)
class Listing:
    """Rows of names and details (catalogs, namespaces, tables) as a small table."""

    title: str
    columns: list[str]
    rows: list[list[Any]] = field(default_factory=list)

    def __repr__(self) -> str:
        lines = [self.title] + ["  " + "  ".join(str(v) for v in row) for row in self.rows]
        return "\n".join(lines) if self.rows else f"{self.title}: (empty)"

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{escape(c)}</th>" for c in self.columns)
        body = "".join(
            "<tr>" + "".join(f"<td>{escape(str(v))}</td>" for v in row) + "</tr>"
            for row in self.rows
        )
        return f"<b>{escape(self.title)}</b><table><tr>{head}</tr>{body}</table>"


def resolve_table(text: str, session: Session) -> tuple[str, str | None, str | None]:
    """(table, namespace, catalog) from ``ns.table``, ``table`` or a ``dc://`` URL."""
    if text.startswith("dc://"):
        url = dc.DeltaCatUrl(text)
        if url.table is None:
            raise InvalidUrlError(f"{text!r} does not name a table (dc://catalog/namespace/table).")
        return url.table, url.namespace, url.catalog_name
    namespace, _, table = text.rpartition(".")
    return table, namespace or session.namespace, session.catalog


_DURATION = re.compile(r"(\d+(?:\.\d+)?)([dhms]?)")
_UNITS = {"d": 86400, "h": 3600, "m": 60, "s": 1, "": 1}


def parse_duration(text: str) -> timedelta:
    """``7d``, ``12h``, ``30m``, ``45s`` or plain seconds."""
    match = _DURATION.fullmatch(text.strip())
    if not match:
        raise MagicUsageError(f"Cannot read duration {text!r}; write e.g. 7d, 12h, 30m or 0.")
    return timedelta(seconds=float(match.group(1)) * _UNITS[match.group(2)])


def parse_point(text: str | None) -> Any:
    """A time-travel point: ns (int), ISO datetime, or a transaction id / tag (str)."""
    if text is None:
        return None
    if text.isdigit():
        return int(text)
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return text


class Commands:
    """The handlers, bound to an IPython shell (for variables and cell code) and a session."""

    def __init__(self, shell: Any, session: Session):
        self.shell = shell
        self.session = session

    def run(self, args: Args, cell: str | None) -> Any:
        """Dispatch a parsed command."""
        action = getattr(args, "action", None)  # commands with actions: do_<command>_<action>
        name = f"do_{args.command}" + (f"_{action}" if action else "")
        handler: Callable[[Args, str | None], Any] = getattr(self, name)
        return handler(args, cell)

    # ------------------------------------------------------------------------ catalogs
    def do_help(self, args: Args, cell: str | None) -> Message:
        return Message(help_text())

    def do_init(self, args: Args, cell: str | None) -> Listing:
        if args.catalog:
            catalogs = {}
            for spec in args.catalog:
                name, sep, root = spec.partition("=")
                if not sep or not name or not root:
                    raise MagicUsageError(f"--catalog takes NAME=ROOT, got {spec!r}.")
                catalogs[name] = dc.Catalog(dc.CatalogProperties(root))
            dc.init(catalogs=catalogs)
        else:
            dc.init_local(args.path)
        self.session.catalog = self.session.namespace = None
        return self.do_catalogs(args, cell)

    def do_catalogs(self, args: Args, cell: str | None) -> Listing:
        default = dc.get_catalog()
        rows = [
            [name, cat.root, "default" if cat is default else ""]
            for name, cat in dc.list_catalogs().items()
        ]
        return Listing(f"catalogs (branch {dc.current_branch()})", ["name", "root", ""], rows)

    def do_use(self, args: Args, cell: str | None) -> Message:
        catalog, _, namespace = args.target.partition("/")
        dc.get_catalog(catalog)  # raises CatalogNotFoundError with the registered names
        if namespace and not dc.namespace_exists(namespace, catalog):
            raise dc.NamespaceNotFoundError(
                f"Namespace {namespace!r} does not exist in catalog {catalog!r}; see %dc ls."
            )
        self.session.catalog, self.session.namespace = catalog, namespace or None
        return Message(
            f"using catalog {catalog}" + (f", namespace {namespace}" if namespace else "")
        )

    def do_ls(self, args: Args, cell: str | None) -> Listing:
        as_of = parse_point(args.as_of)
        target = args.target
        if target is None or not target.startswith("dc://"):
            catalog = self.session.catalog or catalog_name_of()
            path = target or self.session.namespace
            if target and "." in target:  # ns.t (namespace names hold no dots): the table
                path = "/".join(target.rpartition(".")[::2])
            target = f"dc://{catalog}" + (f"/{path}" if path else "")
        items = dc.list(target, as_of=as_of)
        title = f"{target} on branch {dc.current_branch()}"
        if items and isinstance(items[0], dc.Namespace):
            return Listing(title, ["namespace"], [[n.name] for n in items])
        if items and isinstance(items[0], dc.TableInfo):
            info = items[0]
            return Listing(
                title,
                ["version", "rows", "files", "bytes", "merge keys"],
                [
                    [
                        info.version,
                        info.row_count,
                        info.file_count,
                        info.size_bytes,
                        ", ".join(info.merge_keys),
                    ]
                ],
            )
        return Listing(title, ["table", "url"], [[t.name, t.url] for t in items])

    # --------------------------------------------------------------------------- reads
    def do_show(self, args: Args, cell: str | None) -> Any:
        table, namespace, catalog = resolve_table(args.table, self.session)
        columns = [c.strip() for c in args.columns.split(",")] if args.columns else None
        return dc.read(
            table,
            namespace,
            catalog,
            read_as=dc.DatasetType.PANDAS,
            columns=columns,
            version=args.version,
            as_of=parse_point(args.as_of),
            limit=args.limit,
        )

    def do_describe(self, args: Args, cell: str | None) -> dc.TableInfo:
        table, namespace, catalog = resolve_table(args.table, self.session)
        return dc.get_table(
            table, namespace, catalog, version=args.version, as_of=parse_point(args.as_of)
        )

    def do_history(self, args: Args, cell: str | None) -> Any:
        qualified = None
        if args.table:
            table, namespace, _ = resolve_table(args.table, self.session)
            qualified = f"{namespace or 'default'}.{table}"
        return dc.transactions(
            read_as=dc.DatasetType.PANDAS,
            catalog=self.session.catalog,
            table=qualified,
            since=parse_point(args.since),
            limit=args.limit,
            compactions=args.compactions,
        )

    def do_runs(self, args: Args, cell: str | None) -> Any:
        return dc.runs(
            name=args.name,
            kind=args.kind,
            status=args.status,
            limit=args.limit,
            read_as=dc.DatasetType.PANDAS,
            catalog=self.session.catalog,
        )

    def do_report(self, args: Args, cell: str | None) -> dc.ReportResult:
        return dc.report(
            args.template,
            output=args.html,
            parameters=parse_parameters(args.parameter, args.template),
            as_of=parse_point(args.as_of),
            catalog=self.session.catalog,
            branch=args.branch,
        )

    def do_diff(self, args: Args, cell: str | None) -> dc.TableDiff:
        table, namespace, catalog = resolve_table(args.table, self.session)
        return dc.diff(table, namespace, parse_point(args.before), parse_point(args.after), catalog)

    def do_changes(self, args: Args, cell: str | None) -> Any:
        table, namespace, catalog = resolve_table(args.table, self.session)
        return dc.changes(
            table,
            parse_point(args.start),
            parse_point(args.end),
            namespace,
            catalog,
            read_as=dc.DatasetType.PANDAS,
            net=args.net,
            consumer=args.consumer,
        )

    def do_infer(self, args: Args, cell: str | None) -> dc.InferResult:
        table, namespace, catalog = resolve_table(args.table, self.session)
        model = self.shell.user_ns.get(args.model)
        if not isinstance(model, dc.Model):
            model = args.model  # a built-in model's name
        into = args.into
        if into and "." not in into and namespace:
            into = f"{namespace}.{into}"
        return dc.infer(
            table,
            model,
            namespace=namespace,
            into=into,
            engine=args.engine,
            force=args.force,
            catalog=catalog,
        )

    def do_sql(self, args: Args, cell: str | None) -> Any:
        if not cell or not cell.strip():
            raise MagicUsageError("%%dc sql takes the SQL in the cell body, below the magic line.")
        return dc.sql(
            cell,
            engine=args.engine,
            as_of=parse_point(args.as_of),
            catalog=self.session.catalog,
            explain=args.explain,
        )

    # -------------------------------------------------------------------------- writes
    def _data(self, variable: str | None, cell: str | None, command: str) -> Any:
        if variable:
            if variable not in self.shell.user_ns:
                raise MagicUsageError(f"No variable {variable!r} in the notebook namespace.")
            return self.shell.user_ns[variable]
        if cell and cell.strip():
            return evaluate_cell(self.shell, cell)
        raise MagicUsageError(
            f"%dc {command} needs data: name a variable, or use %%dc {command} with a cell "
            "whose last line is the DataFrame."
        )

    def do_write(self, args: Args, cell: str | None) -> dc.WriteResult:
        table, namespace, catalog = resolve_table(args.table, self.session)
        data = self._data(args.variable, cell, "write")
        keyed: dict[str, Any] = {}  # no schema= by default: schema=None means schemaless
        if args.merge_keys:
            keys = [k.strip() for k in args.merge_keys.split(",")]
            arrow = dc.dataset_schema(data)
            missing = [k for k in keys if k not in arrow.names]
            if missing:
                raise InvalidArgumentError(f"--merge-keys {missing} are not columns of the data.")
            fields = [dc.Field.of(f, is_merge_key=f.name in keys) for f in arrow]
            keyed["schema"] = dc.Schema.of(fields)
        return dc.write(
            data, table, namespace, catalog, mode=args.mode, auto_create_namespace=True, **keyed
        )

    def do_merge(self, args: Args, cell: str | None) -> dc.WriteResult:
        table, namespace, catalog = resolve_table(args.table, self.session)
        data = self._data(args.variable, cell, "merge")
        return dc.write(data, table, namespace, catalog, mode=dc.TableWriteMode.MERGE)

    def do_delete(self, args: Args, cell: str | None) -> dc.WriteResult:
        table, namespace, catalog = resolve_table(args.table, self.session)
        data = self._data(args.variable, cell, "delete")
        return dc.write(data, table, namespace, catalog, mode=dc.TableWriteMode.DELETE)

    def do_import(self, args: Args, cell: str | None) -> dc.ImportResult:
        table, namespace, catalog = resolve_table(args.table, self.session)
        return dc.import_media(
            args.source,
            table,
            namespace,
            recursive=not args.flat,
            prune=args.prune,
            catalog=catalog,
        )

    def do_drop(self, args: Args, cell: str | None) -> Message:
        table, namespace, catalog = resolve_table(args.table, self.session)
        dc.drop_table(table, namespace, catalog)
        return Message(
            f"dropped {namespace or 'default'}.{table} (time travel still reads it until vacuum)"
        )

    def do_tag(self, args: Args, cell: str | None) -> Message:
        txn = dc.tag(args.name, args.transaction, catalog=self.session.catalog)
        return Message(f"tagged transaction {txn} as {args.name!r}")

    def do_optimize(self, args: Args, cell: str | None) -> Message:
        table, namespace, catalog = resolve_table(args.table, self.session)
        columns = [c.strip() for c in args.cluster_by.split(",")] if args.cluster_by else None
        metrics = dc.optimize(table, namespace, catalog, cluster_by=columns)
        by = metrics.get("clusterBy")
        clustered = f", clustered by {', '.join(by)}" if by else ""
        return Message(
            f"optimized: {metrics.get('numFilesRemoved', 0)} files compacted into "
            f"{metrics.get('numFilesAdded', 0)}{clustered}"
        )

    def do_vacuum(self, args: Args, cell: str | None) -> dc.VacuumResult:
        return dc.vacuum(
            self.session.catalog, retain=parse_duration(args.retain), dry_run=args.dry_run
        )

    def do_transaction(self, args: Args, cell: str | None) -> Any:
        if not cell or not cell.strip():
            raise MagicUsageError("%%dc transaction runs the cell body; put Python code below it.")
        with dc.transaction(commit_message=args.message, catalog=self.session.catalog) as txn:
            result = self.shell.run_cell(cell, store_history=False, silent=True)
            result.raise_error()
        committed = dc.transactions(
            read_as=dc.DatasetType.PYARROW, catalog=self.session.catalog, limit=1
        ).to_pylist()
        if committed and committed[0]["transaction_id"] == txn.id:
            return dc.read_transaction(txn.id, catalog=self.session.catalog)
        return Message("transaction committed with no changes")

    # ------------------------------------------------------------------------ branches
    def do_branch_list(self, args: Args, cell: str | None) -> Listing:
        found = dc.branches(self.session.catalog)
        rows = [
            [
                b.name,
                "current" if b.current else "",
                b.source or "-",
                b.transactions,
                ", ".join(b.tables_changed) or "-",
            ]
            for b in found
        ]
        return Listing(
            f"branches of catalog {found[0].catalog}",
            ["branch", "", "from", "commits", "tables changed"],
            rows,
        )

    def do_branch_create(self, args: Args, cell: str | None) -> dc.Branch:
        return dc.create_branch(args.name, parse_point(args.start), self.session.catalog)

    def do_branch_diff(self, args: Args, cell: str | None) -> dc.BranchDiff:
        return dc.diff_branch(args.name, self.session.catalog)

    def do_branch_use(self, args: Args, cell: str | None) -> Message:
        if args.name == dc.MAIN_BRANCH:  # always there: the way back from a branch dropped
            dc.use_branch(dc.MAIN_BRANCH, self.session.catalog)
            return Message("on main")
        dc.use_branch(args.name, self.session.catalog)  # checks the name and that it exists
        return Message(
            f"on branch {args.name}: commands and calls that name no branch read and write it "
            "(%dc branch use main to go back)"
        )

    def do_branch_drop(self, args: Args, cell: str | None) -> Message:
        in_use = dc.current_branch(self.session.catalog) == args.name
        dc.drop_branch(args.name, self.session.catalog)  # the session goes back to main
        suffix = ", the one in use; back on main" if in_use else ""
        return Message(f"dropped branch {args.name}{suffix}")

    def do_branch_merge(self, args: Args, cell: str | None) -> dc.MergeResult:
        return dc.merge_branch(
            args.name,
            rebase=args.rebase,
            commit_message=args.message,
            catalog=self.session.catalog,
        )

    # ------------------------------------------------------------------------- widgets
    def do_browse(self, args: Args, cell: str | None) -> Any:
        from workbench.widgets import CatalogBrowser

        return CatalogBrowser(catalog=self.session.catalog)

    def do_sidebar(self, args: Args, cell: str | None) -> Message:
        from workbench.widgets.sidebar import open_sidebar

        open_sidebar()
        return Message("catalog sidebar open in JupyterLab's left area")

    def do_timeline(self, args: Args, cell: str | None) -> Any:
        from workbench.widgets import HistoryBrowser

        return HistoryBrowser(catalog=self.session.catalog)

    def do_timetravel(self, args: Args, cell: str | None) -> Any:
        from workbench.widgets import TimeTravel

        table, namespace, catalog = resolve_table(args.table, self.session)
        return TimeTravel(table, namespace, catalog)

    def do_gallery(self, args: Args, cell: str | None) -> Any:
        from workbench.widgets import Gallery

        table, namespace, catalog = resolve_table(args.table, self.session)
        return Gallery(table, namespace, catalog, label=args.label, score=args.score)

    def do_runsview(self, args: Args, cell: str | None) -> Any:
        from workbench.widgets import RunsBrowser

        browser = RunsBrowser(catalog=self.session.catalog)
        if args.filter:
            browser.set_filter(args.filter)
        if args.status:
            browser.set_status(args.status)
        return browser


def evaluate_cell(shell: Any, cell: str) -> Any:
    """Run a cell's statements in the notebook namespace and return its last expression."""
    tree = ast.parse(cell)
    if not tree.body or not isinstance(tree.body[-1], ast.Expr):
        raise MagicUsageError("The cell's last line must be an expression giving the data.")
    last = ast.Expression(tree.body.pop().value)
    exec(compile(tree, "<%%dc cell>", "exec"), shell.user_ns)
    return eval(compile(last, "<%%dc cell>", "eval"), shell.user_ns)
