"""The options of ``format("workbench")``, parsed and checked in one place: on the driver before
Spark plans a read or a save (so a mistake reaches the caller as workbench's own error), and
again in Spark's Python workers, which get them lower-cased.

The table is the load/save path: ``table``, ``namespace.table`` or
``catalog.namespace.table``. Every option name is checked: a misspelt one (``as_of``,
``verison``) would otherwise be ignored and read the current state without a word.

Streams (``spark.readStream`` / ``df.writeStream``) take options of their own: a read its first
version (``startingVersion``), the change feed (``readChangeFeed``) and whether to pass over
versions that changed rows (``skipChangeCommits``); a write its idempotency app
(``idempotencyApp``; Spark adds ``checkpointLocation`` and ``queryName``).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass

from workbench.core.base.errors import InvalidArgumentError
from workbench.engines.spark.scan_files import SCAN_OPTION

NAME = "workbench"  # the format name
WRITE_MODES = ("merge", "delete")  # values of the writeMode option
_COMMON = ("catalog", "root", "branch")
READ_OPTIONS = (*_COMMON, "asOf", "version", "tableVersion")
WRITE_OPTIONS = (*_COMMON, "writeMode")
STREAM_READ_OPTIONS = (*_COMMON, "startingVersion", "readChangeFeed", "skipChangeCommits")
STREAM_WRITE_OPTIONS = (*WRITE_OPTIONS, "idempotencyApp", "checkpointLocation", "queryName")
LATEST = "latest"  # startingVersion: the versions after the one current when the stream starts
# set by load()/save() from their argument, and by workbench's load (see scan_files)
_SPARK_KEYS = ("path", "paths", SCAN_OPTION.lower())
# Names other Spark sources or workbench's Python API use for these options.
_SPELLINGS = {
    "versionasof": "version",
    "timestampasof": "asOf",
    "as_of": "asOf",
    "table_version": "tableVersion",
    "write_mode": "writeMode",
    "mode": "writeMode",
    "starting_version": "startingVersion",
    "startingtimestamp": "startingVersion",
    "readchangedata": "readChangeFeed",
    "ignorechanges": "skipChangeCommits",
    "ignoredeletes": "skipChangeCommits",
    "txnappid": "idempotencyApp",
}


@dataclass(frozen=True)
class SourceOptions:
    """What a ``format("workbench")`` read or save asks for."""

    table: str
    namespace: str | None = None
    catalog: str | None = None  # a registered catalog's name
    root: str | None = None  # a catalog folder or URI, instead of a registered catalog
    branch: str | None = None
    as_of: int | str | None = None
    version: int | None = None
    table_version: str | None = None
    write_mode: str | None = None
    starting_version: int | str | None = None  # a Delta version, or LATEST
    change_feed: bool = False
    skip_change_commits: bool = False
    app_id: str | None = None  # a stream write's idempotency app
    checkpoint: str | None = None  # a stream write's checkpoint location
    scan: str | None = None  # the id of the load a batch read is a scan of (scan_files)


def read_options(options: Mapping[str, str]) -> SourceOptions:
    """The read a ``spark.read.format("workbench")`` with these options asks for."""
    given = _known(options, READ_OPTIONS, "load")
    as_of = given.get("asof")
    as_of = as_of.strip() if as_of is not None else None
    return SourceOptions(
        **_place(given, "load"),
        as_of=int(as_of) if as_of and as_of.isdigit() else as_of,
        version=_version(given.get("version")),
        table_version=given.get("tableversion"),
        scan=given.get(SCAN_OPTION.lower()),
    )


def write_options(options: Mapping[str, str], path: str | None = None) -> SourceOptions:
    """The write a ``df.write.format("workbench")`` with these options (and ``path``, the
    argument of ``save``) asks for."""
    given = _known(options, WRITE_OPTIONS, "save", path)
    return SourceOptions(**_place(given, "save"), write_mode=_write_mode(given.get("writemode")))


def any_read_options(options: Mapping[str, str]) -> SourceOptions:
    """A batch or stream read (Spark's workers plan both through the same ``schema()``; the
    driver checked which options the read takes)."""
    given = {str(key).lower() for key in options}
    stream_only = {n.lower() for n in STREAM_READ_OPTIONS} - {n.lower() for n in READ_OPTIONS}
    return stream_read_options(options) if given & stream_only else read_options(options)


def stream_read_options(options: Mapping[str, str], path: str | None = None) -> SourceOptions:
    """The read a ``spark.readStream.format("workbench")`` with these options asks for."""
    given = _known(options, STREAM_READ_OPTIONS, "load", path)
    return SourceOptions(
        **_place(given, "load"),
        starting_version=_starting_version(given.get("startingversion")),
        change_feed=_flag(given, "readChangeFeed"),
        skip_change_commits=_flag(given, "skipChangeCommits"),
    )


def stream_write_options(options: Mapping[str, str], path: str | None = None) -> SourceOptions:
    """The write a ``df.writeStream.format("workbench")`` with these options asks for."""
    given = _known(options, STREAM_WRITE_OPTIONS, "start", path)
    mode = _write_mode(given.get("writemode"))
    if mode == "delete":
        raise InvalidArgumentError(
            f"writeMode 'delete' is not a stream sink's mode; a stream to format({NAME!r}) "
            "appends (no writeMode) or upserts by the table's merge keys (writeMode 'merge')."
        )
    app = given.get("idempotencyapp")
    if app is not None and not app.strip():
        raise InvalidArgumentError(
            "Option idempotencyApp is empty; name the stream's app (a non-empty string), or "
            "leave it out to derive one from the checkpoint location."
        )
    return SourceOptions(
        **_place(given, "start"),
        write_mode=mode,
        app_id=app.strip() if app is not None else None,
        checkpoint=given.get("checkpointlocation"),
    )


def _known(
    options: Mapping[str, str], allowed: tuple[str, ...], call: str, path: str | None = None
) -> dict[str, str]:
    """The options (and ``path``, the argument of ``load``/``save``/``start``) by lower-case
    name; an unknown name is an error naming the allowed ones."""
    given = {str(key).lower(): str(value) for key, value in options.items()}
    if path is not None:
        given["path"] = path
    names = {name.lower(): name for name in allowed}
    unknown = sorted(set(given) - set(names) - set(_SPARK_KEYS))
    if unknown:
        hints = [_hint(key, names) for key in unknown]
        raise InvalidArgumentError(
            f"Unknown option(s) {unknown} for format({NAME!r}).{call}(){''.join(hints)}; its "
            f"options are {list(allowed)}. Nothing was {'read' if call == 'load' else 'written'}."
        )
    return given


def _hint(key: str, names: dict[str, str]) -> str:
    """`` (did you mean ...?)`` for a name close to an allowed one ("" if none is)."""
    spelled = _SPELLINGS.get(key, "").lower()
    close = difflib.get_close_matches(key, names, 1)
    meant = spelled if spelled in names else (close[0] if close else None)
    return f" ({key!r}: did you mean {names[meant]!r}?)" if meant else ""


def _place(given: dict[str, str], call: str) -> dict[str, str | None]:
    """The table, namespace, catalog, root and branch the options name."""
    if "paths" in given:
        raise InvalidArgumentError(
            f"format({NAME!r}).load() reads one table; load each table on its own and "
            "union the frames."
        )
    path = given.get("path", "").strip()
    parts = path.split(".")
    if not path or len(parts) > 3:
        raise InvalidArgumentError(
            f"format({NAME!r}).{call}() needs the table as its path: "
            f".{call}('namespace.table') (or 'table', or 'catalog.namespace.table'); got "
            f"{path!r}."
        )
    catalog, root = given.get("catalog"), given.get("root")
    if catalog is not None and root is not None:
        raise InvalidArgumentError(
            f"format({NAME!r}) takes the catalog option or the root option, not both: a "
            "registered catalog's name, or a catalog folder or URI."
        )
    if len(parts) == 3:
        named, *parts = parts
        if root is not None or catalog not in (None, named):
            other = "root" if root is not None else "catalog"
            raise InvalidArgumentError(
                f"The table {path!r} names catalog {named!r}, and the {other} option names "
                "another; give the catalog once."
            )
        catalog = named
    return {
        "table": parts[-1],
        "namespace": parts[0] if len(parts) == 2 else None,
        "catalog": catalog,
        "root": root,
        "branch": given.get("branch"),
    }


def _version(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return int(text.strip())
    except ValueError:
        raise InvalidArgumentError(
            f"Option version={text!r} must be a Delta version number, e.g. .option('version', "
            "3); to read as of a time, transaction or tag use the asOf option."
        ) from None


def _write_mode(text: str | None) -> str | None:
    """The ``writeMode`` option (lower case), None when absent."""
    if text is None:
        return None
    mode = text.strip().lower()
    if mode not in WRITE_MODES:
        raise InvalidArgumentError(
            f"Unknown writeMode {text!r} for format({NAME!r}); use one of {list(WRITE_MODES)} "
            "(MERGE upserts by the table's merge keys, DELETE removes the rows holding the "
            "frame's keys), or leave it out to append or overwrite with .mode(...)."
        )
    return mode


def _starting_version(text: str | None) -> int | str | None:
    """The ``startingVersion`` option: a Delta version or ``latest``; None when absent."""
    if text is None:
        return None
    value = text.strip().lower()
    if value == LATEST:
        return LATEST
    if value.isdigit():
        return int(value)
    raise InvalidArgumentError(
        f"Option startingVersion={text!r} must be a table (Delta) version, e.g. "
        ".option('startingVersion', 3), or 'latest' for the versions after the current one."
    )


def _flag(given: dict[str, str], name: str) -> bool:
    """A true/false option (false when absent)."""
    value = given.get(name.lower(), "false").strip().lower()
    if value not in ("true", "false"):
        raise InvalidArgumentError(f"Option {name}={given[name.lower()]!r} must be true or false.")
    return value == "true"
