"""Schema evolution: map Arrow types to Delta storage types, widen safely, plan a write."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from workbench.core.base.errors import SchemaValidationError
from workbench.core.base.types import SchemaConsistencyType, SchemaEvolutionMode
from workbench.core.schema.arrow_types import same_type, widen
from workbench.core.schema.table_schema import Field, Schema, promoted_type
from workbench.core.schema.type_notes import note_for, noted_type

if TYPE_CHECKING:
    import pyarrow as pa

_MAX_DECIMAL_PRECISION = 38
UINT64_DIGITS = 20  # 2**64 - 1 has 20 digits


def storage_type(t: pa.DataType, column: str) -> pa.DataType:
    """The Arrow type Delta Lake stores for ``t`` (strings, unsigned ints, units normalised)."""
    import pyarrow as pa
    import pyarrow.types as pt

    if isinstance(t, pa.BaseExtensionType):
        if t.extension_name in ("arrow.uuid", "arrow.json", "arrow.bool8"):
            return storage_type(t.storage_type, column)
        raise SchemaValidationError(
            f"Column {column!r} has the Arrow extension type {t.extension_name!r}, which Delta "
            "Lake cannot store; cast it to its storage type (column.storage) or to a plain type."
        )
    if pt.is_string(t) or pt.is_large_string(t) or pt.is_string_view(t):
        return pa.string()
    if pt.is_binary(t) or pt.is_large_binary(t) or pt.is_binary_view(t):
        return pa.binary()
    if pt.is_fixed_size_binary(t):  # Delta has one binary (noted, so reads give the width back)
        return pa.binary()
    if pt.is_unsigned_integer(t):  # the next wider signed type; uint64 needs 20 digits
        if t.bit_width == 64:
            return pa.decimal128(UINT64_DIGITS, 0)
        return pa.int16() if t.bit_width == 8 else pa.int32() if t.bit_width == 16 else pa.int64()
    if pt.is_float16(t):
        return pa.float32()
    if pt.is_timestamp(t):
        return pa.timestamp("us", tz="UTC" if t.tz else None)
    if pt.is_date(t):
        return pa.date32()
    if pt.is_decimal(t):
        if t.scale < 0:
            raise SchemaValidationError(
                f"Column {column!r} is {t} with a negative scale, which Delta Lake cannot store; "
                f"cast it to decimal128({min(t.precision - t.scale, 38)}, 0)."
            )
        if t.precision > _MAX_DECIMAL_PRECISION:
            raise SchemaValidationError(
                f"Column {column!r} is {t} with precision above 38, which Delta Lake cannot store; "
                "cast it to decimal128 with precision 38 or less."
            )
        return pa.decimal128(t.precision, t.scale)
    if pt.is_dictionary(t):
        return storage_type(t.value_type, column)
    if pt.is_list(t) or pt.is_large_list(t) or pt.is_fixed_size_list(t) or pt.is_list_view(t):
        return pa.list_(storage_type(t.value_type, column))
    if pt.is_struct(t):
        return pa.struct(
            [pa.field(f.name, storage_type(f.type, f"{column}.{f.name}")) for f in t.fields]
        )
    if pt.is_map(t):
        return pa.map_(storage_type(t.key_type, column), storage_type(t.item_type, column))
    if pt.is_union(t) or pt.is_run_end_encoded(t):
        raise SchemaValidationError(
            f"Column {column!r} has type {t}, which Delta Lake cannot store; cast it to one "
            "plain type (e.g. string) first."
        )
    if pt.is_duration(t):  # a count of its unit (noted, so reads give the duration back)
        return pa.int64()
    if pt.is_time(t) or pt.is_interval(t):
        raise SchemaValidationError(
            f"Column {column!r} has type {t}, which Delta Lake cannot store; cast it to int64 "
            "(e.g. microseconds) or to a timestamp."
        )
    return t


def storage_schema(schema: pa.Schema) -> pa.Schema:
    """Apply ``storage_type`` to every column of an Arrow schema, noting zones it drops."""
    import pyarrow as pa

    check_column_names(schema.names)
    return pa.schema([_storage_field(Field.from_arrow(f)).to_arrow() for f in schema])


def check_column_names(names: list[str]) -> None:
    """Raise unless there are columns and no two names differ only in case (Delta Lake matches
    column names case-insensitively)."""
    if not names:
        raise SchemaValidationError(
            "The data has no columns; a table needs at least one (e.g. pd.DataFrame({'id': []}))."
        )
    folded: dict[str, str] = {}
    for name in names:
        other = folded.setdefault(name.lower(), name)
        if other != name:
            raise SchemaValidationError(
                f"Columns {other!r} and {name!r} differ only in case; Delta Lake treats column "
                "names case-insensitively, so rename one of them."
            )


def to_storage(schema: Schema) -> Schema:
    """The same schema with each field's type as Delta Lake stores it."""
    check_column_names(schema.names)
    for f in schema:
        _reject_untyped_field(f)
    return Schema((_storage_field(f) for f in schema), schema.id)


