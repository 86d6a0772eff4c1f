"""``Schema.update()``: a chain of changes to a schema, applied at once as its next version."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from workbench.core.base.errors import SchemaCompatibilityError, SchemaValidationError
from workbench.core.base.types import SchemaConsistencyType
from workbench.core.schema.arrow_types import same_type, widen
from workbench.core.schema.table_schema import Field, Schema, check_default, parse_consistency

if TYPE_CHECKING:
    import pyarrow as pa


class SchemaUpdate:
    """Changes to ``base_schema``; each method checks its change and returns the update, so
    calls chain. ``apply()`` gives the new schema, whose ``id`` is the base's plus one.

    Changes that could break data already written (a required column without a default, a
    narrower type, a removed column) raise ``SchemaCompatibilityError`` unless the update was
    made with ``allow_incompatible_changes=True``."""

    def __init__(self, base_schema: Schema, allow_incompatible_changes: bool = False):
        self.base_schema = base_schema
        self.allow_incompatible_changes = allow_incompatible_changes
        self._fields: dict[int, Field] = dict(base_schema.field_ids_to_fields)

    def add_field(self, field: Field) -> SchemaUpdate:
        """Add a column; it gets the next free field id (an id it carries is ignored)."""
        if not isinstance(field, Field):
            raise SchemaValidationError(
                f"add_field takes a dc.Field, not {type(field).__name__}; e.g. "
                "add_field(dc.Field.of(pa.field('email', pa.string())))."
            )
        if field.name in {f.name for f in self._fields.values()}:
            raise SchemaValidationError(
                f"Field {field.name!r} already exists; use update_field_type (or another "
                "update_field_* method) to change it."
            )
        if field.is_merge_key:
            raise SchemaCompatibilityError(
                f"Field {field.name!r} cannot be added as a merge key: merge keys are fixed when "
                "a table is created."
            )
        if not field.nullable and field.past_default is None and field.future_default is None:
            self._incompatible(
                f"Adding required field {field.name!r} without a past_default or future_default "
                "leaves existing rows without a value; give it a default or make it nullable."
            )
        new_id = max([*self._fields, -1]) + 1
        self._fields[new_id] = replace(field, field_id=new_id)
        return self

    def remove_field(self, name_or_id: str | int) -> SchemaUpdate:
        """Remove a column (its values are dropped from the table's files)."""
        f = self._find(name_or_id)
        if f.is_merge_key:
            raise SchemaCompatibilityError(f"Merge key {f.name!r} cannot be removed.")
        self._incompatible(
            f"Removing field {f.name!r} drops its values and breaks readers that expect it."
        )
        del self._fields[f.field_id]  # type: ignore[arg-type]
        return self

    def update_field_type(self, name_or_id: str | int, new_type: pa.DataType) -> SchemaUpdate:
        """Change a column's type; it must hold every value of the old type."""
        import pyarrow as pa

        f = self._find(name_or_id)
        if not isinstance(new_type, pa.DataType):
            raise SchemaValidationError(
                f"update_field_type({f.name!r}, ...) takes a pyarrow DataType, not {new_type!r}."
            )
        wider = widen(f.type, new_type)
        if wider is None or not same_type(wider, new_type):
            if f.is_merge_key:
                raise SchemaCompatibilityError(
                    f"Merge key {f.name!r} of type {f.type} can only widen, not become {new_type}."
                )
            self._incompatible(
                f"Changing field {f.name!r} from {f.type} to {new_type} can lose values."
            )
        return self._put(f.with_type(new_type))

    def update_field_doc(self, name_or_id: str | int, doc: str | None) -> SchemaUpdate:
        """Change a column's documentation."""
        f = self._find(name_or_id)
        if doc is not None and not isinstance(doc, str):
            raise SchemaValidationError(f"doc={doc!r} of field {f.name!r} must be a string.")
        return self._put(replace(f, doc=doc))

    def update_field_nullability(self, name_or_id: str | int, nullable: bool) -> SchemaUpdate:
        """Allow or forbid nulls in a column; forbidding them is incompatible."""
        f = self._find(name_or_id)
        if not isinstance(nullable, bool):
            raise SchemaValidationError(f"nullable={nullable!r} must be True or False.")
        if f.nullable and not nullable:
            self._incompatible(f"Making field {f.name!r} required fails on rows holding nulls.")
        return self._put(replace(f, base=f.base.with_nullable(nullable)))

    def update_field_consistency_type(
        self, name_or_id: str | int, consistency_type: SchemaConsistencyType | str | None
    ) -> SchemaUpdate:
        """Change how writes treat a column's values of another type."""
        f = self._find(name_or_id)
        kind = parse_consistency(f.name, consistency_type)
        critical = f.is_merge_key or f.merge_order is not None or f.is_event_time
        if critical and kind is not SchemaConsistencyType.VALIDATE:
            raise SchemaValidationError(
                f"Field {f.name!r} decides which rows match, so it must have VALIDATE "
                f"consistency type, not {consistency_type!r}."
            )
        return self._put(replace(f, consistency_type=kind))

    def update_field_future_default(self, name_or_id: str | int, value: Any) -> SchemaUpdate:
        """Change the value that fills a column in new rows written without it."""
        f = self._find(name_or_id)
        if value is not None:
            check_default(f.base, "future_default", value)
        return self._put(replace(f, future_default=value))

    def apply(self) -> Schema:
        """The updated schema: the next version of the base schema."""
        return Schema(self._fields.values(), self.base_schema.id + 1)

    def _find(self, name_or_id: str | int) -> Field:
        return self.apply().field(name_or_id)

    def _put(self, field: Field) -> SchemaUpdate:
        self._fields[field.field_id] = field  # type: ignore[index]
        return self

    def _incompatible(self, problem: str) -> None:
        if not self.allow_incompatible_changes:
            raise SchemaCompatibilityError(
                f"{problem} Pass allow_incompatible_changes=True to schema.update(...) to make "
                "the change anyway."
            )

    def __repr__(self) -> str:
        return f"SchemaUpdate(base id {self.base_schema.id}, fields {list(self._fields.values())})"
