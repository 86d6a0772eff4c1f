"""A SQL engine's error about a query, said in the user's terms: the tables' names where the
engine saw view names, none of the engine's words for how the tables were given to it, a hint
that fits the error, and the line of the user's query the engine pointed at, marked."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from workbench.core.base.errors import SqlQueryError

if TYPE_CHECKING:
    from workbench.core.io.sql import BoundQuery

# What engines call the views a query's tables are given as, in their messages.
_VIEW_WORDS = re.compile(r'\b(?:Values list|Table Function|view)\s+(?=["`])', re.IGNORECASE)
# An engine saying a name is no table, with the name (DuckDB, Spark, Daft).
_MISSING_TABLE = re.compile(
    r'Table with name (?P<duck>[^\s!]+) does not exist!(?:\s*Did you mean "[^"]*"\?)?'
    r"|\[TABLE_OR_VIEW_NOT_FOUND\][^`]*`(?P<spark>[^`]+)`(?s:.*)"
    r"|Table not found: (?P<daft>[\w.-]+)",
)
# An engine's pointer at a place of the query (DuckDB's and Daft's): "LINE n: <the line, or a
# window of it>", then a caret under the place; Daft also says where before and why after.
_POINTER = re.compile(r"\n*LINE (\d+): (.*)\n( *)\^[ \t]*\n*")
_DAFT_WHERE = re.compile(r"^SQL error at Line: \d+, Column: \d+\n?")
WIDEST_LINE = 100  # characters of the query's line shown around the place the engine points at


def engine_error(
    message: str, query: str, statement: str | None = None, added: tuple[int, str] | None = None
) -> SqlQueryError:
    """An engine's error ``message`` about ``statement`` (the part of ``query`` it ran, by
    default all of it): the message without the engine's pointer, and the offset in ``query``
    the pointer marks. ``added``: text put into the statement at an offset before the engine
    ran it (the tables' scans); a pointer into that text marks no place of the query."""
    statement = query if statement is None else statement
    at, text_added = added or (0, "")
    ran = with_added(statement, added)
    text = _DAFT_WHERE.sub("", message.strip())
    pointer = _POINTER.search(text)
    position = None
    if pointer is not None:
        text = (text[: pointer.start()] + "\n" + text[pointer.end() :]).strip()
        text = re.sub(r"(^|\n)REASON: ", r"\1", text)
        position = _pointed(pointer, ran)
        if position is not None and position >= at:
            position = None if position < at + len(text_added) else position - len(text_added)
        if position is not None:
            position = query.index(statement) + position if statement in query else None
    return SqlQueryError(f"The SQL query failed: {text}", position)


def with_added(statement: str, added: tuple[int, str] | None) -> str:
    """``statement`` with ``added``'s text put in at its offset (as the engine ran it)."""
    if added is None:
        return statement
    at, text = added
    return statement[:at] + text + statement[at:]


def _pointed(pointer: re.Match[str], statement: str) -> int | None:
    """The offset in ``statement`` of the place ``pointer`` marks (None when the shown line is
    not found there)."""
    line_number, shown = int(pointer.group(1)), pointer.group(2)
    column = len(pointer.group(3)) - len(f"LINE {line_number}: ")
    lines = statement.split("\n")
    if not 0 < line_number <= len(lines) or column < 0:
        return None
    line = lines[line_number - 1]
    first = 0  # where in the line the shown text starts
    if shown.startswith("..."):  # a window of a long line
        first = line.find(shown[3:].removesuffix("..."))
        if first < 0:
            return None
        column -= 3
    elif not line.startswith(shown.removesuffix("...")):
        return None  # the engine shows a rendering of the query, not its text
    before = sum(len(x) + 1 for x in lines[: line_number - 1])
    return before + first + column


def in_user_terms(error: SqlQueryError, bound: BoundQuery, catalog: str | None) -> SqlQueryError:
    """``error`` (an engine's, about ``bound.text``) said about the user's query."""
    message = _VIEW_WORDS.sub("Table ", bound.in_user_names(str(error)))
    missing = _MISSING_TABLE.search(message)
    if missing is not None:
        name = next(g for g in missing.groupdict().values() if g)
        message = message.replace(missing.group(0), f"{name} is not a catalog table.")
        message += "\n" + _table_hint(name, catalog)
    position = None if error.position is None else bound.original_offset(error.position)
    return SqlQueryError(message + _marked_line(bound.original, position), position)


def _table_hint(name: str, catalog: str | None) -> str:
    """How to name the table the user may have meant, from the catalog's tables."""
    import difflib  # here: only a query naming a table that does not exist needs it

    from workbench.core.ops.names import catalog_names

    tables = catalog_names(catalog).tables
    wanted = name.lower()
    last_parts = {t.rsplit(".", 1)[-1].lower() for t in tables}
    close = set(difflib.get_close_matches(wanted.rsplit(".", 1)[-1], last_parts, 3))
    shown = [t for t in tables if t.rsplit(".", 1)[-1].lower() in close]
    if shown:
        return f"Name catalog tables as namespace.table: did you mean {', '.join(shown)}?"
    return "Name catalog tables as namespace.table; dc.list_tables(namespace) lists a namespace's."


def _marked_line(query: str, position: int | None) -> str:
    """The query's line holding ``position``, with a caret under it (nothing without one)."""
    if position is None or not 0 <= position <= len(query):
        return ""
    start = query.rfind("\n", 0, position) + 1
    end = query.find("\n", position)
    line = query[start : len(query) if end < 0 else end]
    column = position - start
    if len(line) > WIDEST_LINE:  # a window around the place
        first = max(0, min(column - WIDEST_LINE // 2, len(line) - WIDEST_LINE))
        shown = line[first : first + WIDEST_LINE]
        prefix = "..." if first else ""
        suffix = "..." if first + WIDEST_LINE < len(line) else ""
        line, column = prefix + shown + suffix, column - first + len(prefix)
    label = f"LINE {query.count(chr(10), 0, start) + 1}: "
    return f"\n\n{label}{line}\n{' ' * (len(label) + column)}^"