def _storage_field(f: Field) -> Field:
    """``f`` with its stored type, noting the written type when reads would not give it back."""
    stored = f.with_type(storage_type(f.type, f.name))
    return replace(stored, arrow_type=f.arrow_type or note_for(f.type, stored.type))


@dataclass
class SchemaPlan:
    """The schema a write will leave the table with, and what changes to get there."""

    schema: Schema
    added: list[str] = field(default_factory=list)
    widened: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    renoted: list[str] = field(default_factory=list)  # widened as read, Delta's type unchanged

    @property
    def changed(self) -> bool:
        """True when the write changes the table's schema."""
        return bool(self.added or self.widened or self.removed or self.renoted)

    @property
    def rewrites(self) -> bool:
        """True when the table's rows must be rewritten: a type changed, a column went, or an
        added column has a past default for the rows written before it."""
        backfilled = [n for n in self.added if self.schema.field(n).past_default is not None]
        return bool(self.widened or self.removed or backfilled)


def plan_new_table(
    incoming: pa.Schema,
    declared: Schema | None,
    default: SchemaConsistencyType | None = None,
) -> SchemaPlan:
    """Schema of a table created by a write: the declared one plus any extra data columns.
    A declared field checks (VALIDATE) or widens (NONE) for the data's type by its consistency
    type (``default`` when it has none); otherwise the data is cast to it."""
    if declared is None:
        _reject_untyped(incoming, incoming.names)
        return SchemaPlan(Schema(Field.from_arrow(f) for f in incoming))
    extra = [f for f in incoming if f.name not in declared]
    _reject_untyped(incoming, [f.name for f in extra])
    data = {f.name: Field.from_arrow(f) for f in incoming}
    fields = []
    for f in declared:
        kind = f.consistency_type or default
        if f.name in data and kind in (SchemaConsistencyType.VALIDATE, SchemaConsistencyType.NONE):
            f = column_for(f, data[f.name], kind)
        fields.append(_with_notes(f, data.get(f.name)))
    return SchemaPlan(Schema([*fields, *(data[f.name] for f in extra)], declared.id))


def fits(column: pa.DataType, incoming: pa.DataType) -> bool:
    """True when every value of type ``incoming`` converts to type ``column`` without loss
    (int32 into int64, float32 into float64, a narrower decimal into a wider one)."""
    wider = widen(column, incoming)
    return wider is not None and same_type(wider, column)


def compared_type(f: Field) -> pa.DataType:
    """The type the rule compares for column ``f``: the type an unsigned integer, fixed-size
    binary or uuid column was written as (Delta stores them as a wider signed type or a
    decimal, and as binary), else the stored type."""
    import pyarrow as pa
    import pyarrow.types as pt

    written = noted_type(f.arrow_type) if f.arrow_type else None
    if written is None:
        return f.type
    kept = pt.is_unsigned_integer(written) or pt.is_fixed_size_binary(written)
    return written if kept or isinstance(written, pa.BaseExtensionType) else f.type


def column_for(f: Field, data: Field, kind: SchemaConsistencyType | None, table: str = "") -> Field:
    """Column ``f`` as it is after a write of ``data`` (a data column, in stored types) under
    consistency ``kind``: the one rule for every mode and engine. Data that fits the column
    losslessly always goes in (cast to the column's type); beyond that VALIDATE refuses,
    COERCE keeps the column's type (the values are cast, exactly or not at all), NONE takes
    the most permissive type of both, and no kind widens the column only where no value is
    lost."""
    have, got = compared_type(f), compared_type(data)
    if fits(have, got):
        return f
    if kind is SchemaConsistencyType.VALIDATE:
        raise SchemaValidationError(
            f"Data type mismatch for field {f.name!r}: expected {have}, got {got}, whose "
            f"values do not all fit {have}. The field's consistency type is VALIDATE, so its "
            f"type does not change; cast the column to {have} (or a narrower type) first."
        )
    if kind is SchemaConsistencyType.COERCE:
        return f
    if kind is SchemaConsistencyType.NONE:
        promoted = storage_type(promoted_type(f, data.type), f.name)
        return f if same_type(promoted, f.type) else f.with_type(promoted)
    wider = widen(have, got)
    if wider is None:
        raise SchemaValidationError(
            f"Column {f.name!r} of table {table!r} is {have}; the data has {got}, "
            f"which cannot be converted without loss. Cast the column to {have} first."
        )
    stored = f.with_type(storage_type(wider, f.name))
    return replace(stored, arrow_type=note_for(wider, stored.type))


