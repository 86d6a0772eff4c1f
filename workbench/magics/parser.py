"""The ``%dc`` command language: argparse grammars per command; parsing never runs anything."""

from __future__ import annotations

import argparse
import shlex
from typing import NoReturn

from workbench.api import WorkbenchError
from workbench.reports.arguments import REPORT_ARGUMENTS


class MagicUsageError(WorkbenchError):
    """A ``%dc`` line that does not parse; the message includes the command's usage."""


class HelpRequested(Exception):
    """``--help`` was asked for: carries the help text to show instead of running anything."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise MagicUsageError(f"{message}\n{self.format_usage()}See {self.prog} --help.")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        raise HelpRequested(self.format_help())

    def print_help(self, file: object = None) -> None:
        raise HelpRequested(self.format_help())


TABLE_HELP = "table as namespace.table, table (current namespace) or dc://catalog/namespace/table"
TIME_HELP = "ns since epoch, ISO datetime, transaction id or tag"
Arguments = list[tuple[tuple[str, ...], dict]]


def _commands() -> dict[str, tuple[str, Arguments]]:
    """Each command's one-line summary and its arguments."""
    table = (("table",), {"help": TABLE_HELP})
    as_of = (("--as-of",), {"dest": "as_of", "help": f"read as of a past point ({TIME_HELP})"})
    version = (("--version",), {"type": int, "help": "a Delta version of the table"})
    status = (("--status",), {"choices": ["running", "succeeded", "failed", "abandoned"]})
    return {
        "help": ("list the commands", []),
        "init": (
            "register catalogs: a local path, or --catalog name=root ...",
            [
                (("path",), {"nargs": "?", "help": "local catalog folder (default ./.workbench)"}),
                (
                    ("--catalog",),
                    {
                        "action": "append",
                        "default": [],
                        "metavar": "NAME=ROOT",
                        "help": "a named catalog root; repeat for several",
                    },
                ),
            ],
        ),
        "catalogs": ("list the registered catalogs", []),
        "ls": (
            "list namespaces, tables or a table",
            [
                (
                    ("target",),
                    {"nargs": "?", "help": "dc:// URL, namespace or ns.table (default: current)"},
                ),
                as_of,
            ],
        ),
        "use": (
            "set the current catalog (and namespace) for later commands",
            [
                (("target",), {"help": "catalog or catalog/namespace"}),
            ],
        ),
        "show": (
            "show a table's rows",
            [
                table,
                as_of,
                version,
                (("--limit",), {"type": int, "default": 20, "help": "rows to show (default 20)"}),
                (("--columns",), {"help": "comma-separated columns"}),
            ],
        ),
        "describe": (
            "schema, merge keys, version, counts and size of a table",
            [table, as_of, version],
        ),
        "history": (
            "catalog transactions, newest first",
            [
                (("table",), {"nargs": "?", "help": "only transactions touching this table"}),
                (("--limit",), {"type": int, "default": 20}),
                (("--since",), {"help": f"from this point on ({TIME_HELP})"}),
                (
                    ("--compactions",),
                    {"action": "store_true", "help": "show automatic compaction steps too"},
                ),
            ],
        ),
        "runs": (
            "recorded runs (pipelines, inference, reports), newest first",
            [
                (("name",), {"nargs": "?", "help": "only runs with this name"}),
                status,
                (("--kind",), {"help": "pipeline, inference, report, notebook or job"}),
                (("--limit",), {"type": int, "default": 20}),
            ],
        ),
        "infer": (
            "run a model over a table's rows and merge its outputs back by key",
            [
                table,
                (
                    ("--model",),
                    {"required": True, "help": "a built-in model's name or a variable holding one"},
                ),
                (("--engine",), {"default": "daft", "help": "daft, ray, spark or local"}),
                (("--into",), {"help": "write the outputs into this table (namespace.table)"}),
                (("--force",), {"action": "store_true", "help": "recompute unchanged rows too"}),
            ],
        ),
        "diff": (
            "rows added, removed, changed and schema changes between two points or branches",
            [
                table,
                (
                    ("before",),
                    {"help": f"a table version number, a branch name (main, exp) or {TIME_HELP}"},
                ),
                (("after",), {"nargs": "?", "help": "as before (default: now, on this branch)"}),
            ],
        ),
        "changes": (
            "the rows a table's commits inserted, updated and deleted (its change feed)",
            [
                table,
                (("start",), {"nargs": "?", "help": f"first version, or {TIME_HELP}"}),
                (("end",), {"nargs": "?", "help": "last version or point (default: the newest)"}),
                (("--net",), {"action": "store_true", "help": "one change per merge key"}),
                (
                    ("--consumer",),
                    {"help": "what this named consumer has not consumed yet (only a look)"},
                ),
            ],
        ),
        "sql": (
            "(cell) run the cell's SQL over namespace.table names",
            [
                (("--engine",), {"choices": ["local", "daft", "spark"], "default": "local"}),
                as_of,
                (
                    ("--explain",),
                    {
                        "action": "store_true",
                        "help": "show the files each table is read through (and those its "
                        "conditions skip) and the engine's plan, without running the query",
                    },
                ),
            ],
        ),
        "write": (
            "(cell) write the DataFrame the cell evaluates to",
            [
                table,
                (("variable",), {"nargs": "?", "help": "line form: a variable holding the data"}),
                (
                    ("--mode",),
                    {
                        "default": "auto",
                        "help": "auto, create, add, append, replace, merge or delete",
                    },
                ),
                (
                    ("--merge-keys",),
                    {"dest": "merge_keys", "help": "comma-separated, for new tables"},
                ),
            ],
        ),
        "merge": (
            "upsert by merge keys (variable, or the cell's value)",
            [
                table,
                (("variable",), {"nargs": "?"}),
            ],
        ),
        "delete": (
            "delete rows whose merge keys match (variable, or the cell's value)",
            [
                table,
                (("variable",), {"nargs": "?"}),
            ],
        ),
        "import": (
            "make or update a media table: one row per file of a folder (references, not copies)",
            [
                (("source",), {"help": "folder: a local path or a URI such as s3://bucket/prefix"}),
                table,
                (
                    ("--prune",),
                    {"action": "store_true", "help": "delete rows of files gone from the folder"},
                ),
                (
                    ("--flat",),
                    {"action": "store_true", "help": "only the folder's own files, no subfolders"},
                ),
            ],
        ),
        "drop": ("drop a table", [table]),
        "tag": (
            "name the latest (or a given) catalog transaction",
            [
                (("name",), {}),
                (("--transaction",), {"help": "transaction id to tag"}),
            ],
        ),
        "optimize": (
            "compact a table's files",
            [
                table,
                (
                    ("--cluster-by",),
                    {"dest": "cluster_by", "help": "comma-separated columns to cluster rows by"},
                ),
            ],
        ),
        "vacuum": (
            "delete files no retained time-travel point needs",
            [
                (("--retain",), {"default": "7d", "help": "e.g. 7d, 12h, 30m, 0 (default 7d)"}),
                (("--dry-run",), {"action": "store_true", "dest": "dry_run"}),
            ],
        ),
        "transaction": (
            "(cell) run the cell's Python in one catalog transaction",
            [
                (("-m", "--message"), {"dest": "message", "help": "commit message"}),
            ],
        ),
        "branch": ("list, create, use, drop or merge catalog branches", []),
        "browse": ("open the catalog browser", []),
        "sidebar": ("open the catalog sidebar in JupyterLab's left area", []),
        "timeline": ("open the transaction history browser", []),
        "timetravel": ("open the time-travel view of a table", [table]),
        "gallery": (
            "open the media gallery of a table: thumbnails captioned with predictions",
            [
                table,
                (
                    ("--label",),
                    {"help": "the column to filter by label (default: the first text prediction)"},
                ),
                (
                    ("--score",),
                    {"help": "the column to filter by score (default: the first float prediction)"},
                ),
            ],
        ),
        "report": (
            "run a notebook with papermill and render it to HTML, pinned to one catalog state",
            [*REPORT_ARGUMENTS, as_of],
        ),
        "runsview": (
            "open the runs browser: runs, their timeline, steps and transactions",
            [
                (("filter",), {"nargs": "?", "help": "show runs whose name, kind or id has this"}),
                status,
            ],
        ),
    }


