"""Table schemas: Arrow fields plus merge keys and future defaults (Delta field metadata)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any, Union

from workbench.core.base.arguments import choice
from workbench.core.base.errors import SchemaValidationError
from workbench.core.base.types import SchemaConsistencyType
from workbench.core.schema.merge_order import MergeOrder
from workbench.core.schema.type_notes import ARROW_TYPE_META

if TYPE_CHECKING:
    import pyarrow as pa

    from workbench.core.schema.updates import SchemaUpdate

MERGE_KEY_META = b"workbench.mergeKey"
FUTURE_DEFAULT_META = b"workbench.futureDefault"
PAST_DEFAULT_META = b"workbench.pastDefault"
FIELD_ID_META = b"workbench.fieldId"
MERGE_ORDER_META = b"workbench.mergeOrder"
EVENT_TIME_META = b"workbench.eventTime"
DOC_META = b"workbench.doc"
CONSISTENCY_META = b"workbench.consistencyType"
PANDAS_DTYPE_META = b"workbench.pandasDtype"
PARQUET_FIELD_ID = b"PARQUET:field_id"  # the id key pyarrow and DeltaCAT use
SCHEMA_ID_PROPERTY = "workbench.schemaId"  # Delta configuration key of the schema version


@dataclass(frozen=True)
class Field:
    """One column: an Arrow field plus what a table needs to know about it.

    ``field_id`` identifies the column across renames and schema versions; ``is_merge_key``,
    ``merge_order`` and ``is_event_time`` decide which row of a key a write keeps;
    ``past_default`` is the value rows written before the column existed read back with, and
    ``future_default`` fills the column in new rows written without it; ``consistency_type``
    says how a write treats values of another type. ``arrow_type`` and ``pandas_dtype``
    remember what the stored type cannot say (the Arrow type written, e.g. a zone other than
    UTC; a pandas dtype), so reads give the column back as it was written.
    """

    base: pa.Field
    is_merge_key: bool = False
    future_default: Any = None
    arrow_type: str | None = None
    pandas_dtype: str | None = None
    field_id: int | None = None
    past_default: Any = None
    merge_order: MergeOrder | None = None
    is_event_time: bool = False
    doc: str | None = None
    consistency_type: SchemaConsistencyType | None = None

    @classmethod
    def of(
        cls,
        field: pa.Field,
        field_id: int | None = None,
        is_merge_key: bool | None = None,
        merge_order: MergeOrder | None = None,
        is_event_time: bool | None = None,
        doc: str | None = None,
        past_default: Any = None,
        future_default: Any = None,
        consistency_type: SchemaConsistencyType | str | None = None,
    ) -> Field:
        """Describe a column (DeltaCAT's ``Field.of``). ``future_default`` defaults to
        ``past_default``; merge keys, merge-order and event-time fields are VALIDATE."""
        import pyarrow as pa

        if not isinstance(field, pa.Field):
            raise SchemaValidationError(
                f"dc.Field.of takes a pyarrow.Field, not {type(field).__name__} {field!r}; e.g. "
                "dc.Field.of(pa.field('id', pa.int64()), is_merge_key=True)."
            )
        if future_default is None:
            future_default = past_default
        kind = parse_consistency(field.name, consistency_type)
        roles = {
            "Merge key": bool(is_merge_key),
            "Merge order": merge_order is not None,
            "Event time": bool(is_event_time),
        }
        for role in (r for r, on in roles.items() if on):
            if kind not in (None, SchemaConsistencyType.VALIDATE):
                raise SchemaValidationError(
                    f"{role} field {field.name!r} must have VALIDATE consistency type, got "
                    f"{kind.name}: its values decide which rows match, so they are never "
                    "converted. Leave consistency_type unset."
                )
            kind = SchemaConsistencyType.VALIDATE
        if is_merge_key:
            _check_key_type(field)
        if merge_order is not None:
            _check_merge_order(field, merge_order)
        if is_event_time:
            _check_event_time(field)
        for label, value in (("past_default", past_default), ("future_default", future_default)):
            if value is not None:
                check_default(field, label, value)
        return cls(
            field.remove_metadata(),
            bool(is_merge_key),
            future_default,
            field_id=_field_id(field.name, field_id),
            past_default=past_default,
            merge_order=merge_order,
            is_event_time=bool(is_event_time),
            doc=_doc(field.name, doc),
            consistency_type=kind,
        )

    @classmethod
    def from_arrow(cls, field: pa.Field) -> Field:
        """Read a field back from Arrow, decoding workbench metadata (and Parquet field ids)."""
        meta = field.metadata or {}

        def text(key: bytes) -> str | None:
            value = meta.get(key)
            return value.decode() if value is not None else None

        def loaded(key: bytes) -> Any:
            value = meta.get(key)
            return json.loads(value) if value is not None else None

        field_id = text(FIELD_ID_META) or text(PARQUET_FIELD_ID)
        order = text(MERGE_ORDER_META)
        kind = text(CONSISTENCY_META)
        return cls(
            field.remove_metadata(),
            meta.get(MERGE_KEY_META) == b"true",
            loaded(FUTURE_DEFAULT_META),
            text(ARROW_TYPE_META),
            text(PANDAS_DTYPE_META),
            field_id=int(field_id) if field_id is not None else None,
            past_default=loaded(PAST_DEFAULT_META),
            merge_order=MergeOrder.decode(order) if order is not None else None,
            is_event_time=meta.get(EVENT_TIME_META) == b"true",
            doc=text(DOC_META),
            consistency_type=SchemaConsistencyType(kind) if kind is not None else None,
        )

    @staticmethod
    def _consistency_type(field: pa.Field) -> SchemaConsistencyType | None:
        """The consistency type noted in an Arrow field's metadata (DeltaCAT's helper)."""
        return Field.from_arrow(field).consistency_type

    @property
    def id(self) -> int | None:
        """The field id (unique in its schema, kept when the schema changes)."""
        return self.field_id

    @property
    def name(self) -> str:
        """Column name."""
        return self.base.name

    @property
    def type(self) -> pa.DataType:
        """Arrow data type."""
        return self.base.type

    @property
    def nullable(self) -> bool:
        """Whether the column may hold nulls."""
        return self.base.nullable

    @property
    def arrow(self) -> pa.Field:
        """The Arrow field, every attribute in its metadata."""
        return self.to_arrow()

    def to_arrow(self) -> pa.Field:
        """Arrow field with workbench metadata attached."""
        meta = {}
        if self.is_merge_key:
            meta[MERGE_KEY_META] = b"true"
        if self.future_default is not None:
            meta[FUTURE_DEFAULT_META] = json.dumps(self.future_default).encode()
        if self.past_default is not None:
            meta[PAST_DEFAULT_META] = json.dumps(self.past_default).encode()
        if self.field_id is not None:
            meta[FIELD_ID_META] = str(self.field_id).encode()
        if self.merge_order is not None:
            meta[MERGE_ORDER_META] = self.merge_order.encode().encode()
        if self.is_event_time:
            meta[EVENT_TIME_META] = b"true"
        if self.doc is not None:
            meta[DOC_META] = self.doc.encode()
        if self.consistency_type is not None:
            meta[CONSISTENCY_META] = self.consistency_type.value.encode()
        if self.arrow_type is not None:
            meta[ARROW_TYPE_META] = self.arrow_type.encode()
        if self.pandas_dtype is not None:
            meta[PANDAS_DTYPE_META] = self.pandas_dtype.encode()
        return self.base.with_metadata(meta) if meta else self.base

    def with_type(self, data_type: pa.DataType) -> Field:
        """Same field with another type (used when a type is widened); defaults follow it."""
        import pyarrow as pa

        def cast(value: Any) -> Any:
            if value is None or data_type.equals(self.type):
                return value
            try:
                converted = pa.scalar(value).cast(data_type).as_py()
                json.dumps(converted)
            except (pa.ArrowException, TypeError, ValueError):
                return value
            return converted

        past, future = cast(self.past_default), cast(self.future_default)
        return replace(
            self, base=self.base.with_type(data_type), past_default=past, future_default=future
        )

    def promote_type_if_needed(self, column: pa.Array) -> tuple[pa.Array, bool]:
        """``column`` in the type holding both its values and this field's (DeltaCAT's NONE
        consistency), and whether that type differs from the field's."""
        import pyarrow as pa

        if column.type.equals(self.type):
            return column, False
        unified = promoted_type(self, column.type)
        if unified.equals(self.type):
            try:
                return column.cast(unified), False
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
                return column, False
        return column.cast(unified), True


