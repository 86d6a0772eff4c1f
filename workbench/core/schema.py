"""Table schemas: Arrow fields plus merge keys and future defaults (Delta field metadata)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Union

from workbench.core.errors import SchemaValidationError

if TYPE_CHECKING:
    import pyarrow as pa

MERGE_KEY_META = b"workbench.mergeKey"
FUTURE_DEFAULT_META = b"workbench.futureDefault"
TIMEZONE_META = b"workbench.timezone"
PANDAS_DTYPE_META = b"workbench.pandasDtype"


@dataclass(frozen=True)
class Field:
    """One column: an Arrow field, whether it is a merge key, and its default for new rows.

    ``timezone`` and ``pandas_dtype`` remember what the stored type cannot say (a zone other
    than UTC; a pandas dtype), so reads give the column back as it was written.
    """

    arrow: pa.Field
    is_merge_key: bool = False
    future_default: Any = None
    timezone: str | None = None
    pandas_dtype: str | None = None

    @classmethod
    def of(cls, field: pa.Field, is_merge_key: bool = False, future_default: Any = None) -> Field:
        """Describe a column; ``future_default`` fills it in rows written without it."""
        if future_default is not None:
            try:
                json.dumps(future_default)
            except TypeError as e:
                raise SchemaValidationError(
                    f"future_default {future_default!r} of field {field.name!r} is not a plain "
                    "number, string or boolean; pass one of those."
                ) from e
        return cls(field.remove_metadata(), bool(is_merge_key), future_default)

    @classmethod
    def from_arrow(cls, field: pa.Field) -> Field:
        """Read a field back from Arrow, decoding workbench metadata."""
        meta = field.metadata or {}
        default = meta.get(FUTURE_DEFAULT_META)
        zone, note = meta.get(TIMEZONE_META), meta.get(PANDAS_DTYPE_META)
        return cls(
            field.remove_metadata(),
            meta.get(MERGE_KEY_META) == b"true",
            json.loads(default) if default is not None else None,
            zone.decode() if zone is not None else None,
            note.decode() if note is not None else None,
        )

    @property
    def name(self) -> str:
        """Column name."""
        return self.arrow.name

    @property
    def type(self) -> pa.DataType:
        """Arrow data type."""
        return self.arrow.type

    def to_arrow(self) -> pa.Field:
        """Arrow field with merge-key and default metadata attached."""
        meta = {}
        if self.is_merge_key:
            meta[MERGE_KEY_META] = b"true"
        if self.future_default is not None:
            meta[FUTURE_DEFAULT_META] = json.dumps(self.future_default).encode()
        if self.timezone is not None:
            meta[TIMEZONE_META] = self.timezone.encode()
        if self.pandas_dtype is not None:
            meta[PANDAS_DTYPE_META] = self.pandas_dtype.encode()
        return self.arrow.with_metadata(meta) if meta else self.arrow

    def with_type(self, data_type: pa.DataType) -> Field:
        """Same field with another type (used when a type is widened)."""
        return replace(self, arrow=self.arrow.with_type(data_type))


SchemaLike = Union["Schema", "pa.Schema", Sequence[Union[Field, "pa.Field"]]]


class Schema:
    """An ordered set of fields; the fields marked ``is_merge_key`` identify a row."""

    def __init__(self, fields: Iterable[Field]):
        self.fields: tuple[Field, ...] = tuple(fields)
        names = [f.name for f in self.fields]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise SchemaValidationError(f"Schema has duplicate field names {dupes}; rename them.")

    @classmethod
    def of(cls, schema: SchemaLike) -> Schema:
        """Build a schema from a pyarrow schema or a list of ``Field``/pyarrow fields."""
        import pyarrow as pa

        if isinstance(schema, Schema):
            return schema
        if isinstance(schema, pa.Schema):
            return cls(Field.from_arrow(f) for f in schema)
        if isinstance(schema, (list, tuple)):
            return cls(f if isinstance(f, Field) else Field.from_arrow(f) for f in schema)
        raise SchemaValidationError(
            f"Cannot build a Schema from {type(schema).__name__}; pass a pyarrow.Schema or a list "
            "of dc.Field / pyarrow.Field."
        )

    @property
    def names(self) -> list[str]:
        """Column names in order."""
        return [f.name for f in self.fields]

    @property
    def merge_keys(self) -> list[str]:
        """Names of the merge-key columns, in schema order."""
        return [f.name for f in self.fields if f.is_merge_key]

    @property
    def arrow(self) -> pa.Schema:
        """The pyarrow schema, with workbench metadata on the fields."""
        import pyarrow as pa

        return pa.schema([f.to_arrow() for f in self.fields])

    def field(self, name: str) -> Field:
        """The field called ``name``."""
        for f in self.fields:
            if f.name == name:
                return f
        raise SchemaValidationError(f"Schema has no field {name!r}; fields are {self.names}.")

    def __contains__(self, name: object) -> bool:
        return name in self.names

    def __iter__(self) -> Iterator[Field]:
        return iter(self.fields)

    def __len__(self) -> int:
        return len(self.fields)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Schema) and self.fields == other.fields

    def __hash__(self) -> int:
        return hash(self.fields)

    def __repr__(self) -> str:
        return "Schema(\n" + "".join(f"  {_describe(f)}\n" for f in self.fields) + ")"

    def _repr_html_(self) -> str:
        from html import escape

        rows = "".join(
            f"<tr><td>{escape(f.name)}</td><td>{escape(str(f.type))}</td>"
            f"<td>{'key' if f.is_merge_key else ''}</td>"
            f"<td>{'' if f.future_default is None else escape(repr(f.future_default))}</td></tr>"
            for f in self.fields
        )
        return (
            "<table><thead><tr><th>column</th><th>type</th><th>merge key</th>"
            f"<th>future default</th></tr></thead><tbody>{rows}</tbody></table>"
        )


def _describe(field: Field) -> str:
    text = f"{field.name}: {field.type}"
    if field.is_merge_key:
        text += " [merge key]"
    if field.future_default is not None:
        text += f" [default {field.future_default!r}]"
    return text
