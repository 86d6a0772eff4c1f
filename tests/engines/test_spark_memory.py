"""A Spark write through the workbench data source streams: 10M rows written by two tasks and
committed (with the compaction step that follows, in the commit's Python worker) never put a
Python process of Spark over 400 MB nor grow the driver by 200 MB. A worker Spark reuses is
measured above what earlier jobs left in it. Holding the step's rows would add ~250 MB."""

from __future__ import annotations

import threading
import time

import psutil
import pytest

import workbench as dc

pytestmark = [pytest.mark.spark, pytest.mark.local_folder("the memory of local workers")]

ROWS = 10_000_000
WORKER_LIMIT = 400 * 2**20
DRIVER_GROWTH_LIMIT = 200 * 2**20


class PeakMemory:
    """The peak resident memory of this process and of the Python processes below it (Spark's
    workers; one alive before the block, reused, less what it held then), sampled every 20 ms
    while the block runs."""

    def __init__(self) -> None:
        self.me = psutil.Process()
        self.start = self.me.memory_info().rss
        self.driver = self.start
        self.before = dict(self._held())  # what each worker alive now holds
        self.worker = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.driver = max(self.driver, self.me.memory_info().rss)
            for pid, rss in self._held():
                self.worker = max(self.worker, rss - self.before.get(pid, 0))
            time.sleep(0.02)

    def _held(self) -> list[tuple[int, int]]:
        """(pid, resident bytes) of each Python process below this one."""
        found = []
        for child in self.me.children(recursive=True):
            try:
                if "python" in child.name():
                    found.append((child.pid, child.memory_info().rss))
            except psutil.Error:  # a worker that ended meanwhile
                continue
        return found

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        time.sleep(1.0)  # the compaction step after the commit finishes in a worker
        self._stop.set()
        self._thread.join()


def test_a_ten_million_row_spark_write_stays_streaming(catalog, spark):
    from pyspark.sql import functions as F

    frame = spark.range(ROWS, numPartitions=2).select(
        F.col("id"),
        (F.col("id") * 2).alias("twice"),
        F.concat(F.lit("s"), (F.col("id") % 1000).cast("string")).alias("label"),
    )
    with PeakMemory() as peak:
        frame.write.format("workbench").mode("overwrite").save("default.big_ds")
    counted = dc.sql("SELECT count(*) AS n FROM default.big_ds", read_as="pyarrow")
    assert counted.column("n")[0].as_py() == ROWS
    assert peak.worker < WORKER_LIMIT, f"a Spark Python worker peaked at {peak.worker >> 20} MiB"
    growth = peak.driver - peak.start
    assert growth < DRIVER_GROWTH_LIMIT, f"the driver grew by {growth >> 20} MiB"
