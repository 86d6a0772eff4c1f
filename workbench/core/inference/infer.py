"""``dc.infer``: run a model over a table's rows on an engine and merge its outputs back by
merge key, in one catalog transaction recorded as an inference run."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any

from workbench.core.base.arguments import optional_whole_number, row_filter, row_filter_on
from workbench.core.base.errors import InvalidArgumentError, MergeKeyError, TableValidationError
from workbench.core.base.progress import progress as progress_bar
from workbench.core.catalog.folders import staging_folder
from workbench.core.catalog.locations import Location, OpenTable, locate
from workbench.core.data.engine import get_engine
from workbench.core.data.predict_plan import (
    DEFAULT_BATCH_SIZE,
    PredictPlan,
    result_schema,
)
from workbench.core.delta.data_files import DataFile, write_part
from workbench.core.events.runs import run
from workbench.core.inference.resolve import (
    bind_inputs,
    fetched_inputs,
    named_inputs,
    resolve_model,
)
from workbench.core.inference.result import InferResult
from workbench.core.inference.targets import check_target, record_owners
from workbench.core.inference.work import Scope, Work, scope_of, select_here, select_on_engine
from workbench.core.inference.worker import typed_by_first_batch, worker_error
from workbench.core.schema.table_schema import Field, Schema
from workbench.core.transactions.context import operation
from workbench.core.transactions.table_versions import for_read, open_table

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.dataset as pads

    from workbench.core.data.engine import Engine
    from workbench.core.inference.model import Model
    from workbench.core.storage.store import Storage
    from workbench.core.transactions.transaction import Transaction

INFER_OPERATION = "INFER"


def infer(
    table: str,
    model: Model | str,
    inputs: str | Sequence[str] | Mapping[str, str] | None = None,
    namespace: str | None = None,
    into: str | None = None,
    engine: str = "daft",
    batch_size: int | None = None,
    concurrency: int | None = None,
    where: pads.Expression | None = None,
    force: bool = False,
    catalog: str | None = None,
    *,
    progress: bool = True,
) -> InferResult:
    """Run ``model`` (a ``dc.model`` or a built-in model's name) over the rows of ``table`` on
    ``engine`` and MERGE its outputs by the table's merge keys into the table (new columns by
    schema evolution) or into the table ``into`` ("ns.table", created if missing), in one
    catalog transaction whose log row records the model. ``inputs`` binds model inputs to
    columns (a dict, or a list of columns in the model's input order); ``where`` (a pyarrow
    expression, e.g. ``pc.field("lang") == "en"``) limits the rows. Rows whose inputs and
    model version are unchanged since the last run are skipped unless ``force``. E.g.
    ``dc.infer("docs", dc.model(fn, inputs=["text"]))``."""
    chosen = resolve_model(model)
    batch_size = optional_whole_number("batch_size", batch_size, minimum=1) or DEFAULT_BATCH_SIZE
    concurrency = optional_whole_number("concurrency", concurrency, minimum=1)
    row_filter("where", where)
    runner = get_engine(engine)
    loc = locate(table, namespace, catalog)
    target_loc = _into(into, loc, catalog)
    parameters = _run_parameters(chosen, loc, target_loc, runner, force, where)
    started = time.perf_counter()
    message = f"infer {chosen.name} on {loc.qualified}"
    with (
        run(f"infer {chosen.name}", parameters, kind="inference", catalog=catalog) as current,
        _staging(runner, loc) as folder,
        operation(loc.catalog, message) as txn,
    ):
        txn.require_writable()
        target_loc = for_read(txn, target_loc, None)
        change = txn.lease_table(target_loc.namespace, target_loc.name)  # writers queue behind
        source = open_table(loc)
        keys = _keys(source)
        row_filter_on("where", where, source.schema.arrow, loc.qualified)
        chosen = named_inputs(chosen, inputs)
        bindings = bind_inputs(chosen, inputs, source)
        fetch = fetched_inputs(chosen, bindings, source)
        target = change.table if change.entry is not None else None
        read_here = bindings if target_loc.qualified == loc.qualified else {}
        if target is not None and chosen.outputs_known:
            check_target(chosen, keys, target, read_here)
        with current.step("read") as step:
            scope = scope_of(chosen, source, target, keys, bindings, fetch, force)
            work = _select(runner, source, scope, where, folder)
            step.rows_in, step.rows_out = work.in_scope, work.count
        predicted = work.count
        skipped = work.in_scope - predicted
        if not predicted:
            return _result(loc, chosen, runner, 0, skipped, started, None, None)
        plan = _plan(chosen, keys, work, fetch, (batch_size, concurrency), loc.catalog.storage)
        with current.step("predict") as step:
            step.rows_in = predicted
            first = None
            if not chosen.outputs_known:  # typed by its first batch, predicted here
                chosen, first = typed_by_first_batch(chosen, work.head, plan)
                if target is not None:
                    check_target(chosen, keys, target, read_here)
            outputs, made = _predict(runner, chosen, work, plan, progress, first, folder)
            step.rows_out = made
        with current.step("merge") as step:
            step.rows_in = made
            schema = result_schema(chosen, plan)
            written = _merge(txn, outputs, schema, target_loc, keys, exists=target is not None)
            step.rows_out = written
        record_owners(txn, change, chosen)
        txn.record(change, INFER_OPERATION, engine=runner.name)
        counts = {"rows_predicted": predicted, "rows_skipped": skipped}
        txn.describe(change, {**_model_facts(chosen, bindings, source, runner), **counts})
        version = change.version
    return _result(loc, chosen, runner, predicted, skipped, started, txn.id, version)


def _run_parameters(
    chosen: Model, loc: Location, target: Location, runner: Engine, force: bool, where: Any
) -> dict[str, Any]:
    """What the run records of a ``dc.infer`` call."""
    return {
        "table": loc.qualified,
        "into": target.qualified,
        "model": chosen.name,
        "model_version": chosen.version,
        "model_parameters": dict(chosen.parameters),
        "outputs": chosen.output_schema().names if chosen.outputs_known else None,
        "engine": runner.name,
        "force": bool(force),
        "where": None if where is None else str(where),
    }


def _model_facts(
    chosen: Model, bindings: dict[str, str], source: OpenTable, runner: Engine
) -> dict[str, Any]:
    """The model, its inputs and the input table's version, as the log row records them."""
    return {
        "model": chosen.name,
        "model_version": chosen.version,
        "parameters": dict(chosen.parameters),
        "outputs": chosen.output_schema().names,
        "inputs": bindings,
        "input_table": source.loc.qualified,
        "input_table_version": source.version,
        "engine": runner.name,
    }


