"""Where a cursor is in SQL text, read without a parser (the text being typed rarely parses): a
table name after FROM, JOIN, INTO or UPDATE (and in a FROM list), a column of a named table after
``t.``, or a column of the statement's tables elsewhere; and which tables the statement names,
under which aliases."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Literals and comments, closed or running to the end of the text.
_SKIPPED = re.compile(r"'(?:[^']|'')*(?:'|$)|--[^\n]*|/\*.*?(?:\*/|$)", re.DOTALL)
_TABLE_WORDS = {"FROM", "JOIN", "INTO", "UPDATE", "TABLE"}
_CLAUSE_WORDS = {"SELECT", "FROM", "WHERE", "GROUP", "ORDER", "HAVING", "ON", "SET", "VALUES"}
_NOT_ALIASES = {
    "WHERE", "JOIN", "ON", "LEFT", "RIGHT", "INNER", "OUTER", "FULL", "CROSS", "NATURAL", "GROUP",
    "ORDER", "LIMIT", "HAVING", "UNION", "EXCEPT", "INTERSECT", "USING", "SET", "VALUES", "AS",
    "WINDOW", "QUALIFY", "OFFSET", "ANTI", "SEMI", "ASOF", "POSITIONAL", "LATERAL",
}  # fmt: skip
_NAME = r"[A-Za-z0-9][A-Za-z0-9_-]*"
_ALIAS = rf"(?:\s+(?:AS\s+)?(?!(?:{'|'.join(_NOT_ALIASES)})\b)([A-Za-z_]\w*))?"
_REFERENCE = re.compile(
    rf"\b(?:FROM|JOIN|UPDATE|INTO)\s+((?:{_NAME}\s*\.\s*){{1,2}}{_NAME}){_ALIAS}",
    re.IGNORECASE,
)
_LISTED = re.compile(rf"\s*,\s*((?:{_NAME}\s*\.\s*){{1,2}}{_NAME}){_ALIAS}", re.IGNORECASE)
_FRAGMENT = re.compile(r"[A-Za-z0-9_.\-]*$")
# Quoted identifiers, the last maybe still open ("sales"."ord), found from a statement's start.
_QUOTED = re.compile(r'"[^"]*(?:"|$)|`[^`]*(?:`|$)')
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")
_LAST_TOKEN = re.compile(r"([A-Za-z_]\w*|[^\w\s])\s*$")
_TOKENS = re.compile(r"[A-Za-z_]\w*|[()]")


@dataclass(frozen=True)
class SqlPlace:
    """What the cursor is on: ``kind`` ``table`` (``fragment`` is a table name typed so far),
    ``column`` (of ``qualifier`` if one was typed, else of the statement's tables) or ``none``
    (inside a literal or comment, or naming an alias); ``tables`` maps each name the statement
    uses for a table (alias, ``ns.t``, ``t``) to its ``ns.t`` (or ``cat.ns.t``)."""

    kind: str
    fragment: str
    qualifier: str | None = None
    tables: dict[str, str] = field(default_factory=dict)


def blank_skipped(text: str) -> str:
    """``text`` with literals and comments replaced by spaces (offsets kept)."""
    return _SKIPPED.sub(lambda m: " " * len(m.group(0)), text)


def _statement(text: str, cursor: int) -> tuple[str, str]:
    """The blanked statement around ``cursor``: its text before and after the cursor."""
    blank = blank_skipped(text)
    start = blank.rfind(";", 0, cursor) + 1
    end = blank.find(";", cursor)
    return blank[start:cursor], blank[cursor : end if end >= 0 else len(blank)]


def _in_skipped(text: str) -> bool:
    """True when the end of ``text`` is inside a literal or a comment."""
    found = list(_SKIPPED.finditer(text))
    last = found[-1] if found else None
    if last is None or last.end() != len(text):
        return False
    token = last.group(0)
    closed = (token.startswith("'") and len(token) > 1 and token.endswith("'")) or (
        token.startswith("/*") and token.endswith("*/") and len(token) > 3
    )
    return not closed


def named_tables(statement: str) -> dict[str, str]:
    """Each name the statement gives a table (alias, ``ns.t``, bare ``t``) -> ``ns.t`` (or
    ``cat.ns.t`` as written)."""
    found: dict[str, str] = {}

    def note(reference: str, alias: str | None) -> None:
        qualified = re.sub(r"\s+", "", reference)
        found[qualified] = qualified
        found.setdefault(qualified.rsplit(".", 1)[-1], qualified)
        if alias:
            found[alias] = qualified

    for match in _REFERENCE.finditer(statement):
        note(match.group(1), match.group(2))
        position = match.end()
        while listed := _LISTED.match(statement, position):
            note(listed.group(1), listed.group(2))
            position = listed.end()
    return found


def _clause(before: str) -> str | None:
    """The clause keyword (upper case) the end of ``before`` is in, at the outer level."""
    depth = 0
    for token in reversed(_TOKENS.findall(before)):
        if token == ")":
            depth += 1
        elif token == "(":
            if depth == 0:
                return "("
            depth -= 1
        elif depth == 0 and token.upper() in _CLAUSE_WORDS | _TABLE_WORDS:
            return token.upper()
    return None


def sql_place(text: str, cursor: int) -> SqlPlace:
    """What completing at ``cursor`` in SQL ``text`` should offer."""
    if _in_skipped(text[:cursor]):
        return SqlPlace("none", "")
    before, after = _statement(text, cursor)
    fragment = _FRAGMENT.search(before).group(0)  # type: ignore[union-attr]
    tables = named_tables(before + after)
    head = before[: len(before) - len(fragment)]
    last = _LAST_TOKEN.search(head)
    previous = last.group(1).upper() if last else ""
    if previous == "AS":
        return SqlPlace("none", fragment, tables=tables)
    if _names_table(head):
        return SqlPlace("table", fragment, tables=tables)
    quoted = _quoted_name(before)
    if quoted != fragment and _names_table(before[: len(before) - len(quoted)]):
        return SqlPlace("table", quoted, tables=tables)  # a name with quoted parts
    fragment = fragment.rsplit("-", 1)[-1]  # in expressions '-' is minus
    if "." in fragment:
        qualifier, _, fragment = fragment.rpartition(".")
        return SqlPlace("column", fragment, qualifier, tables)
    return SqlPlace("column", fragment, tables=tables)


def _names_table(head: str) -> bool:
    """Whether a name right after ``head`` names a table: after FROM, JOIN, INTO, UPDATE,
    TABLE, or a comma of a FROM list."""
    last = _LAST_TOKEN.search(head)
    previous = last.group(1).upper() if last else ""
    return previous in _TABLE_WORDS or (previous == "," and _clause(head) == "FROM")


def _quoted_name(before: str) -> str:
    """The dotted name ``before`` ends with, its parts plain or quoted (``"sales"."ord``)."""
    quoted_parts = {m.end(): m.start() for m in _QUOTED.finditer(before)}
    start = len(before)
    while start > 0:
        if start in quoted_parts:  # a quoted part (closed, or still open at the end) ends here
            start = quoted_parts[start]
        elif before[start - 1] in _NAME_CHARS:
            start -= 1
        else:
            break
    return before[start:]
