"""Whether a cursor in Python code is inside a string argument of a call, and of which call,
argument and keyword: read by a small scanner of brackets, strings and comments, since code
being typed (an unterminated string above all) does not tokenize."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_CALLEE = re.compile(r"([A-Za-z_][\w]*(?:\s*\.\s*[A-Za-z_]\w*)*)\s*$")
CALLEE_REACH = 256  # how far before a "(" its callee's dotted name is looked for
_KEYWORD = re.compile(r"^\s*([A-Za-z_]\w*)\s*=(?!=)\s*[rRbBuUfF]{0,2}$")
_PREFIX = re.compile(r"[rRbBuUfF]{0,2}$")
_STRING_ARGUMENT = re.compile(r"""^\s*(?:([A-Za-z_]\w*)\s*=(?!=)\s*)?(['"])([^'"\\]*)\2\s*$""")


@dataclass
class _Bracket:
    """An open bracket: its character, the callee before it (for ``(``), the argument index and
    the text of the argument being written, and the string arguments already written."""

    char: str
    callee: str | None
    index: int = 0
    argument: str = ""
    given: dict[str | int, str] = field(default_factory=dict)


@dataclass(frozen=True)
class CallString:
    """The cursor is in a string passed to ``callee`` as positional argument ``index`` (or as
    ``keyword``); ``typed`` is the string's text so far, ``given`` the string arguments written
    before it (by keyword or position)."""

    callee: str
    index: int
    keyword: str | None
    typed: str
    given: dict[str | int, str]


def _close_argument(top: _Bracket) -> None:
    """Remember the argument just ended if it was a plain string (``catalog="lake"``)."""
    match = _STRING_ARGUMENT.match(top.argument)
    if match:
        top.given[match.group(1) or top.index] = match.group(3)


def _string_end(code: str, start: int, quote: str) -> int | None:
    """The index after the string that opens at ``start`` with ``quote``; None when it runs to
    the end of ``code`` (the cursor is inside it)."""
    position = start + len(quote)
    while position < len(code):
        char = code[position]
        if char == "\\":
            position += 2
            continue
        if code.startswith(quote, position):
            return position + len(quote)
        if char == "\n" and len(quote) == 1:
            return position  # an unterminated one-line string ends with its line
        position += 1
    return None


def call_string(code: str) -> CallString | None:
    """The call string argument the end of ``code`` is in, or None."""
    stack: list[_Bracket] = []
    position = 0
    while position < len(code):
        char = code[position]
        if char == "#":
            newline = code.find("\n", position)
            if newline < 0:
                return None  # in a comment
            position = newline
            continue
        if char in "'\"":
            quote = char * 3 if code.startswith(char * 3, position) else char
            end = _string_end(code, position, quote)
            if end is None:
                return _inside(stack, code, position, quote)
            if stack:
                stack[-1].argument += code[position:end]
            position = end
            continue
        if char in "([{":
            callee = None
            if char == "(":
                match = _CALLEE.search(code, max(0, position - CALLEE_REACH), position)
                callee = re.sub(r"\s+", "", match.group(1)) if match else None
            stack.append(_Bracket(char, callee))
        elif char in ")]}":
            if stack:
                stack.pop()
        elif stack and char == ",":
            _close_argument(stack[-1])
            stack[-1].index += 1
            stack[-1].argument = ""
        elif stack:
            stack[-1].argument += char
        position += 1
    return None


def _inside(stack: list[_Bracket], code: str, start: int, quote: str) -> CallString | None:
    """The call string for a string opened at ``start`` and still open at the end of code."""
    if not stack or stack[-1].char != "(" or not stack[-1].callee:
        return None
    top = stack[-1]
    lead = _PREFIX.search(top.argument)
    assert lead is not None
    if "b" in lead.group(0).lower() or "f" in lead.group(0).lower():
        return None  # bytes and f-strings hold no names to complete
    keyword = _KEYWORD.match(top.argument)
    if top.argument[: lead.start()].strip() and not keyword:
        return None  # the string is part of an expression, not the argument itself
    typed = code[start + len(quote) :]
    return CallString(
        top.callee, top.index, keyword.group(1) if keyword else None, typed, dict(top.given)
    )
