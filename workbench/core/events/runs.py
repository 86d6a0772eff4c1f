"""``dc.run``: record why catalog changes happen. A run (a pipeline, an inference, a report, a
notebook) emits RUN_STARTED, then RUN_SUCCEEDED or RUN_FAILED, with its steps, metrics and every
catalog transaction committed inside it, to the run log of its catalog."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, TypeVar
from weakref import WeakKeyDictionary

from workbench.core.base.errors import InvalidArgumentError
from workbench.core.catalog.versions import split_key
from workbench.core.events.model import Event, EventType, new_id, this_process
from workbench.core.events.spans import spanned
from workbench.core.events.values import metric_value, parameters_json, row_count
from workbench.core.transactions.history import is_compaction
from workbench.core.transactions.transaction import on_change, on_commit

if TYPE_CHECKING:
    from workbench.core.events.log import EventLog
    from workbench.core.transactions.transaction import Transaction

log = logging.getLogger(__name__)
F = TypeVar("F", bound=Callable[..., Any])
RUN_KINDS = ("pipeline", "inference", "report", "notebook", "job")

_current: ContextVar[Run | None] = ContextVar("workbench_run", default=None)
# transaction -> the runs that did its work, until it commits (or is dropped, aborted)
_writers: WeakKeyDictionary[Transaction, list[Run]] = WeakKeyDictionary()


def current_run() -> Run | None:
    """The run open in this context, if any."""
    return _current.get()


class _RowCount:
    """A step's row count, checked when set (see ``values.row_count``)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, step: Step | None, owner: type) -> Any:
        return self if step is None else step.__dict__.get(self.name)

    def __set__(self, step: Step, value: Any) -> None:
        if step.finished:
            raise InvalidArgumentError(
                f"Step {step.name!r} has finished and been recorded: set {self.name} inside its "
                "with-block."
            )
        step.__dict__[self.name] = row_count(f"step {step.name!r}: {self.name}", value)


class Step:
    """A step of a run; set ``rows_in`` and ``rows_out`` inside its block to record them."""

    rows_in = _RowCount()
    rows_out = _RowCount()

    def __init__(self, name: str):
        self.name = name
        self.finished = False


class Run:
    """An open run: its id, and the methods that add steps and metrics to it."""

    def __init__(self, name: str, kind: str, parameters: Mapping[str, Any], catalog: str | None):
        self.run_id = new_id()
        self.name = name
        self.kind = kind
        self.parameters = dict(parameters)
        self.catalog = catalog
        self.started_ns = time.perf_counter_ns()
        self.ended = False
        self._log: EventLog | None = None

    def emit(
        self, event_type: EventType, payload: Mapping[str, Any], catalog: str | None = None
    ) -> None:
        """Append one event of this run (about ``catalog``, the run's by default); a failing
        run log is reported, never fatal to the run."""
        event = Event(self.run_id, event_type, payload, catalog or self.catalog)
        try:
            if self._log is None:
                from workbench.core.events.config import event_log_for

                self._log = event_log_for(self.catalog)
            self._log.append(event)
        except Exception as e:  # the run's work matters more than its record
            log.warning("Run %s: could not record %s (%s)", self.name, event_type.value, e)

    @contextmanager
    def step(self, name: str) -> Iterator[Step]:
        """A named step: STEP_STARTED now, STEP_FINISHED (with its rows and outcome) after."""
        _text("step name", name)
        self._require_open(f"step {name!r}")
        step = Step(name)
        self.emit(EventType.STEP_STARTED, {"name": name, "status": "running"})
        started = time.perf_counter_ns()
        outcome: dict[str, Any] = {"status": "succeeded"}
        try:
            yield step
        except GeneratorExit:  # a generator run closed early: the step ended, nothing failed
            raise
        except BaseException as e:
            outcome = {"status": "failed", "error_message": _brief(e)}
            raise
        finally:
            step.finished = True
            self.emit(
                EventType.STEP_FINISHED,
                {
                    "name": name,
                    "rows_in": step.rows_in,
                    "rows_out": step.rows_out,
                    "duration_ns": time.perf_counter_ns() - started,
                    **outcome,
                },
            )

    def log_metric(self, name: str, value: float) -> None:
        """Record a named number (a loss, a count, an accuracy; NaN and infinities too, as a
        diverged loss is worth recording) for this run."""
        _text("metric name", name)
        self._require_open(f"metric {name!r}")
        self.emit(EventType.METRIC_LOGGED, {"name": name, "value": metric_value(name, value)})

    def _require_open(self, what: str) -> None:
        if self.ended:
            raise InvalidArgumentError(
                f"Run {self.name!r} has ended, so {what} cannot be added to it: log metrics and "
                "steps inside its with-block (or its decorated function)."
            )


