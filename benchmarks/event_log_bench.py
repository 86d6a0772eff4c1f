"""Run-log benchmarks: appends (one event per call and in batches) and query latency (p95) of
the SQLite and Delta backends over the same history. Target: Delta within 2x of SQLite at p95.

Run with ``python -m benchmarks.event_log_bench [--events N] [--single N] [--rounds R]``. The
history is runs of ten events (start, steps, a metric, transactions touching a few tables, an
ending) under five run names.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from workbench.core.events.log import EventLog, open_event_log
from workbench.core.events.model import Event, EventType

NAMES = ("ingest", "train", "score", "nightly-report", "backfill")
TABLES = ("sales.orders", "sales.customers", "ml.features", "ml.predictions")
BATCH = 1000
QUERIES: dict[str, Callable[[EventLog], Any]] = {
    "runs": lambda log: log.runs(),
    "runs_by_name": lambda log: log.runs(name="train"),
    "runs_failed": lambda log: log.runs(status="failed"),
    "latest": lambda log: log.latest(),
    "touching": lambda log: log.touching("ml.features"),
    "events": lambda log: log.events("run-000007"),
}


def history(count: int) -> list[Event]:
    """``count`` events: runs of ten events each."""
    events: list[Event] = []
    t = time.time_ns()
    for n in range(count // 10):
        run_id, name = f"run-{n:06d}", NAMES[n % len(NAMES)]
        start = {"name": name, "kind": "pipeline", "host": "bench-host", "pid": 1}
        events.append(Event(run_id, EventType.RUN_STARTED, start, timestamp=t))
        for step in range(3):
            events.append(Event(run_id, EventType.STEP_STARTED, {"name": f"s{step}"}))
            events.append(Event(run_id, EventType.STEP_FINISHED, {"name": f"s{step}"}))
        events.append(Event(run_id, EventType.METRIC_LOGGED, {"name": "rows", "value": 1.0 * n}))
        tables = [TABLES[n % 4], TABLES[(n + 1) % 4]]
        tx = {"transaction_id": f"tx-{n}", "tables": tables}
        events.append(Event(run_id, EventType.TRANSACTION_COMMITTED, tx))
        ending = EventType.RUN_FAILED if n % 7 == 0 else EventType.RUN_SUCCEEDED
        events.append(Event(run_id, ending, {"status": ending.value, "duration_ns": 10}))
        t += 1000
    return events


def _seconds(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def bench(uri_of: Callable[[str], str], events: list[Event], single: int, rounds: int) -> dict:
    """Append and query timings of one backend."""
    batched = open_event_log(uri_of("batched"))
    result: dict[str, Any] = {
        f"append_{len(events)}_batched_s": _seconds(
            lambda: [batched.append(events[i : i + BATCH]) for i in range(0, len(events), BATCH)]
        )
    }
    singly = open_event_log(uri_of("singly"))
    result[f"append_{single}_singly_s"] = _seconds(
        lambda: [singly.append(e) for e in events[:single]]
    )
    cold = open_event_log(uri_of("batched"))
    result["first_runs_query_ms"] = 1000 * _seconds(cold.runs)
    for name, query in QUERIES.items():
        times = sorted(_seconds(lambda q=query: q(batched)) for _ in range(rounds))
        result[f"{name}_p95_ms"] = 1000 * times[int(0.95 * (len(times) - 1))]
        result[f"{name}_median_ms"] = 1000 * statistics.median(times)
    return result


def main() -> None:
    """Benchmark both backends and print the results as JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--single", type=int, default=1_000, help="events appended one by one")
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    events = history(args.events)
    results = {}
    with tempfile.TemporaryDirectory() as folder:
        results["sqlite"] = bench(
            lambda n: f"sqlite://{Path(folder, n)}.db", events, args.single, args.rounds
        )
        results["delta"] = bench(
            lambda n: f"delta://{Path(folder, n)}", events, args.single, args.rounds
        )
    results["delta_over_sqlite_p95"] = {
        q: round(results["delta"][f"{q}_p95_ms"] / results["sqlite"][f"{q}_p95_ms"], 2)
        for q in QUERIES
    }
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
