"""Small HTML pieces the widgets share: a preview table, a title, an error line."""

from __future__ import annotations

from datetime import datetime, timezone
from html import escape
from typing import Any


def preview_html(frame: Any, title: str, css_class: str = "wb-preview") -> str:
    """A DataFrame as a compact scrollable HTML table under a title."""
    table = frame.to_html(index=False, border=0, max_cols=30, na_rep="∅")
    return (
        f"<div class='{css_class}'><b>{escape(title)}</b>"
        f"<div style='max-height:340px;overflow:auto'>{table}</div></div>"
    )


def error_html(error: Exception) -> str:
    """A widget-friendly error line with the error's (fix-giving) message."""
    return (
        "<div class='wb-error' style='color:#b00020'>"
        f"{escape(type(error).__name__)}: {escape(str(error))}</div>"
    )


def when(ns: int) -> str:
    """A commit time (ns since epoch) as local ISO text to the millisecond."""
    moment = datetime.fromtimestamp(ns / 1e9, tz=timezone.utc).astimezone()
    return moment.isoformat(sep=" ", timespec="milliseconds")


def text(value: Any) -> str:
    """A cell value as text, with missing values (None, NaN) as empty text."""
    return value if isinstance(value, str) else ""
