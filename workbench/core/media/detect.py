"""Content types from a file's bytes (never its name), with Google's magika model."""

from __future__ import annotations

from functools import cache
from typing import Any

from workbench.core.base.dependencies import require
from workbench.core.media.columns import AUDIO, IMAGE, OTHER, TEXT


@cache
def _magika() -> Any:
    """One magika model per process (it is stateless; loading it takes ~0.5 s)."""
    return require("magika", "Detecting content types").Magika()


def detect(data: bytes) -> tuple[str, str]:
    """(kind, MIME type) of a file's bytes: kind is image, audio, text or other."""
    if not data:
        return OTHER, "application/x-empty"
    output = _magika().identify_bytes(data).output
    if output.group in (IMAGE, AUDIO):
        return output.group, output.mime_type
    return (TEXT if output.is_text else OTHER), output.mime_type