def promoted_type(field: Field, incoming: pa.DataType) -> pa.DataType:
    """The most permissive type of ``field``'s type and ``incoming`` (pyarrow's unification),
    or ``SchemaValidationError`` when there is none."""
    import pyarrow as pa

    schemas = [pa.schema([pa.field("x", t)]) for t in (field.type, incoming)]
    try:
        return pa.unify_schemas(schemas, promote_options="permissive").field("x").type
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        raise SchemaValidationError(
            f"Cannot unify types for field {field.name!r}: current type {field.type} "
            f"incompatible with new data type {incoming}. Cast the column to {field.type} first."
        ) from None


def parse_consistency(
    name: str, kind: SchemaConsistencyType | str | None
) -> SchemaConsistencyType | None:
    if kind is None:
        return None
    return choice(
        SchemaConsistencyType, kind, f"consistency_type of field {name!r}", SchemaValidationError
    )


def _field_id(name: str, field_id: Any) -> int | None:
    if field_id is None:
        return None
    if isinstance(field_id, bool) or not isinstance(field_id, int) or field_id < 0:
        raise SchemaValidationError(
            f"field_id={field_id!r} of field {name!r} must be a whole number of 0 or more "
            "(or None: the schema assigns the next free id)."
        )
    return field_id


def _doc(name: str, doc: Any) -> str | None:
    if doc is not None and not isinstance(doc, str):
        raise SchemaValidationError(f"doc={doc!r} of field {name!r} must be a string.")
    return doc


