"""The clusters of ``--cluster`` are real (``make test-cluster``): Spark runs tasks in two
executors under two worker processes, Ray has two alive nodes, and writes and MERGEs over S3
send their files from processes of the clusters, not from this one."""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress

import psutil
import pytest

import workbench as dc
from tests.engine_parity import KEYED
from workbench.core.catalog.locations import locate
from workbench.core.transactions.table_versions import open_table

pytestmark = pytest.mark.cluster
PYTHON = os.path.realpath(sys.executable)


def descends_from(pid: int, ancestors: dict[str, int]) -> str | None:
    """The name of the ancestor (a cluster process) ``pid`` runs under, if any."""
    try:
        parents = {p.pid for p in psutil.Process(pid).parents()}
    except psutil.NoSuchProcess:
        return None
    return next((name for name, a in ancestors.items() if a in parents or a == pid), None)


@contextmanager
def bytes_written(cluster: dict[str, int]) -> Iterator[dict[int, tuple[str, int]]]:
    """What each Python process wrote (to files and sockets) while in the block, by process id:
    this one, named ``driver``, and those under a process of the cluster, named after it."""

    def python_processes() -> dict[int, str]:
        found = {os.getpid(): "driver"}
        for name, root in cluster.items():
            with suppress(psutil.Error):
                for process in psutil.Process(root).children(recursive=True):
                    with suppress(psutil.Error):
                        if os.path.realpath(process.exe()) == PYTHON:
                            found[process.pid] = name
        return found

    def written(pids: dict[int, str]) -> dict[int, int]:
        counts = {}
        for pid in pids:
            with suppress(psutil.Error):  # ended meanwhile
                counts[pid] = psutil.Process(pid).io_counters().write_chars
        return counts

    before = written(python_processes())
    result: dict[int, tuple[str, int]] = {}
    yield result
    names = python_processes()
    for pid, count in written(names).items():  # a process started in the block had 0 before
        result[pid] = (names[pid], count - before.get(pid, 0))


def writers(written: dict[int, tuple[str, int]], at_least: int) -> set[str]:
    """The cluster processes under which a process wrote ``at_least`` bytes (a data file's),
    after checking that this process (the driver) wrote less: it sent no such file."""
    assert written[os.getpid()][1] < at_least, (at_least, written)
    return {name for name, count in written.values() if count >= at_least} - {"driver"}


def sizes(table: str) -> dict[str, int]:
    """The table's data files and their sizes."""
    return {f.path: f.size for f in open_table(locate(table)).files}


def check_merged(table: str) -> None:
    """Ids 0-199,989 keep their 40-digit SHA-1 values, 199,990-299,999 have 64-digit ones."""
    got = dc.read(table, read_as="pyarrow").sort_by("id")
    assert got.column("id").to_pylist() == list(range(300_000))
    lengths = [len(v) for v in got.column("v").to_pylist()]
    assert lengths == [40] * 199_990 + [64] * 100_010


def test_spark_runs_tasks_in_two_executors_of_two_workers(spark, local_spark_cluster):
    context = spark.sparkContext
    assert context.master == local_spark_cluster.master_url
    assert context.defaultParallelism == 2  # one core in each of two executors
    assert context._jsc.sc().getExecutorMemoryStatus().size() == 3  # the driver and two

    def where(_):
        import os
        import time

        time.sleep(0.5)  # long enough that both executors take tasks
        return os.getpid()

    pids = set(context.parallelize(range(4), 4).map(where).collect())
    workers = {name for name in local_spark_cluster.pids if name != "master"}
    assert os.getpid() not in pids
    assert {descends_from(pid, local_spark_cluster.pids) for pid in pids} == workers


def test_spark_writes_and_merges_on_s3_from_executor_processes(
    spark, local_spark_cluster, s3_catalog
):
    rows = spark.range(0, 200_000).selectExpr("id", "sha1(cast(id AS string)) AS v")
    with bytes_written(local_spark_cluster.pids) as written:
        dc.write(rows.repartition(4), "t", schema=KEYED)
    files = sizes("t")
    assert len(files) == 4  # a part a task, and each executor wrote some:
    assert writers(written, min(files.values())) == {"worker-0", "worker-1"}

    changes = spark.range(199_990, 300_000).selectExpr("id", "sha2(cast(id AS string), 256) AS v")
    with bytes_written(local_spark_cluster.pids) as written:
        result = dc.write(changes, "t")  # a MERGE: 10 rows match, 100,000 are new
    assert (result.rows_updated, result.rows_added) == (10, 100_000)
    added = {k: v for k, v in sizes("t").items() if k not in files}
    assert writers(written, max(added.values()))
    check_merged("t")


def test_ray_has_two_alive_nodes_that_both_run_tasks(ray_cluster, local_ray_cluster):
    import ray

    alive = [n for n in ray.nodes() if n["Alive"]]
    assert len(alive) == 2 and sum(n["Resources"]["CPU"] for n in alive) == 2

    @ray.remote(num_cpus=1)
    def where() -> tuple[str, int]:
        import os
        import time

        time.sleep(0.5)  # each task takes its node's one CPU, so the two run one a node
        return ray.get_runtime_context().get_node_id(), os.getpid()

    placed = ray.get([where.remote() for _ in range(2)])
    assert {node for node, _ in placed} == {n["NodeID"] for n in alive}
    names = {descends_from(pid, local_ray_cluster.pids) for _, pid in placed}
    assert names == {"head", "node-1"} and os.getpid() not in {pid for _, pid in placed}


def test_ray_writes_and_merges_on_s3_from_worker_processes(
    ray_cluster, local_ray_cluster, s3_catalog
):
    import ray.data

    def hashed(start: int, stop: int, digest: str) -> ray.data.Dataset:
        def values(batch):
            ids = batch["id"] + start
            v = [hashlib.new(digest, str(i).encode()).hexdigest() for i in ids]
            return {"id": ids, "v": v}

        return ray.data.range(stop - start, override_num_blocks=4).map_batches(values)

    with bytes_written(local_ray_cluster.pids) as written:
        dc.write(hashed(0, 200_000, "sha1"), "t", schema=KEYED)
    files = sizes("t")
    assert len(files) == 4 and writers(written, min(files.values()))

    with bytes_written(local_ray_cluster.pids) as written:
        result = dc.write(hashed(199_990, 300_000, "sha256"), "t")  # 10 match, 100,000 new
    assert (result.rows_updated, result.rows_added) == (10, 100_000)
    added = {k: v for k, v in sizes("t").items() if k not in files}
    assert writers(written, max(added.values()))
    check_merged("t")