class _RunBlock:
    """What ``dc.run(...)`` returns: a context manager giving the ``Run``, and a decorator
    running the function as a run each time it is called (a coroutine function's run lasts
    until its coroutine finishes, a generator function's until its iteration ends, fails or
    is closed)."""

    def __init__(self, name: str, kind: str, parameters: Mapping[str, Any], catalog: str | None):
        self._args = (name, kind, parameters, catalog)
        self._parameters = parameters_json(parameters)  # refused now, not when it runs
        # the runs open as this block, by run: one per thread or task using it at once
        self._open: dict[Run, AbstractContextManager[Any]] = {}

    def begin(self) -> Run:
        """Start a run: RUN_STARTED (the run is not yet current)."""
        from workbench.core.catalog.registry import catalog_name
        from workbench.core.catalog.scope import get_catalog

        name, kind, parameters, catalog = self._args
        run = Run(name, kind, parameters, catalog_name(get_catalog(catalog)))
        run.emit(
            EventType.RUN_STARTED,
            {
                "name": run.name,
                "kind": run.kind,
                "parameters": self._parameters,
                "notebook": _notebook(),
                **this_process(),
            },
        )
        return run

    @contextmanager
    def active(self, run: Run) -> Iterator[None]:
        """``run`` is the current run (the one commits are linked to) inside the block."""
        token = _current.set(run)
        try:
            yield
        finally:
            _current.reset(token)

    def end(self, run: Run, error: BaseException | None) -> None:
        """End ``run``: RUN_SUCCEEDED, or RUN_FAILED with ``error`` (a generator closed before
        its end raised nothing of its own: it succeeded)."""
        run.ended = True
        payload: dict[str, Any] = {"duration_ns": time.perf_counter_ns() - run.started_ns}
        if error is None or isinstance(error, GeneratorExit):
            run.emit(EventType.RUN_SUCCEEDED, {**payload, "status": "succeeded"})
            return
        run.emit(
            EventType.RUN_FAILED,
            {
                **payload,
                "status": "failed",
                "error_type": type(error).__name__,
                "error_message": _brief(error),
            },
        )

    def __enter__(self) -> Run:
        run = self.begin()
        active = self.active(run)
        active.__enter__()
        self._open[run] = active
        return run

    def __exit__(self, kind: Any, error: BaseException | None, trace: Any) -> None:
        run = _current.get()  # this context's innermost run: the one this block opened
        assert run is not None
        self._open.pop(run).__exit__(None, None, None)
        self.end(run, error)

    def __call__(self, fn: F) -> F:
        if not callable(fn):
            raise InvalidArgumentError(f"dc.run(...) decorates a function, not {fn!r}.")
        return spanned(fn, self)  # type: ignore[return-value]


def run(
    name: str,
    parameters: Mapping[str, Any] | None = None,
    kind: str = "pipeline",
    catalog: str | None = None,
) -> _RunBlock:
    """Record a run named ``name``: ``with dc.run("daily", {"day": d}) as r:`` or as a
    decorator, ``@dc.run("daily")``. Its events go to the run log of ``catalog`` (the default
    catalog unless named); every catalog transaction committed inside it is linked to it."""
    _text("run name", name)
    if kind not in RUN_KINDS:
        raise InvalidArgumentError(f"kind={kind!r} is not a run kind; use one of {RUN_KINDS}.")
    if parameters is not None and not isinstance(parameters, Mapping):
        raise InvalidArgumentError(
            f"parameters={parameters!r} must be a dict of name -> value (or None)."
        )
    return _RunBlock(name, kind, parameters or {}, catalog)


def _note_writer(txn: Transaction) -> None:
    """Note the run open in this context as one doing ``txn``'s work."""
    current = _current.get()
    if current is not None and current not in _writers.setdefault(txn, []):
        _writers[txn].append(current)


def transaction_committed(txn: Transaction, rows: list[dict[str, Any]]) -> None:
    """Link a committed transaction to the runs that did its work and to the run open in this
    context (a run inside a transaction that commits after it ended is linked too); never a
    compaction step that followed a run's write, which is upkeep, not the run's work."""
    linked = _writers.pop(txn, [])
    if is_compaction(r["operation"] for r in rows):
        return
    current = _current.get()
    if current is not None and current not in linked:
        linked.append(current)
    if not linked:
        return
    tables = sorted(
        {f"{r['namespace']}.{split_key(r['table_name'])[0]}" for r in rows if r["table_name"]}
    )
    payload = {
        "transaction_id": txn.id,
        "tables": tables,
        "rows_added": sum(r["rows_added"] or 0 for r in rows),
        "rows_removed": sum(r["rows_removed"] or 0 for r in rows),
    }
    for run in linked:
        run.emit(EventType.TRANSACTION_COMMITTED, payload, catalog=txn.catalog_name)


on_change(_note_writer)
on_commit(transaction_committed)


def _text(what: str, value: object) -> None:
    if not isinstance(value, str) or not value.strip():
        raise InvalidArgumentError(f"The {what} must be a non-empty string, not {value!r}.")


def _brief(error: BaseException) -> str:
    """An error's message, at most 2000 characters (never itself an error)."""
    try:
        text = str(error)
    except Exception:  # an exception whose message cannot be made
        text = f"<{type(error).__name__}: its message could not be read>"
    return text if len(text) <= 2000 else text[:2000] + "..."


def _notebook() -> str | None:
    """The notebook a run comes from, when papermill or Jupyter says so."""
    import os

    return os.environ.get("WORKBENCH_NOTEBOOK") or os.environ.get("JPY_SESSION_NAME")