def _check_key_type(field: pa.Field) -> None:
    import pyarrow.types as pt

    t = field.type
    if pt.is_nested(t) or pt.is_floating(t) or pt.is_null(t) or pt.is_dictionary(t):
        raise SchemaValidationError(
            f"Field {field.name!r} of type {t} cannot be a merge key: keys must compare exactly, "
            "so use an integer, string, binary, boolean, decimal, date or timestamp column."
        )


def _check_merge_order(field: pa.Field, order: Any) -> None:
    import pyarrow.types as pt

    if not isinstance(order, MergeOrder):
        raise SchemaValidationError(
            f"merge_order of field {field.name!r} must be a dc.MergeOrder, e.g. "
            f"dc.MergeOrder.of(dc.SortOrder.DESCENDING); got {order!r}."
        )
    if pt.is_nested(field.type) or pt.is_null(field.type):
        raise SchemaValidationError(
            f"Field {field.name!r} of type {field.type} cannot order merges: use a number, "
            "string, date or timestamp column."
        )


def _check_event_time(field: pa.Field) -> None:
    import pyarrow.types as pt

    t = field.type
    if not (pt.is_integer(t) or pt.is_floating(t) or pt.is_temporal(t)):
        raise SchemaValidationError(
            f"Field {field.name!r} of type {t} cannot be an event time: use an integer, float, "
            "date or timestamp column."
        )


def check_default(field: pa.Field, label: str, value: Any) -> None:
    """Raise unless ``value`` can be stored as a default of ``field`` (JSON, of its type)."""
    import pyarrow as pa

    try:
        json.dumps(value)
        pa.scalar(value, field.type)
    except (TypeError, ValueError, OverflowError, pa.ArrowException) as e:
        raise SchemaValidationError(
            f"{label} {value!r} does not fit field {field.name!r} of type {field.type}; "
            "pass a plain number, string or boolean of that type."
        ) from e


SchemaLike = Union["Schema", "pa.Schema", Sequence[Union[Field, "pa.Field"]]]