def _plan(
    chosen: Model,
    keys: list[str],
    work: Work,
    fetch: tuple[str, ...],
    sizes: tuple[int, int | None],
    storage: Storage,
) -> PredictPlan:
    """How the engine runs the model: the work's keys and inputs, ``sizes`` (rows a batch,
    concurrent workers), the inputs to fetch from ``storage``."""
    batch_size, concurrency = sizes
    key_types = work.key_types(keys)
    return PredictPlan(
        tuple(keys), dict(chosen.inputs), batch_size, concurrency, fetch, storage, key_types
    )


def _select(
    runner: Engine, source: OpenTable, scope: Scope, where: Any, folder: str | None
) -> Work:
    """The rows to predict: chosen by the engine's tasks when it stages files (its rows stay
    there), else in this process."""
    if folder is not None and scope.elsewhere is None:
        return select_on_engine(runner, source, scope, where, folder)
    return select_here(source, scope, where)


def _into(into: str | None, loc: Location, catalog: str | None) -> Location:
    """Where the outputs go: the table itself, or ``into`` ("ns.table" or a table of the
    source's namespace) in the same catalog."""
    if into is None:
        return loc
    if not isinstance(into, str) or not into:
        raise InvalidArgumentError(f"into={into!r} must name a table, e.g. into='ns.predictions'.")
    namespace, _, name = into.rpartition(".")
    return locate(name, namespace or loc.namespace, catalog)