def _actions() -> dict[str, dict[str, tuple[str, Arguments]]]:
    """The actions of commands that have them (``%dc branch create ...``), the first one the
    default, each with its one-line summary and arguments."""
    name = (("name",), {"help": "branch name"})
    return {
        "branch": {
            "list": ("list main and the catalog's branches, marking the current one", []),
            "create": (
                "create a branch from main's latest state (or a past one); no data is copied",
                [
                    name,
                    (
                        ("--from",),
                        {
                            "dest": "start",
                            "metavar": "POINT",
                            "help": f"start from main as it was then ({TIME_HELP})",
                        },
                    ),
                ],
            ),
            "use": (
                "make later commands and calls read and write the branch (main: back to main)",
                [name],
            ),
            "drop": ("drop a branch and the data only it wrote", [name]),
            "diff": ("what publishing the branch would change, table by table", [name]),
            "merge": (
                "publish what the branch changed to main in one catalog transaction",
                [
                    name,
                    (
                        ("--rebase",),
                        {
                            "action": "store_true",
                            "help": "where main and the branch only appended rows to a table, "
                            "put the branch's rows on top of main's",
                        },
                    ),
                    (("-m", "--message"), {"dest": "message", "help": "commit message"}),
                ],
            ),
        }
    }


COMMANDS = _commands()
ACTIONS = _actions()
EPILOGS = {
    "branch": "With no action, %dc branch lists the branches. %dc branch diff NAME compares "
    "every table the branch changed with main; compare one table on two branches with "
    "%dc diff TABLE main NAME (or %dc diff TABLE main while on the branch).",
}


