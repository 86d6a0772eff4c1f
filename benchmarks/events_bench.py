"""Run-log benchmark: SQLite and Delta backends side by side, appends and typical queries.

Appends are timed one event per ``append`` (Delta writes one commit per call, so only a subset
is timed there and the full count is extrapolated, clearly labelled) and in batches. Queries run
on a log of ``--events`` events of a realistic mix (several hundred runs with names and kinds,
steps, metrics, transactions touching tables, some failures); each query is repeated with the
backends alternating first, and the target is Delta's p95 within 2x of SQLite's. Both backends
must give the same answers. Run with ``python -m benchmarks.events_bench [--events N]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.timing import seconds
from workbench.core.events.config import open_event_log
from workbench.core.events.log import EventLog
from workbench.core.events.model import Event, EventType

DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "events.json"
BACKENDS = ("sqlite", "delta")
TARGET = 2.0  # Delta p95 / SQLite p95, per query
BASE = 1_700_000_000_000_000_000  # ns: the first run's start
RUN_SPACING = 60 * 10**9  # ns between run starts
NAMES = tuple(f"{stem}-{i}" for stem in ("ingest", "train", "score", "report") for i in range(6))
KINDS = ("pipeline", "inference", "report", "notebook")
TABLES = tuple(f"{ns}.{t}" for ns in ("sales", "ml", "ops") for t in ("a", "b", "c", "d"))
FAILED_EVERY = 9  # every 9th run fails
OPEN_EVERY = 50  # every 50th run has no ending yet (on another host, so it stays running)
E = EventType


@dataclasses.dataclass(frozen=True)
class Workload:
    """The events to store and the arguments of the queries to time."""

    events: list[Event]
    name: str
    since: int
    run_id: str
    table: str


def _uri(backend: str, folder: Path, label: str) -> str:
    """A fresh store's URI in ``folder``."""
    suffix = ".db" if backend == "sqlite" else ""
    return f"{backend}://{folder / f'{label}-{backend}{suffix}'}"


# ---------------------------------------------------------------- data


def _body(run: int, count: int) -> list[tuple[EventType, dict[str, Any]]]:
    """A run's middle events: steps around metrics, a transaction every 25 events."""
    body: list[tuple[EventType, dict[str, Any]]] = []
    for i in range(count):
        if i % 25 == 0:
            tables = [TABLES[(run + i) % len(TABLES)], TABLES[(run * 7 + i) % len(TABLES)]]
            payload = {"transaction_id": f"tx-{run}-{i}", "tables": sorted(set(tables))}
            body.append((E.TRANSACTION_COMMITTED, {**payload, "rows_added": 1000}))
        elif i % 10 == 1:
            body.append((E.STEP_STARTED, {"name": f"step-{i}", "status": "running"}))
        elif i % 10 == 9:
            step = {"name": f"step-{i - 8}", "status": "ok", "rows_in": 10, "rows_out": 10}
            body.append((E.STEP_FINISHED, step))
        else:
            body.append((E.METRIC_LOGGED, {"name": f"m{i % 7}", "value": float(i)}))
    return body


def _run_events(run: int, count: int) -> list[Event]:
    """One run's ``count`` events (at least its start), spaced 1 ms apart."""
    run_id = f"run-{run:06d}"
    start = BASE + run * RUN_SPACING
    started = {"name": NAMES[run % len(NAMES)], "kind": KINDS[run % len(KINDS)], "pid": 1}
    started |= {"host": "bench-host-elsewhere", "parameters": json.dumps({"run": run})}
    kinds = [(E.RUN_STARTED, started), *_body(run, max(count - 2, 0))]
    if run % OPEN_EVERY != 0 and count > 1:
        failed = run % FAILED_EVERY == 0
        ending = {"status": "failed" if failed else "succeeded", "duration_ns": count * 10**6}
        if failed:
            ending |= {"error_type": "ValueError", "error_message": f"bad input in run {run}"}
        kinds.append((E.RUN_FAILED if failed else E.RUN_SUCCEEDED, ending))
    return [
        Event(run_id, kind, payload, "default", start + i * 10**6, f"{start + i:020d}{run:012x}")
        for i, (kind, payload) in enumerate(kinds)
    ]


