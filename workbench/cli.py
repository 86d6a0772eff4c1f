"""``python -m workbench``: the run log (``runs``, ``events``) and reports (``report``) in a
terminal."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from datetime import datetime, timezone

import workbench.api as dc
from workbench.reports.arguments import REPORT_ARGUMENTS, parse_parameters


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m workbench")
    parser.add_argument("--root", help="catalog folder or URI (default: ./.workbench)")
    parser.add_argument("--events", help="run log URI (sqlite:///... or delta:///...)")
    commands = parser.add_subparsers(dest="command", required=True)
    runs = commands.add_parser("runs", help="recorded runs, newest first")
    runs.add_argument("name", nargs="?", help="only runs with this name")
    runs.add_argument("--status", choices=["running", "succeeded", "failed", "abandoned"])
    runs.add_argument("--kind", help="pipeline, inference, report, notebook or job")
    runs.add_argument("--limit", type=int, default=20)
    events = commands.add_parser("events", help="the events of one run, oldest first")
    events.add_argument("run_id")
    report = commands.add_parser("report", help="run a notebook with papermill, render to HTML")
    for flags, options in REPORT_ARGUMENTS:
        report.add_argument(*flags, **options)
    report.add_argument("--as-of", dest="as_of", help="transaction id, tag or time to read")
    return parser


def _time(ns: int | None) -> str:
    if ns is None:
        return "-"
    return datetime.fromtimestamp(ns / 1e9, timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def _duration(ns: int | None) -> str:
    return "-" if ns is None else f"{ns / 1e9:.1f}s"


def _print_table(header: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; exit status 0, or 2 with the error's message."""
    args = _parser().parse_args(argv)
    try:
        if args.root and "://" not in args.root and not os.path.isdir(args.root):
            raise dc.CatalogNotFoundError(
                f"No catalog at --root {args.root!r}: the folder does not exist; check the "
                "path (the catalog of dc.init_local(path) or of %dc init path)."
            )
        dc.init_local(args.root) if args.root else dc.init()
        if args.events:
            dc.init(events=args.events)
        if args.command == "runs":
            found = dc.runs(args.name, args.kind, args.status, limit=args.limit).to_pylist()
            _print_table(
                ["started (UTC)", "name", "kind", "status", "duration", "txns", "run id"],
                [
                    [
                        _time(r["started"]),
                        r["name"],
                        r["kind"],
                        r["status"],
                        _duration(r["duration_ns"]),
                        str(len(r["transactions"])),
                        r["run_id"],
                    ]
                    for r in found
                ],
            )
        elif args.command == "report":
            result = dc.report(
                args.template,
                args.html,
                parse_parameters(args.parameter, args.template),
                args.as_of,
                branch=args.branch,
            )
            start = "an empty catalog" if result.branch == dc.MAIN_BRANCH else "the branch's start"
            state = f"transaction {result.as_of}" if result.as_of else start
            print(f"{result.html}\n{result.notebook}\nas of {state} (branch {result.branch})")
        else:
            for event in dc.run_events(args.run_id).to_pylist():
                payload = next((v for k, v in event.items() if isinstance(v, dict)), {})
                details = ", ".join(f"{k}={v}" for k, v in payload.items() if v is not None)
                print(f"{_time(event['timestamp'])}  {event['event_type']:<22} {details}")
    except dc.WorkbenchError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1 if isinstance(e, dc.ReportFailedError) else 2  # a report that ran and failed
    return 0