def _add_arguments(command: _Parser, arguments: Arguments) -> None:
    """Add a command's arguments, and the ``-o`` and ``--debug`` every command takes."""
    for flags, options in arguments:
        command.add_argument(*flags, **options)
    if any("-o" in flags for flags, _ in arguments):  # its own -o (report's HTML file)
        command.set_defaults(output=None)
    else:
        command.add_argument(
            "-o",
            "--output",
            dest="output",
            metavar="VAR",
            help="also store the result in this variable",
        )
    command.add_argument("--debug", action="store_true", help="show full tracebacks")


def _parser() -> tuple[_Parser, dict[str, _Parser]]:
    """The ``%dc`` parser, and each command's (and each action's) own parser by name."""
    root = _Parser(prog="%dc", add_help=False)
    sub = root.add_subparsers(dest="command", parser_class=_Parser)
    commands = {}
    for name, (summary, arguments) in COMMANDS.items():
        command = sub.add_parser(
            name, help=summary, description=summary, epilog=EPILOGS.get(name), prog=f"%dc {name}"
        )
        commands[name] = command
        _add_arguments(command, arguments)
        if name not in ACTIONS:
            continue
        actions = command.add_subparsers(dest="action", metavar="ACTION", parser_class=_Parser)
        for action, (action_summary, action_arguments) in ACTIONS[name].items():
            prog = f"%dc {name} {action}"
            parser = actions.add_parser(
                action, help=action_summary, description=action_summary, prog=prog
            )
            commands[f"{name} {action}"] = parser
            _add_arguments(parser, action_arguments)
        command.set_defaults(action=next(iter(ACTIONS[name])))  # after the subparsers' default
    return root, commands


_PARSER, _COMMAND_PARSERS = _parser()


def parse(line: str) -> argparse.Namespace:
    """Parse one ``%dc`` line; raise ``MagicUsageError`` or ``HelpRequested``."""
    try:
        words = shlex.split(line)
    except ValueError as e:
        raise MagicUsageError(f"Cannot split the line into words: {e}.") from None
    if not words:
        words = ["help"]
    if words[0] not in COMMANDS:
        raise MagicUsageError(
            f"Unknown command {words[0]!r}; commands are {', '.join(COMMANDS)} (see %dc help)."
        )
    args, extra = _PARSER.parse_known_args(words)
    if extra:  # reported by the command's (or action's) parser, so the hint names it
        command = _COMMAND_PARSERS.get(f"{words[0]} {getattr(args, 'action', None)}")
        (command or _COMMAND_PARSERS[words[0]]).error(f"unrecognized arguments: {' '.join(extra)}")
    return args


def help_text() -> str:
    """The command summary that ``%dc help`` shows."""
    width = max(map(len, COMMANDS))
    lines = [f"  {name:<{width}}  {summary}" for name, (summary, _) in COMMANDS.items()]
    return "%dc commands (%dc <command> --help for details):\n" + "\n".join(lines)
