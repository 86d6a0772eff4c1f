"""Gallery: a media table's files as thumbnails, players and snippets, captioned with their
predictions and filtered by predicted label, score and kind."""

from __future__ import annotations

from html import escape
from typing import Any

import ipywidgets as widgets
import pyarrow as pa

import workbench.api as dc
from workbench.frontend.views import MEDIA_URI_PROPERTY as URI_PROPERTY
from workbench.frontend.views import media_cells_of, media_columns
from workbench.widgets.render import error_html

PROVENANCE_PREFIXES = ("_model_", "_input_")  # dc.infer's bookkeeping columns, not predictions
CAPTION_VALUE_CHARS = 40
ANY = ""
WHOLE_LABEL = {"description_width": "initial"}  # a description as wide as its text, never cut


def prediction_columns(schema: pa.Schema) -> list[str]:
    """The columns a media table gained beyond its own (predictions), bookkeeping left out."""
    own = set(media_columns())
    return [
        f.name for f in schema if f.name not in own and not f.name.startswith(PROVENANCE_PREFIXES)
    ]


def _pick(schema: pa.Schema, columns: list[str], preferred: str, test: Any) -> str | None:
    """``preferred`` if it is a prediction of the right type, else the first that is."""
    fitting = [c for c in columns if test(schema.field(c).type)]
    return preferred if preferred in fitting else next(iter(fitting), None)