def _with_notes(declared: Field, data: Field | None) -> Field:
    """A declared field keeps the data's zone and pandas dtype notes when it stores the data's
    type unchanged, so declaring a schema does not lose how the data reads back."""
    if data is None or not same_type(declared.type, data.type):
        return declared
    return replace(
        declared,
        arrow_type=declared.arrow_type or data.arrow_type,
        pandas_dtype=declared.pandas_dtype or data.pandas_dtype,
    )


def plan_existing_table(
    current: Schema,
    incoming: pa.Schema,
    declared: Schema | None,
    mode: SchemaEvolutionMode,
    table: str,
    default: SchemaConsistencyType | None = None,
) -> SchemaPlan:
    """Check a write against a table's schema and work out the evolution it needs; data
    columns follow their field's consistency type (``default`` when it has none)."""
    fields = {f.name: f for f in current}
    plan = SchemaPlan(current)
    if declared is not None:
        if declared.merge_keys and declared.merge_keys != current.merge_keys:
            raise SchemaValidationError(
                f"Table {table!r} has merge keys {current.merge_keys}, the schema passed declares "
                f"{declared.merge_keys}; merge keys cannot change on an existing table (create a "
                "new table instead)."
            )
        for f in declared:
            _evolve_column(fields, plan, f, mode, declared=True, table=table)
    for f in incoming:
        new, old = Field.from_arrow(f), fields.get(f.name)
        kind = default if old is None else old.consistency_type or default
        if old is None and default is not None:
            new = replace(new, consistency_type=default)
        _evolve_column(fields, plan, new, mode, declared=False, table=table, kind=kind)
    plan.schema = Schema(fields.values(), current.id + plan.changed)
    return plan


def _evolve_column(
    fields: dict[str, Field],
    plan: SchemaPlan,
    new: Field,
    mode: SchemaEvolutionMode,
    declared: bool,
    table: str,
    kind: SchemaConsistencyType | None = None,
) -> None:
    """Add or widen column ``new`` in ``fields`` (a declared field, or a data column whose
    values follow consistency ``kind``) if the evolution ``mode`` allows it."""
    allowed = mode is SchemaEvolutionMode.AUTO or (mode is SchemaEvolutionMode.MANUAL and declared)
    old = fields.get(new.name)
    if old is None:
        same = [n for n in fields if n.lower() == new.name.lower()]
        if same:
            raise SchemaValidationError(
                f"Column {new.name!r} differs only in case from column {same[0]!r} of table "
                f"{table!r}; Delta Lake matches column names case-insensitively, so write it as "
                f"{same[0]!r}."
            )
        if new.is_merge_key:
            raise SchemaValidationError(
                f"Column {new.name!r} cannot become a merge key of existing table {table!r}; "
                "merge keys are fixed when a table is created."
            )
        _reject_untyped_field(new)
        if not allowed:
            raise SchemaValidationError(
                f"Field {new.name!r} is not present in the schema and schema evolution mode is "
                f"'{mode.value}'. Pass the new schema through schema= (MANUAL) or set "
                "TableProperty.SCHEMA_EVOLUTION_MODE to AUTO to add it."
            )
        fields[new.name] = new
        plan.added.append(new.name)
        return
    column = column_for(old, new, kind, table)
    if column is not old:
        if not allowed:
            change = f"widen column {new.name!r} from {compared_type(old)} to "
            raise SchemaValidationError(_blocked(table, change + str(compared_type(column)), mode))
        fields[new.name] = column
        (plan.renoted if same_type(column.type, old.type) else plan.widened).append(new.name)
    if declared and new.future_default != old.future_default:
        fields[new.name] = replace(fields[new.name], future_default=new.future_default)


def _blocked(table: str, change: str, mode: SchemaEvolutionMode) -> str:
    return (
        f"The write would {change} of table {table!r}, but its schema evolution mode is "
        f"{mode.name}. Pass the new schema through schema= (MANUAL) or set "
        "TableProperty.SCHEMA_EVOLUTION_MODE to AUTO."
    )


def _reject_untyped(schema: pa.Schema, names: list[str]) -> None:
    for name in names:
        _reject_untyped_field(Field.from_arrow(schema.field(name)))


def _reject_untyped_field(f: Field) -> None:
    import pyarrow.types as pt

    if pt.is_null(f.type):
        raise SchemaValidationError(
            f"Column {f.name!r} has no type (every value is null); pass schema= with its type."
        )
