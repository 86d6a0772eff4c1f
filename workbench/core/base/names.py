"""Validation of catalog, namespace, table and tag names, so no name can reach outside a root.

Namespace and table names are used verbatim as folder names (``<root>/<namespace>/<table>``)
and a tag as ``<tag>.json``; everything else the layout stores (incarnations, claims, markers)
has a fixed-length name. So a name may be as long as the longest file name the catalog's storage
holds, less any suffix the layout adds to it.
"""

from __future__ import annotations

import re

from workbench.core.base.errors import InvalidNameError

MAIN = "main"  # the name of a catalog's own line, which every catalog has (never a branch's)
MAX_NAME_LENGTH = 255  # NAME_MAX of common local filesystems; object stores allow more
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
# Branch names may also hold single dots between other characters (``release-1.2``): they name
# folders of the catalog's own metadata, never a namespace.table of SQL or a dc:// URL.
_DOTTED_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)*")


def validate_name(
    kind: str, name: object, max_length: int = MAX_NAME_LENGTH, *, dots: bool = False
) -> str:
    """Return ``name`` if it is a legal ``kind`` name, else raise ``InvalidNameError``
    (``dots``: single dots between other characters are allowed too)."""
    rule = _DOTTED_NAME if dots else _NAME
    if not isinstance(name, str) or not rule.fullmatch(name):
        allowed = (
            "letters, digits, '_', '-' or single dots between them"
            if dots
            else ("letters, digits, '_' or '-'")
        )
        raise InvalidNameError(
            f"Invalid {kind} name {name!r}: use {allowed}, starting with a letter or digit "
            f"(names starting with '_' are reserved), e.g. 'my_{kind}'."
        )
    if len(name) > max_length:
        raise InvalidNameError(
            f"The {kind} name {name[:20]}... is {len(name)} characters long; at most {max_length} "
            "fit in this catalog's storage layout. Use a shorter name."
        )
    return name


def split_qualified(table: object, namespace: str | None) -> tuple[object, str | None]:
    """``("ns.t", None)`` as ``("t", "ns")``: every call that takes a table and a namespace also
    takes the table as ``namespace.table`` (names hold no dots, so the split is unambiguous)."""
    if not isinstance(table, str) or table.count(".") != 1:
        return table, namespace
    named, _, short = table.partition(".")
    if namespace is not None and namespace != named:
        raise InvalidNameError(
            f"Table {table!r} names namespace {named!r}, but namespace={namespace!r} was given; "
            f"pass {short!r} with namespace={namespace!r}, or {table!r} alone."
        )
    return short, named


def validate_branch_name(name: object, max_length: int = MAX_NAME_LENGTH) -> str:
    """Return ``name`` if it is a legal branch name (dots allowed, as in ``release-1.2``)."""
    return validate_name("branch", name, max_length, dots=True)
