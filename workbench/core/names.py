"""Validation of catalog, namespace and table names, so no name can reach outside a catalog root."""

from __future__ import annotations

import re

from workbench.core.errors import InvalidNameError

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,254}")


def validate_name(kind: str, name: object) -> str:
    """Return ``name`` if it is a legal ``kind`` name, else raise ``InvalidNameError``."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise InvalidNameError(
            f"Invalid {kind} name {name!r}: use 1-255 letters, digits, '_' or '-', starting with a "
            f"letter or digit (names starting with '_' are reserved), e.g. 'my_{kind}'."
        )
    return name