def workload(count: int, runs: int) -> Workload:
    """``count`` events over ``runs`` runs, in time order, and query arguments that select a
    part of them: one run name, the newer half of the runs, a middle run, one table."""
    runs = max(1, min(runs, count))
    sizes = [count // runs + (1 if r < count % runs else 0) for r in range(runs)]
    events = [e for r, size in enumerate(sizes) for e in _run_events(r, size)]
    events.sort(key=lambda e: (e.timestamp, e.event_id))
    middle = runs // 2
    return Workload(events, NAMES[0], BASE + middle * RUN_SPACING, f"run-{middle:06d}", TABLES[1])


# ---------------------------------------------------------------- appends


def time_single(backend: str, events: list[Event], folder: Path) -> list[float]:
    """Seconds of each ``append`` call appending ``events`` one by one to a fresh store."""
    log = open_event_log(_uri(backend, folder, f"single{len(events)}"))
    return [seconds(lambda e=e: log.append(e)) for e in events]


def time_batched(log: EventLog, events: list[Event], batch: int) -> float:
    """Seconds to append ``events`` in batches of ``batch`` to ``log``."""
    chunks = [events[i : i + batch] for i in range(0, len(events), batch)]
    return seconds(lambda: [log.append(chunk) for chunk in chunks])


def append_rows(
    data: Workload, folder: Path, single: dict[str, int], batch: int
) -> tuple[list[dict[str, Any]], dict[str, EventLog]]:
    """Append timings per backend, and the batch-filled logs the queries then run on."""
    rows, logs = [], {}
    total = len(data.events)
    for backend in BACKENDS:
        subset = min(single[backend], total)
        each = time_single(backend, data.events[:subset], folder)
        row = _append_row(backend, f"single x{subset}", subset, sum(each), total)
        rows.append(row | {"us_per_event_last_tenth": _tail_mean(each) * 1e6})
        logs[backend] = open_event_log(_uri(backend, folder, "batched"))
        spent = time_batched(logs[backend], data.events, batch)
        rows.append(_append_row(backend, f"batches of {batch}", total, spent, total))
        print(f"{backend}: appends done", file=sys.stderr)
    return rows, logs


def _tail_mean(values: list[float]) -> float:
    """The mean of the last tenth of ``values``: whether appends slow down as the log grows."""
    tail = values[-max(1, len(values) // 10) :]
    return sum(tail) / len(tail)


def _append_row(backend: str, mode: str, count: int, spent: float, total: int) -> dict[str, Any]:
    """One append measurement; the time for ``total`` events is extrapolated when fewer ran."""
    return {
        "backend": backend,
        "mode": mode,
        "events": count,
        "seconds": spent,
        "us_per_event": spent / count * 1e6,
        "seconds_for_all": spent / count * total,
        "extrapolated": count < total,
    }


# ---------------------------------------------------------------- queries


def queries(data: Workload) -> dict[str, Callable[[EventLog], Any]]:
    """The typical queries, by label."""
    return {
        "runs()": lambda log: log.runs(),
        f"runs(name={data.name!r})": lambda log: log.runs(name=data.name),
        "runs(status='failed')": lambda log: log.runs(status="failed"),
        "runs(since=mid)": lambda log: log.runs(since=data.since),
        "events(run_id)": lambda log: log.events(data.run_id),
        "latest()": lambda log: log.latest(),
        f"touching({data.table!r})": lambda log: log.touching(data.table),
    }


def check_answers(logs: dict[str, EventLog], data: Workload) -> list[str]:
    """The queries whose answers differ between the backends (none, or the timings mislead)."""
    wrong = []
    for label, query in queries(data).items():
        answers = [query(logs[b]) for b in BACKENDS]
        if any(a != answers[0] for a in answers[1:]):
            wrong.append(label)
    return wrong


def cold_first_query(uri: str) -> float:
    """Seconds to open a store and answer ``runs()``: a new process's first query."""
    return seconds(lambda: open_event_log(uri).runs())


def time_queries(
    logs: dict[str, EventLog], data: Workload, repeats: int
) -> dict[str, dict[str, list[float]]]:
    """Seconds per repetition of each query per backend, after one warm-up call each; the
    backend going first alternates, so drift in machine load hits both alike."""
    samples: dict[str, dict[str, list[float]]] = {}
    for label, query in queries(data).items():
        samples[label] = {b: [] for b in BACKENDS}
        for b in BACKENDS:
            query(logs[b])
        for i in range(repeats):
            for b in BACKENDS if i % 2 == 0 else BACKENDS[::-1]:
                samples[label][b].append(seconds(lambda b=b, q=query: q(logs[b])))
    return samples


def time_cold(logs: dict[str, EventLog], repeats: int) -> dict[str, list[float]]:
    """Seconds of ``repeats`` cold first queries per backend, alternating backends."""
    times: dict[str, list[float]] = {b: [] for b in BACKENDS}
    for i in range(repeats):
        for b in BACKENDS if i % 2 == 0 else BACKENDS[::-1]:
            times[b].append(cold_first_query(logs[b].uri))
    return times


def summarize(samples: dict[str, dict[str, list[float]]]) -> list[dict[str, Any]]:
    """p50 and p95 (ms) per query and backend, Delta/SQLite at p95 and the target's verdict."""
    rows = []
    for label, per_backend in samples.items():
        row: dict[str, Any] = {"query": label}
        for b in BACKENDS:
            row[f"{b}_p50_ms"] = float(np.percentile(per_backend[b], 50)) * 1e3
            row[f"{b}_p95_ms"] = float(np.percentile(per_backend[b], 95)) * 1e3
        row["ratio_p95"] = row["delta_p95_ms"] / row["sqlite_p95_ms"]
        row["status"] = "PASS" if row["ratio_p95"] <= TARGET else "MISS"
        rows.append(row)
    return rows


# ---------------------------------------------------------------- report


def markdown(appends: list[dict[str, Any]], query_rows: list[dict[str, Any]], meta: dict) -> str:
    """The report: machine load, an append table and a query table with PASS/MISS."""
    lines = [
        f"{meta['events']} events, {meta['runs']} runs, {meta['repeats']} repetitions; "
        f"load average (1/5/15 min) at start {_load(meta['loadavg_start'])}, "
        f"at end {_load(meta['loadavg_end'])}; {meta['cpu_count']} cores",
        "",
        "| backend | appends | events timed | seconds | µs/event | µs/event, last tenth "
        f"| seconds for {meta['events']} |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in appends:
        mark = " (extrapolated at the mean rate)" if r["extrapolated"] else ""
        tail = r.get("us_per_event_last_tenth")
        lines.append(
            f"| {r['backend']} | {r['mode']} | {r['events']} | {r['seconds']:.2f} | "
            f"{r['us_per_event']:.0f} | {'' if tail is None else f'{tail:.0f}'} | "
            f"{r['seconds_for_all']:.1f}{mark} |"
        )
    lines += [
        "",
        "| query | SQLite p50 (ms) | SQLite p95 (ms) | Delta p50 (ms) | Delta p95 (ms) "
        f"| Delta/SQLite p95 | target <= {TARGET:g}x |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in query_rows:
        lines.append(
            f"| {r['query']} | {r['sqlite_p50_ms']:.2f} | {r['sqlite_p95_ms']:.2f} | "
            f"{r['delta_p50_ms']:.2f} | {r['delta_p95_ms']:.2f} | {r['ratio_p95']:.2f}x | "
            f"{r['status']} |"
        )
    return "\n".join(lines)


def _load(values: Sequence[float]) -> str:
    return "/".join(f"{v:.2f}" for v in values)


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Build the workload, time appends and queries on both backends, return the report."""
    meta = {"events": args.events, "runs": args.runs, "repeats": args.repeats}
    meta |= {"cpu_count": os.cpu_count(), "loadavg_start": os.getloadavg()}
    data = workload(args.events, args.runs)
    single = {"sqlite": args.single_sqlite, "delta": args.single_delta}
    with tempfile.TemporaryDirectory(prefix="events-bench-") as folder:
        appends, logs = append_rows(data, Path(folder), single, args.batch)
        wrong = check_answers(logs, data)
        samples = time_queries(logs, data, args.repeats)
        samples["cold open + runs()"] = time_cold(logs, max(3, args.repeats // 3))
        query_rows = summarize(samples)
    meta["loadavg_end"] = os.getloadavg()
    return {"meta": meta, "appends": appends, "queries": query_rows, "wrong_answers": wrong}


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Parse the command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000, help="events in the log")
    parser.add_argument("--runs", type=int, default=400, help="runs the events belong to")
    parser.add_argument("--repeats", type=int, default=30, help="repetitions per query")
    parser.add_argument("--batch", type=int, default=1000, help="events per batched append")
    parser.add_argument("--single-sqlite", type=int, default=10_000, help="single appends timed")
    parser.add_argument("--single-delta", type=int, default=1000, help="single appends timed")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="JSON report path")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark, write the JSON report, print the Markdown tables."""
    args = parse_args(argv)
    report = run(args)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(markdown(report["appends"], report["queries"], report["meta"]))
    for label in report["wrong_answers"]:
        print(f"WRONG ANSWER: the backends differ on {label}", file=sys.stderr)
    return 1 if report["wrong_answers"] else 0


if __name__ == "__main__":
    sys.exit(main())