def _keys(source: OpenTable) -> list[str]:
    name = source.loc.qualified
    if source.schemaless:
        raise TableValidationError(
            f"Table {name!r} is schemaless (it records files, not rows), so dc.infer has no "
            "rows to run a model on; import the files as a media table first."
        )
    keys = source.schema.merge_keys
    if not keys:
        raise MergeKeyError(
            f"Table {name!r} has no merge keys, so dc.infer cannot merge predictions back to "
            "their rows. Mark a unique column as merge key: dc.alter_table("
            f"{source.loc.table_name!r}, schema_updates=<schema>.update().update_field("
            "..., is_merge_key=True)) or create the table with dc.Schema.of([dc.Field.of("
            "pa.field('id', pa.int64()), is_merge_key=True), ...])."
        )
    return keys


def _staging(runner: Engine, loc: Location) -> AbstractContextManager[str | None]:
    """Where the engine's workers write predictions (removed when the call ends), or None
    when the engine hands them to this process."""
    if runner.merges_predictions:
        return staging_folder(loc.catalog)
    return nullcontext(None)


def _predict(
    runner: Engine,
    model: Model,
    work: Work,
    plan: PredictPlan,
    progress: bool,
    first: pa.Table | None,
    folder: str | None,
) -> tuple[Any, int]:
    """The engine's predictions for the work rows and their count (``first``: those already
    made for the first rows): an Arrow table gathered here, or, with a staging ``folder``, the
    engine's dataset over the files its workers wrote there. Work the engine chose is
    predicted there whole (the first batch again, if it was typed here)."""
    import pyarrow as pa

    schema = result_schema(model, plan)
    chosen_here = isinstance(work.rows, pa.Table)
    first = first if chosen_here else None
    gathered = [] if first is None else [first.cast(schema)]
    files = []
    if folder is not None and first is not None:
        files.append(write_part(first, Schema.of(schema), folder, 0, None, plan.storage))
    done = 0 if first is None else first.num_rows
    label = f"{model.name} on {runner.name}"
    with progress_bar(work.count, label, "rows", min_total=1, enabled=progress) as advance:
        advance(done)
        try:
            if done < work.count:
                rest = runner.from_arrow(work.rows.slice(done)) if chosen_here else work.rows
                if folder is None:
                    for part in runner.predict(rest, model, plan):
                        gathered.append(part.cast(schema))
                        advance(part.num_rows)
                else:
                    for written in runner.predict_files(rest, model, plan, schema, folder):
                        files.append(written)
                        advance(written.rows)
        except Exception as e:
            failure = worker_error(e)
            if failure is None:
                raise
            raise failure from None
    if folder is None:
        table = pa.concat_tables(gathered) if gathered else schema.empty_table()
        return table, table.num_rows
    staged = [DataFile.from_written(f, folder) for f in files]
    dataset = runner.read_staged(staged, folder, schema, plan.storage)
    return dataset, sum(f.rows for f in staged)


def _merge(
    txn: Transaction,
    outputs: Any,
    schema: pa.Schema,
    loc: Location,
    keys: list[str],
    exists: bool,
) -> int:
    """MERGE the predictions (in ``schema``; Arrow, or the engine's dataset) into the target
    table in the open transaction (creating it, keyed like the input, when it does not
    exist)."""
    from workbench.core.io.writer import write

    if exists:
        result = write(outputs, loc.table_name, loc.namespace, loc.catalog_name, mode="merge")
    else:
        declared = Schema.of([Field.of(f, is_merge_key=f.name in keys) for f in schema])
        result = write(
            outputs, loc.table_name, loc.namespace, loc.catalog_name, mode="create", schema=declared
        )
    return result.rows_added + result.rows_updated


def _result(
    loc: Location,
    model: Model,
    runner: Engine,
    predicted: int,
    skipped: int,
    started: float,
    transaction_id: str | None,
    version: int | None,
) -> InferResult:
    return InferResult(
        table=loc.qualified,
        model=model.name,
        model_version=model.version,
        engine=runner.name,
        rows_predicted=predicted,
        rows_skipped=skipped,
        seconds=time.perf_counter() - started,
        transaction_id=transaction_id,
        table_version=version,
    )
