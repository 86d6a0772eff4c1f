"""Kill -9 runs of a streaming query ``default.src`` -> ``default.dst`` (``format("workbench")``
both ways), for the streaming tests and ``benchmarks/streaming_bench.py``.

The query runs in a process of its own (``python -m tests.engines.stream_kills ROOT
CHECKPOINT``), in a process group with its JVM and Python workers, killed as a whole with
SIGKILL at a random moment (after 0 to 2 further micro-batches finished, and a random pause)
while this process appends new rows to ``src``, then started again from its checkpoint. After
every kill the rows of ``dst`` are exactly those of ``src`` up to the source offset of the last
micro-batch the sink committed (offsets and rows never apart); after the last, a run from
the same checkpoint in the caller's Spark session drains ``src``, and every row of it is then
in ``dst`` exactly once.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

import workbench as dc
from workbench.engines.spark.source_options import SourceOptions
from workbench.engines.spark.streams import app_id

ROOT = Path(__file__).resolve().parents[2]
STARTED = "started"  # what the query process prints once its query runs
FINISHED = "batch"  # what it prints as each micro-batch finishes
APPEND_SECONDS = 0.5  # the pause between two appends to src
LEASE_SECONDS = "2"  # a killed sink's table lease lapses soon (default 60 s)


@dataclass
class KillReport:
    kills: int
    batches_committed: int  # the sink's last committed micro-batch id, plus one
    rows: int  # rows of src, each found once in dst
    seconds: float


def spawn(root: Path, checkpoint: Path) -> subprocess.Popen:
    """The query process, leading a process group of its own (its JVM and Python workers);
    its log (Spark's) goes to a file beside the checkpoint."""
    env = {**os.environ, "WORKBENCH_LEASE_SECONDS": LEASE_SECONDS}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    args = [sys.executable, "-m", "tests.engines.stream_kills", root, checkpoint]
    with open(log_of(checkpoint), "a") as log:
        return subprocess.Popen(
            [str(a) for a in args],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=log,
            start_new_session=True,
            text=True,
        )


@contextmanager
def running(root: Path, checkpoint: Path) -> Iterator[subprocess.Popen]:
    """The query process for the block; killed with its process group (SIGKILL) after it."""
    query = spawn(root, checkpoint)
    try:
        yield query
    finally:
        with suppress(ProcessLookupError):
            os.killpg(query.pid, signal.SIGKILL)
        query.wait()


def log_of(checkpoint: Path) -> Path:
    return checkpoint.parent / f"{checkpoint.name}.log"


def _log_tail(checkpoint: Path) -> str:
    return log_of(checkpoint).read_text()[-3000:]


def killed_runs(root: Path, kills: int, seed: int = 0, rows: int = 20) -> KillReport:
    """Kill the query ``kills`` times at random moments while ``rows`` rows at a time are
    appended to ``src``, then drain; checks the rows after each kill and at the end."""
    rng = random.Random(seed)
    checkpoint = root.parent / f"{root.name}-checkpoint"
    started = time.monotonic()
    dc.write(_rows(0, rows), "src")
    appender = _Appender(rows)
    appender.start()
    try:
        for _ in range(kills):
            with running(root, checkpoint) as query:
                _wait_for(query, checkpoint, STARTED)
                for _ in range(rng.randint(0, 2)):
                    _wait_for(query, checkpoint, FINISHED)
                time.sleep(rng.uniform(0, 1.5))
            check_offsets_match_rows(checkpoint)
    finally:
        appender.stop()
    drain = _start(checkpoint, drain=True)
    assert drain.awaitTermination(600), "the drain did not finish within 10 minutes"
    source = sorted(dc.read("src", read_as="pyarrow")["id"].to_pylist())
    landed = sorted(dc.read("dst", read_as="pyarrow")["id"].to_pylist())
    assert landed == source, f"{len(landed)} rows in dst, {len(source)} in src"
    assert len(set(landed)) == len(landed)
    last = dc.idempotency_version(_app(checkpoint))
    committed = -1 if last is None else last + 1
    return KillReport(kills, committed, len(source), time.monotonic() - started)


def check_offsets_match_rows(checkpoint: Path) -> None:
    """``dst`` holds exactly the rows of ``src`` up to the source offset (a table version) of
    the last micro-batch the sink committed: none if it committed none."""
    last = dc.idempotency_version(_app(checkpoint))
    landed = sorted(dc.read("dst", read_as="pyarrow")["id"].to_pylist()) if _has_dst() else []
    if last is None:
        assert landed == [], f"{len(landed)} rows in dst before any committed micro-batch"
        return
    lines = (checkpoint / "offsets" / str(last)).read_text().splitlines()
    version = json.loads(lines[-1])["version"]  # the batch's end offset (one source)
    source = sorted(dc.read("src", version=version, read_as="pyarrow")["id"].to_pylist())
    message = f"batch {last}: {len(landed)} rows in dst, {len(source)} in src@{version}"
    assert landed == source, message


def _has_dst() -> bool:
    return dc.table_exists("dst")


def _app(checkpoint: Path) -> str:
    """The sink's idempotency app, as the query derives it from its checkpoint location."""
    return app_id(SourceOptions("dst", "default", checkpoint=str(checkpoint)))


def _rows(first: int, count: int) -> pa.Table:
    ids = pa.array(range(first, first + count), pa.int64())
    return pa.table({"id": ids, "v": pa.array([f"v{i}" for i in ids.to_pylist()])})


def _wait_for(query: subprocess.Popen, checkpoint: Path, said: str) -> None:
    """Wait until the query process says ``said`` (its query runs, a micro-batch finished)."""
    assert query.stdout is not None
    for line in query.stdout:
        if line.strip() == said:
            return
    query.wait()
    raise AssertionError(f"the query process ended: {_log_tail(checkpoint)}")


class _Appender(threading.Thread):
    """Appends ``rows`` new rows to ``src`` again and again until stopped."""

    def __init__(self, rows: int):
        super().__init__(daemon=True)
        self.rows, self.next = rows, rows
        self.stopping = threading.Event()
        self.failed: BaseException | None = None

    def run(self) -> None:
        try:
            while not self.stopping.wait(APPEND_SECONDS):
                dc.write(_rows(self.next, self.rows), "src", mode="append")
                self.next += self.rows
        except BaseException as e:  # reported by stop()
            self.failed = e

    def stop(self) -> None:
        self.stopping.set()
        self.join()
        if self.failed is not None:
            raise self.failed


def _start(checkpoint: Path | str, drain: bool = False):
    """Start the query ``src`` -> ``dst`` from ``checkpoint`` in this process's Spark session
    (the default catalog's tables): until stopped, or (``drain``) until ``src`` as it is now
    is in ``dst``."""
    from workbench.engines.spark.session import spark_session

    source = spark_session().readStream.format("workbench").load("default.src")
    writer = source.writeStream.format("workbench").option("checkpointLocation", str(checkpoint))
    if drain:
        writer = writer.trigger(availableNow=True)
    return writer.start("default.dst")


def _query(root: str, checkpoint: str) -> None:
    """The query process: run the query on the catalog at ``root`` until killed, saying when
    it runs and as each micro-batch finishes."""
    dc.init_local(root)
    query = _start(checkpoint)
    print(STARTED, flush=True)
    finished = None
    while query.isActive:  # a line as each micro-batch finishes
        progress = query.lastProgress
        if progress is not None and progress["batchId"] != finished:
            finished = progress["batchId"]
            print(FINISHED, flush=True)
        time.sleep(0.05)
    query.awaitTermination()


if __name__ == "__main__":
    _query(*sys.argv[1:3])
