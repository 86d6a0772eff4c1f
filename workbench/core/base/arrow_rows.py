"""Rows (dicts of JSON values) as an Arrow table of a given schema, read by Arrow's own JSON
reader: pyarrow's conversion of Python objects imports pandas to look for its types, which a
commit should not pay for (a pyarrow-only write never loads pandas)."""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from workbench.core.base.json_text import standard_json

if TYPE_CHECKING:
    import pyarrow as pa


def arrow_rows(rows: Sequence[dict[str, Any]], schema: pa.Schema) -> pa.Table:
    """``rows`` in ``schema`` (its columns in order; missing values are null)."""
    import pyarrow.json as pajson

    if not rows:
        return schema.empty_table()
    lines = "\n".join(standard_json(r) for r in rows).encode()
    options = pajson.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore")
    table = pajson.read_json(io.BytesIO(lines), parse_options=options)
    return table.select(schema.names).cast(schema)
