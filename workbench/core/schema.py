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
ARROW_TYPE_META = b"workbench.arrowType"
PANDAS_DTYPE_META = b"workbench.pandasDtype"


@dataclass(frozen=True)
class Field:
    """One column: an Arrow field, whether it is a merge key, and its default for new rows.

    ``arrow_type`` and ``pandas_dtype`` remember what the stored type cannot say (the Arrow
    type written, e.g. a zone other than UTC; a pandas dtype), so reads give the column back as
    it was written.
    """

    arrow: pa.Field
    is_merge_key: bool = False
    future_default: Any = None
    arrow_type: str | None = None
    pandas_dtype: str | None = None

    @classmethod
    def of(cls, field: pa.Field, is_merge_key: bool = False, future_default: Any = None) -> Field:
        """Describe a column; ``future_default`` fills it in rows written without it."""
        import pyarrow as pa

        if not isinstance(field, pa.Field):
            raise SchemaValidationError(
                f"dc.Field.of takes a pyarrow.Field, not {type(field).__name__} {field!r}; e.g. "
                "dc.Field.of(pa.field('id', pa.int64()), is_merge_key=True)."
            )
        if is_merge_key:
            _check_key_type(field)
        if future_default is not None:
            _check_default(field, future_default)
        return cls(field.remove_metadata(), bool(is_merge_key), future_default)

    @classmethod
    def from_arrow(cls, field: pa.Field) -> Field:
        """Read a field back from Arrow, decoding workbench metadata."""
        meta = field.metadata or {}
        default = meta.get(FUTURE_DEFAULT_META)
        noted, note = meta.get(ARROW_TYPE_META), meta.get(PANDAS_DTYPE_META)
        return cls(
            field.remove_metadata(),
            meta.get(MERGE_KEY_META) == b"true",
            json.loads(default) if default is not None else None,
            noted.decode() if noted is not None else None,
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
        if self.arrow_type is not None:
            meta[ARROW_TYPE_META] = self.arrow_type.encode()
        if self.pandas_dtype is not None:
            meta[PANDAS_DTYPE_META] = self.pandas_dtype.encode()
        return self.arrow.with_metadata(meta) if meta else self.arrow

    def with_type(self, data_type: pa.DataType) -> Field:
        """Same field with another type (used when a type is widened)."""
        return replace(self, arrow=self.arrow.with_type(data_type))


def _check_key_type(field: pa.Field) -> None:
    import pyarrow.types as pt

    t = field.type
    if pt.is_nested(t) or pt.is_floating(t) or pt.is_null(t) or pt.is_dictionary(t):
        raise SchemaValidationError(
            f"Field {field.name!r} of type {t} cannot be a merge key: keys must compare exactly, "
            "so use an integer, string, binary, boolean, decimal, date or timestamp column."
        )


def _check_default(field: pa.Field, value: Any) -> None:
    import pyarrow as pa

    try:
        json.dumps(value)
        pa.scalar(value, field.type)
    except (TypeError, ValueError, OverflowError, pa.ArrowException) as e:
        raise SchemaValidationError(
            f"future_default {value!r} does not fit field {field.name!r} of type {field.type}; "
            "pass a plain number, string or boolean of that type."
        ) from e


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
            fields = []
            for f in schema:
                if not isinstance(f, (Field, pa.Field)):
                    raise SchemaValidationError(
                        "A schema lists dc.Field or pyarrow.Field objects; got "
                        f"{type(f).__name__} {f!r}. E.g. dc.Schema.of([pa.field('x', pa.int64())])."
                    )
                fields.append(f if isinstance(f, Field) else Field.from_arrow(f))
            return cls(fields)
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