class Gallery(widgets.VBox):
    """Browse a media table's files with their predictions as captions; filter by a label
    column, a minimum score and the kind of file."""

    def __init__(
        self,
        table: str,
        namespace: str | None = None,
        catalog: str | None = None,
        label: str | None = None,
        score: str | None = None,
        page_size: int = 24,
    ):
        self.table, self.namespace, self.catalog = table, namespace, catalog
        self.page_size = page_size
        self.page = 0
        info = dc.get_table(table, namespace, catalog=catalog)
        self.uri_column = info.properties.get(URI_PROPERTY)
        if self.uri_column is None:
            raise dc.NotAMediaTableError(
                f"{info.namespace}.{info.name} is not a media table (no {URI_PROPERTY} "
                "property); build one with dc.import_media(folder, table)"
            )
        self.title = f"{info.namespace}.{info.name}"
        self.data: pa.Table = dc.read(table, namespace, catalog=catalog, read_as="pyarrow")
        self.predictions = prediction_columns(self.data.schema)
        schema = self.data.schema
        self.label_column = label or _pick(schema, self.predictions, "label", pa.types.is_string)
        self.score_column = score or _pick(schema, self.predictions, "score", pa.types.is_floating)
        self.kind_picker = widgets.Dropdown(
            options=[("any kind", ANY), *((k, k) for k in self._distinct("kind"))],
            description="kind",
            style=WHOLE_LABEL,
            layout={"width": "auto"},
        )
        labels = self._distinct(self.label_column) if self.label_column else []
        self.label_picker = widgets.Dropdown(
            options=[("any", ANY), *((str(v), v) for v in labels)],
            description=self.label_column or "label",
            disabled=not labels,
            style=WHOLE_LABEL,
            layout={"width": "auto"},
        )
        self.label_picker.add_class("wb-gallery-label")
        low, high = self._range(self.score_column)
        self.score_slider = widgets.FloatSlider(
            value=low,
            min=low,
            max=high,
            step=(high - low) / 100,
            description=f"{self.score_column or 'score'} ≥",
            disabled=self.score_column is None,
            continuous_update=False,
            style=WHOLE_LABEL,
        )
        self.previous_button = widgets.Button(description="◀", layout={"width": "50px"})
        self.next_button = widgets.Button(description="▶", layout={"width": "50px"})
        self.page_label = widgets.Label(layout={"width": "auto", "flex": "0 0 auto"})
        self.grid = widgets.HTML()
        self.grid.add_class("wb-gallery-grid")
        for control in (self.kind_picker, self.label_picker, self.score_slider):
            control.observe(lambda _: self.show_page(0), names="value")
        self.previous_button.on_click(lambda _: self.show_page(self.page - 1))
        self.next_button.on_click(lambda _: self.show_page(self.page + 1))
        controls = widgets.HBox(
            [
                self.kind_picker,
                self.label_picker,
                self.score_slider,
                self.previous_button,
                self.next_button,
                self.page_label,
            ],
            layout={"flex_flow": "row wrap", "align_items": "center"},  # wrap, never cut
        )
        super().__init__([controls, self.grid])
        self.add_class("wb-gallery")
        self.show_page(0)

    def _distinct(self, column: str | None) -> list[Any]:
        if column is None or column not in self.data.column_names:
            return []
        values = self.data.column(column).unique().drop_null().to_pylist()
        return sorted(values, key=str)

    def _range(self, column: str | None) -> tuple[float, float]:
        """The slider's bounds: the column's smallest and largest values (0..1 if none)."""
        import pyarrow.compute as pc

        if column is None:
            return 0.0, 1.0
        bounds = pc.min_max(self.data.column(column))
        low, high = bounds["min"].as_py(), bounds["max"].as_py()
        if low is None or high is None or low == high:
            return (low or 0.0), (low or 0.0) + 1.0
        return float(low), float(high)

    def chosen(self) -> pa.Table:
        """The rows the filters let through, in table order."""
        import pyarrow.compute as pc

        rows = self.data
        if self.kind_picker.value != ANY:
            rows = rows.filter(pc.field("kind") == self.kind_picker.value)
        if self.label_column and self.label_picker.value != ANY:
            rows = rows.filter(pc.field(self.label_column) == self.label_picker.value)
        if self.score_column and self.score_slider.value > self.score_slider.min:
            rows = rows.filter(pc.field(self.score_column) >= self.score_slider.value)
        return rows

    def show_page(self, page: int) -> None:
        """Render page ``page`` of the filtered rows (clamped to the pages there are)."""
        try:
            rows = self.chosen()
            pages = max(1, -(-rows.num_rows // self.page_size))
            self.page = min(max(page, 0), pages - 1)
            shown = rows.slice(self.page * self.page_size, self.page_size).to_pylist()
            self.page_label.value = (
                f"{rows.num_rows} of {self.data.num_rows} files · page {self.page + 1}/{pages}"
            )
            self.grid.value = self._grid_html(shown)
        except dc.WorkbenchError as error:
            self.grid.value = error_html(error)

    def _grid_html(self, rows: list[dict[str, Any]]) -> str:
        if not rows:
            return "<div class='wb-gallery-empty'>no file matches these filters</div>"
        cells = media_cells_of(self.table, self.namespace, self.catalog, rows, self.uri_column)
        cards = "".join(
            f"<figure class='wb-gallery-card' style='margin:0;padding:6px;border:1px solid #ddd;"
            f"border-radius:4px'>{cell}<figcaption style='font-size:11px'>"
            f"<b>{escape(str(row.get('key')))}</b>{self._caption(row)}</figcaption></figure>"
            for row, cell in zip(rows, cells, strict=True)
        )
        return (
            f"<div><b>{escape(self.title)}</b><div style='display:grid;gap:8px;"
            f"grid-template-columns:repeat(auto-fill,minmax(150px,1fr))'>{cards}</div></div>"
        )

    def _caption(self, row: dict[str, Any]) -> str:
        parts = []
        for column in self.predictions:
            value = row.get(column)
            if value is None or isinstance(value, (list, bytes)):
                continue  # embeddings and blobs make no caption
            shown = f"{value:.3g}" if isinstance(value, float) else str(value)
            parts.append(
                f"<div class='wb-caption-{escape(column)}'>{escape(column)}: "
                f"{escape(shown[:CAPTION_VALUE_CHARS])}</div>"
            )
        return "".join(parts)
