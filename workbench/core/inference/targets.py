"""Which columns of a table a model may write, and which model wrote each: a column holds one
model's outputs, so the provenance written beside them (``_model_<name>``, ``_input_<name>``)
always describes the values in it.

Who wrote a column is a table property (a JSON map column -> model name), so it travels with
the table; a column that is dropped is free again."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING

from workbench.core.base.errors import (
    MergeKeyError,
    OutputColumnOwnedError,
    OutputColumnTypeError,
)
from workbench.core.data.predict_plan import provenance_fields

if TYPE_CHECKING:
    from workbench.core.catalog.locations import OpenTable
    from workbench.core.inference.model import Model
    from workbench.core.transactions.table_change import TableChange
    from workbench.core.transactions.transaction import Transaction

OWNERS_PROPERTY = "workbench.inference.columnOwners"


def written_columns(model: Model) -> list[str]:
    """The columns a run of ``model`` writes: its outputs and its provenance columns."""
    return [*model.output_schema().names, *(f.name for f in provenance_fields(model))]


def owners(table: OpenTable) -> dict[str, str]:
    """Column -> the model that wrote it, for the table's columns (damaged records: none)."""
    try:
        recorded = json.loads(table.properties.get(OWNERS_PROPERTY) or "{}")
    except ValueError:
        return {}
    if not isinstance(recorded, dict):
        return {}
    names = set(table.schema.names)
    return {c: str(m) for c, m in recorded.items() if c in names}


def check_target(
    model: Model, keys: list[str], target: OpenTable, inputs: Mapping[str, str]
) -> None:
    """Refuse outputs that would land in a key column, in a column of another type, in a column
    another model wrote, or (``inputs``: the columns the model reads from ``target`` itself)
    in one of the model's own inputs."""
    import pyarrow as pa

    from workbench.core.schema.arrow_types import same_type
    from workbench.core.schema.evolution import storage_schema

    table = target.loc.qualified
    missing = [k for k in keys if k not in target.schema.names]
    if missing:
        raise MergeKeyError(
            f"Table {table!r} lacks the merge key columns {missing} of the input table; write "
            "the predictions into a table keyed the same (into=...)."
        )
    wanted = storage_schema(pa.schema([*model.output_schema(), *provenance_fields(model)]))
    existing = {f.name: f.type for f in target.schema}
    written_by = owners(target)
    for f in wanted:
        if f.name in keys:
            raise OutputColumnTypeError(
                f"Model {model.name!r} output {f.name!r} is a merge key of {table!r}; rename "
                "the model's output."
            )
        if f.name in inputs.values():
            raise OutputColumnOwnedError(
                f"Model {model.name!r} output {f.name!r} is also the column it reads as input; "
                "its next run would read its own output. Rename the output, or write into "
                "another table with into=..."
            )
        owner = written_by.get(f.name)
        if owner is not None and owner != model.name:
            raise OutputColumnOwnedError(
                f"Column {f.name!r} of {table!r} holds the outputs of model {owner!r}; model "
                f"{model.name!r} would overwrite them, and {owner!r}'s provenance columns would "
                "then describe values it did not make. Give the model other output names "
                "(dc.model(..., outputs={...}) or rename them in its function), write into "
                "another table with into=..., or drop the column first to hand it over: "
                "dc.alter_table(..., schema_updates=dc.get_table(...).schema.update("
                f"allow_incompatible_changes=True).remove_field({f.name!r}))."
            )
        if f.name in existing and not same_type(existing[f.name], f.type):
            raise OutputColumnTypeError(
                f"Model {model.name!r} output {f.name!r} is {f.type}, but column {f.name!r} of "
                f"{table!r} is {existing[f.name]}. Rename the output, write into another table "
                "with into=..., or change the column's type with dc.alter_table."
            )


def record_owners(txn: Transaction, change: TableChange, model: Model) -> None:
    """Stage, with the table's change, that ``model`` wrote its columns."""
    from workbench.core.schema.evolution import SchemaPlan
    from workbench.core.transactions.staging import stage_schema_and_properties

    table = change.table
    recorded = {**owners(table), **dict.fromkeys(written_columns(model), model.name)}
    encoded = json.dumps(recorded, sort_keys=True)
    stage_schema_and_properties(txn, change, SchemaPlan(table.schema), {OWNERS_PROPERTY: encoded})