class Schema:
    """An ordered set of fields with unique names and ids, and a version (``id``) that grows
    each time the table's schema changes. Fields without an id get the next free one."""

    def __init__(self, fields: Iterable[Field], schema_id: int = 0):
        self.fields: tuple[Field, ...] = _with_ids(tuple(fields))
        self.id = schema_id
        names = [f.name for f in self.fields]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise SchemaValidationError(f"Schema has duplicate field names {dupes}; rename them.")

    @classmethod
    def of(cls, schema: SchemaLike, schema_id: int | None = None) -> Schema:
        """Build a schema from a pyarrow schema or a list of ``Field``/pyarrow fields."""
        import pyarrow as pa

        if isinstance(schema, Schema):
            return schema if schema_id is None else Schema(schema.fields, schema_id)
        schema_id = schema_id or 0
        if isinstance(schema_id, bool) or not isinstance(schema_id, int) or schema_id < 0:
            raise SchemaValidationError(f"schema_id={schema_id!r} must be a whole number >= 0.")
        if isinstance(schema, pa.Schema):
            return cls((Field.from_arrow(f) for f in schema), schema_id)
        if isinstance(schema, (list, tuple)):
            fields = []
            for f in schema:
                if not isinstance(f, (Field, pa.Field)):
                    raise SchemaValidationError(
                        "A schema lists dc.Field or pyarrow.Field objects; got "
                        f"{type(f).__name__} {f!r}. E.g. dc.Schema.of([pa.field('x', pa.int64())])."
                    )
                fields.append(f if isinstance(f, Field) else Field.from_arrow(f))
            return cls(fields, schema_id)
        raise SchemaValidationError(
            f"Cannot build a Schema from {type(schema).__name__}; pass a pyarrow.Schema or a list "
            "of dc.Field / pyarrow.Field."
        )

    @property
    def field_ids_to_fields(self) -> dict[int, Field]:
        """Fields by id, in schema order."""
        return {f.field_id: f for f in self.fields}  # type: ignore[misc]

    @property
    def max_field_id(self) -> int:
        """The highest field id (-1 for a schema without fields)."""
        return max((f.field_id for f in self.fields), default=-1)  # type: ignore[type-var]

    def field_id(self, name: str) -> int:
        """The id of the field called ``name``."""
        return self.field(name).field_id  # type: ignore[return-value]

    def update(self, allow_incompatible_changes: bool = False) -> SchemaUpdate:
        """A builder of changes to this schema; ``apply()`` gives the next schema version."""
        from workbench.core.schema.updates import SchemaUpdate

        return SchemaUpdate(self, allow_incompatible_changes)

    @property
    def names(self) -> list[str]:
        """Column names in order."""
        return [f.name for f in self.fields]

    @property
    def merge_keys(self) -> list[str]:
        """Names of the merge-key columns, in schema order."""
        return [f.name for f in self.fields if f.is_merge_key]

    @cached_property
    def arrow(self) -> pa.Schema:
        """The pyarrow schema, with workbench metadata on the fields (made once: a schema's
        fields never change)."""
        import pyarrow as pa

        return pa.schema([f.to_arrow() for f in self.fields])

    def field(self, name_or_id: str | int) -> Field:
        """The field called ``name_or_id`` (or with that field id)."""
        for f in self.fields:
            if name_or_id in (f.name, f.field_id) and not isinstance(name_or_id, bool):
                return f
        raise SchemaValidationError(
            f"Schema has no field {name_or_id!r}; fields are {self.names} with ids "
            f"{[f.field_id for f in self.fields]}."
        )

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


def _with_ids(fields: tuple[Field, ...]) -> tuple[Field, ...]:
    """``fields`` with the next free ids given to those without one; ids must be unique."""
    given = [f.field_id for f in fields if f.field_id is not None]
    repeated = sorted({i for i in given if given.count(i) > 1})
    if repeated:
        raise SchemaValidationError(
            f"Schema has duplicate field ids {repeated}; give each field its own field_id (or "
            "none: the next free id is assigned)."
        )
    next_id = max(given, default=-1) + 1
    numbered = []
    for f in fields:
        if f.field_id is None:
            f, next_id = replace(f, field_id=next_id), next_id + 1
        numbered.append(f)
    return tuple(numbered)


def stored_schema(arrow: pa.Schema, configuration: dict[str, str]) -> Schema:
    """A table's schema from its Delta schema and configuration (which holds its version)."""
    return Schema.of(arrow, int(configuration.get(SCHEMA_ID_PROPERTY, 0)))


def _describe(field: Field) -> str:
    text = f"{field.name}: {field.type}"
    if field.is_merge_key:
        text += " [merge key]"
    if field.future_default is not None:
        text += f" [default {field.future_default!r}]"
    return text
