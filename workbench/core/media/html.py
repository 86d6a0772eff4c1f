"""``dc.show``: a table's first rows for notebooks, with image thumbnails, audio players and
text snippets for media tables (plain text elsewhere)."""

from __future__ import annotations

import base64
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from workbench.core.base.arguments import row_filter, row_filter_on, text, whole_number
from workbench.core.base.dependencies import require
from workbench.core.media.columns import AUDIO, IMAGE, TEXT, URI_PROPERTY
from workbench.core.storage.fetch import options_for, read_many

THUMBNAIL_PX = 96
MAX_IMAGE_BYTES = 20 * 1024**2  # larger images are not decoded for a thumbnail
MAX_AUDIO_BYTES = 1024**2  # larger clips are not inlined into the page
MAX_TEXT_BYTES = 1024**2
SNIPPET_CHARS = 160
CELL_CHARS = 48  # longer values are cut in the table


@dataclass(frozen=True)
class Preview:
    """The first rows of a table, with a rendered media cell per row for media tables."""

    title: str
    total: int
    columns: Sequence[str]
    rows: Sequence[Mapping[str, Any]]
    media: Sequence[str] | None = None  # one HTML cell per row; None for other tables

    @property
    def caption(self) -> str:
        """``first N of M rows`` (or ``all M rows``)."""
        shown = len(self.rows)
        return (
            f"all {self.total} rows"
            if shown == self.total
            else f"first {shown} of {self.total} rows"
        )

    def __repr__(self) -> str:
        widths = {c: max([len(c)] + [len(_cut(r[c])) for r in self.rows]) for c in self.columns}
        lines = ["  ".join(c.ljust(widths[c]) for c in self.columns)]
        lines += ["  ".join(_cut(r[c]).ljust(widths[c]) for c in self.columns) for r in self.rows]
        return f"{self.title}: {self.caption}\n" + "\n".join(lines)

    def _repr_html_(self) -> str:
        head = ("<th>preview</th>" if self.media is not None else "") + "".join(
            f"<th>{escape(c)}</th>" for c in self.columns
        )
        body = []
        for i, row in enumerate(self.rows):
            cells = f"<td>{self.media[i]}</td>" if self.media is not None else ""
            cells += "".join(f"<td>{escape(_cut(row[c]))}</td>" for c in self.columns)
            body.append(f"<tr>{cells}</tr>")
        return (
            f"<div><b>{escape(self.title)}</b> <small>{escape(self.caption)}</small>"
            f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
        )


def _cut(value: Any) -> str:
    """A cell value as short text."""
    shown = "" if value is None else str(value)
    return shown if len(shown) <= CELL_CHARS else shown[: CELL_CHARS - 1] + "…"


def show(
    table: str,
    namespace: str | None = None,
    limit: int = 20,
    catalog: str | None = None,
    as_of: Any = None,
    where: Any = None,
) -> Preview:
    """A preview of a table's first ``limit`` rows (``where`` a pyarrow expression keeping some,
    ``as_of`` a past catalog state): in a notebook an HTML table, with a thumbnail, audio
    player or text snippet per row when it is a media table."""
    from workbench.core.catalog.locations import locate
    from workbench.core.io.reader import read
    from workbench.core.ops.tables import get_table

    limit = whole_number("limit", limit, minimum=1)
    text("table", table, optional=False)
    row_filter("where", where)
    info = get_table(table, namespace, catalog, as_of=as_of)
    if where is None:
        data = read(table, namespace, catalog, read_as="pyarrow", as_of=as_of, limit=limit)
    else:
        data = read(table, namespace, catalog, read_as="pyarrow", as_of=as_of)
        row_filter_on("where", where, data.schema, f"{info.namespace}.{info.name}")
        data = data.filter(where)
    rows = data.slice(0, limit).to_pylist()
    columns = [f.name for f in info.schema.arrow] if info.schema is not None else []
    uri_column = info.properties.get(URI_PROPERTY)
    media = None
    if uri_column in columns:
        storage = locate(table, namespace, catalog).catalog.storage
        media = media_cells(rows, uri_column, storage)
    title = f"{info.namespace}.{info.name}"
    shown = data.num_rows if where is not None else info.row_count
    return Preview(title, shown, columns or (list(rows[0]) if rows else []), rows, media)


def _kind(row: Mapping[str, Any]) -> str | None:
    """The row's kind column, else the top of its content type."""
    kind = row.get("kind")
    return kind or str(row.get("content_type") or "").split("/")[0] or None


def media_cells(rows: Sequence[Mapping[str, Any]], uri_column: str, storage: Any) -> list[str]:
    """One HTML cell per row; the files shown are fetched together, on threads."""
    limits = {IMAGE: MAX_IMAGE_BYTES, AUDIO: MAX_AUDIO_BYTES, TEXT: MAX_TEXT_BYTES}
    wanted = [
        i
        for i, row in enumerate(rows)
        if row.get(uri_column) and (row.get("size") or 0) <= limits.get(_kind(row), -1)
    ]
    uris = [rows[i][uri_column] for i in wanted]
    options = options_for(uris[0], storage) if uris else {}
    fetched = dict(zip(wanted, read_many(uris, options or None, missing_ok=True), strict=True))
    return [_cell(row, fetched.get(i), i in fetched) for i, row in enumerate(rows)]


def _cell(row: Mapping[str, Any], data: bytes | None, fetched: bool) -> str:
    """A thumbnail, player or snippet; a note when the file is missing or too big."""
    if not fetched:
        return "<small>no preview</small>"
    if data is None:
        return "<small style='color:#b00020'>file missing</small>"
    kind = _kind(row)
    if kind == IMAGE:
        return _thumbnail(data) or "<small>unreadable image</small>"
    if kind == AUDIO:
        mime = str(row.get("content_type") or "audio/wav").replace("audio/x-wav", "audio/wav")
        return f"<audio controls preload='none' src='{_data_uri(mime, data)}'></audio>"
    snippet = data[: SNIPPET_CHARS * 4].decode("utf-8", errors="replace")[:SNIPPET_CHARS]
    more = "…" if len(data) > len(snippet.encode()) else ""
    return f"<div style='max-width:28em;white-space:pre-wrap'>{escape(snippet)}{more}</div>"


def _thumbnail(data: bytes) -> str | None:
    """An ``<img>`` of a small PNG (JPEG for photos) thumbnail, or None if Pillow cannot read it."""
    image_module = require("PIL.Image", "Image thumbnails")
    try:
        with image_module.open(io.BytesIO(data)) as image:
            image.thumbnail((THUMBNAIL_PX, THUMBNAIL_PX))
            photo = image.mode in ("RGB", "L", "CMYK", "YCbCr")
            small = image.convert("RGB" if photo else "RGBA")
    except (OSError, ValueError, image_module.DecompressionBombError):
        return None
    out = io.BytesIO()
    small.save(out, format="JPEG" if photo else "PNG", quality=80)
    mime = "image/jpeg" if photo else "image/png"
    return f"<img src='{_data_uri(mime, out.getvalue())}' style='max-height:{THUMBNAIL_PX}px'>"


def _data_uri(mime: str, data: bytes) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode()}"
