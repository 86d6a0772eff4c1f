"""Small pieces the widgets share: an error line, a status label, times and durations as text."""

from __future__ import annotations

from datetime import datetime, timezone
from html import escape
from typing import Any

STATUS_COLOURS = {
    "running": "#1565c0",
    "succeeded": "#2e7d32",
    "failed": "#c62828",
    "abandoned": "#757575",
}


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


def chart_times(ns: Any) -> Any:
    """Times (ns since the epoch) as a plotly date axis draws them, in the same local time as
    ``when``: local wall-clock ms as floats (plotly.js has no time zones and reads a number on a
    date axis as UTC ms; ns integers would be drawn as numbers near 1.8e18)."""
    import pandas as pd
    from dateutil.tz import tzlocal

    times = pd.to_datetime(pd.Series(ns, dtype="int64"), unit="ns", utc=True)
    wall = times.dt.tz_convert(tzlocal()).dt.tz_localize(None)
    return wall.to_numpy().astype("datetime64[ms]").astype("int64").astype("float64")


TIME_AXIS = {"type": "date", "title": "local time", "hoverformat": "%Y-%m-%d %H:%M:%S.%L"}


def text(value: Any) -> str:
    """A cell value as text, with missing values (None, NaN) as empty text."""
    return value if isinstance(value, str) else ""


def status_html(status: str) -> str:
    """A run or step status as a coloured label, so outcomes read at a glance."""
    colour = STATUS_COLOURS.get(status, "#424242")
    return (
        f"<span class='wb-status wb-status-{escape(status)}' style='color:#fff;"
        f"background:{colour};padding:0 6px;border-radius:3px'>{escape(status)}</span>"
    )


def duration(ns: float | None) -> str:
    """A duration in ns as short text (ms, s, min, h); empty when unknown."""
    if ns is None or ns != ns:  # None or NaN
        return ""
    seconds = ns / 1e9
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    if seconds < 3600:
        return f"{int(seconds // 60)} min {int(seconds % 60):02d} s"
    return f"{int(seconds // 3600)} h {int(seconds % 3600 // 60):02d} min"
