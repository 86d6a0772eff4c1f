"""``dc.ingest_kafka`` against a real Kafka cluster in the test process (librdkafka's mock
brokers): several consumers of one group, a consumer fenced off a partition another moved on,
undecodable messages, consumers killed with -9 and restarted; every message lands exactly once
and the catalog's offsets always match the rows."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import workbench as dc
from tests.conftest import tree_digest
from tests.features.kafka_workers import TABLE
from workbench.testing import LocalKafka

ROOT = Path(__file__).resolve().parents[2]
GROUP = "lake"
TOPIC = "orders"
PARTITIONS = range(LocalKafka.PARTITIONS)
# Each consumer-group test waits on the group's first join (the brokers hold it 3 s for more
# members, as Kafka's group.initial.rebalance.delay.ms does), so they are in the slow tier.
slow_group = pytest.mark.slow


@pytest.fixture
def kafka() -> Iterator[LocalKafka]:
    with LocalKafka() as cluster:
        yield cluster


def produce(kafka: LocalKafka, ids: range) -> None:
    """Messages {"id": i} for ``ids``, spread over the topic's partitions."""
    kafka.produce(TOPIC, (json.dumps({"id": i}) for i in ids))


def ingest(kafka: LocalKafka, **options: object) -> dc.IngestResult:
    """One consumer of the group, ingesting until the topic is all in and quiet for 1 s."""
    options = {"decode": json.loads, "batch_rows": 100, "idle_seconds": 1, **options}
    return dc.ingest_kafka(kafka.consumer_config(GROUP), TOPIC, TABLE, progress=False, **options)


def assert_exactly_once(count: int) -> None:
    """The table holds ids 0..count-1 once each, and its offsets match its rows."""
    rows = dc.read(TABLE, read_as="pyarrow").to_pylist()
    assert sorted(r["id"] for r in rows) == list(range(count))
    assert_offsets_match(rows)


def assert_offsets_match(rows: list[dict]) -> None:
    """Per partition the rows are exactly the offsets 0..v, where v is the offset the catalog
    recorded for it (none when it recorded none)."""
    for p in PARTITIONS:
        offsets = sorted(r["kafka_offset"] for r in rows if r["kafka_partition"] == p)
        recorded = dc.idempotency_version(f"kafka/{GROUP}/{TOPIC}/{p}")
        assert offsets == list(range((-1 if recorded is None else recorded) + 1))


def committed() -> int:
    """Messages the catalog's offsets say are in the table."""
    versions = [dc.idempotency_version(f"kafka/{GROUP}/{TOPIC}/{p}") for p in PARTITIONS]
    return sum(0 if v is None else v + 1 for v in versions)


@slow_group
def test_a_group_of_consumers_ingests_every_message_once_and_a_rerun_adds_nothing(catalog, kafka):
    """One consumer starts; two more join mid-stream, so the group rebalances and partitions
    move between consumers while batches are in flight."""
    produce(kafka, range(1200))

    def decode(value: bytes) -> dict:
        time.sleep(0.002)  # some work per message, so the stream outlasts a rebalance
        return json.loads(value)

    results: list[dc.IngestResult] = []
    threads = [
        threading.Thread(target=lambda: results.append(ingest(kafka, decode=decode)))
        for _ in range(3)
    ]
    threads[0].start()
    deadline = time.monotonic() + 30
    while not committed() and time.monotonic() < deadline:
        time.sleep(0.05)
    for t in threads[1:]:
        t.start()
    for t in threads:
        t.join()
    assert_exactly_once(1200)
    assert sum(r.rows for r in results) == 1200
    assert len([r for r in results if r.rows]) >= 2  # the group spread the partitions

    before = tree_digest(catalog.root)
    again = ingest(kafka)
    assert (again.rows, again.batches) == (0, 0)
    assert tree_digest(catalog.root) == before


@slow_group
def test_a_batch_of_a_partition_another_consumer_moved_on_is_refused_and_resumed(catalog, kafka):
    """A consumer that lost partition 0 unawares (a stall, a rebalance it has not seen) finds its
    batch refused at commit, and goes on from the offset the catalog holds."""
    produce(kafka, range(400))
    moved = []

    def decode(value: bytes) -> dict:
        if not moved:  # meanwhile, "another consumer" commits partition 0 up to offset 9
            dc.write({"id": [-1]}, "elsewhere", idempotency=(f"kafka/{GROUP}/{TOPIC}/0", 9))
            moved.append(True)
        return json.loads(value)

    result = ingest(kafka, decode=decode)
    assert result.conflicts >= 1
    rows = dc.read(TABLE, read_as="pyarrow").to_pylist()
    assert sorted(r["kafka_offset"] for r in rows if r["kafka_partition"] == 0) == list(
        range(10, 100)
    )
    assert len(rows) == 400 - 10
    assert result.offsets == {p: 99 for p in PARTITIONS}
    assert dc.idempotency_version(result.app_id(0)) == 99


@slow_group
def test_a_message_decode_cannot_read_fails_with_nothing_of_its_batch_written(catalog, kafka):
    produce(kafka, range(8))
    kafka.produce(TOPIC, [b"not json"])  # partition 0, offset 2
    with pytest.raises(dc.MessageDecodeError, match="partition 0, offset 2"):
        ingest(kafka)
    recorded = dc.idempotency_version(f"kafka/{GROUP}/{TOPIC}/0")
    assert recorded is None or recorded < 2
    if committed():  # batches before the one that failed are in, and only they (of any
        # partition: which partition's batch came first is the brokers' choice)
        rows = dc.read(TABLE, read_as="pyarrow").to_pylist()
        assert len(rows) == committed() and len({r["id"] for r in rows}) == len(rows)
        assert_offsets_match(rows)

    raw = dc.ingest_kafka(
        kafka.consumer_config("raw"), TOPIC, "raw", metadata=False, idle_seconds=1, progress=False
    )
    assert raw.rows == 9  # without decode: the bytes as they are
    table = dc.read("raw", read_as="pyarrow")
    assert table.column_names == ["key", "value"]
    assert b"not json" in table.column("value").to_pylist()


def test_ingest_needs_a_consumer_group_and_sane_arguments(catalog):
    config = {"bootstrap.servers": "127.0.0.1:1"}
    with pytest.raises(dc.InvalidArgumentError, match=r"group\.id"):
        dc.ingest_kafka(config, TOPIC, TABLE)
    config["group.id"] = GROUP
    with pytest.raises(dc.InvalidArgumentError, match="batch_rows"):
        dc.ingest_kafka(config, TOPIC, TABLE, batch_rows=0)
    with pytest.raises(dc.InvalidArgumentError, match="decode"):
        dc.ingest_kafka(config, TOPIC, TABLE, decode="json")
    cooperative = {**config, "partition.assignment.strategy": "cooperative-sticky"}
    with pytest.raises(dc.InvalidArgumentError, match="cooperative"):
        dc.ingest_kafka(cooperative, TOPIC, TABLE)


def test_without_confluent_kafka_the_error_says_what_to_install(catalog, monkeypatch):
    monkeypatch.setitem(sys.modules, "confluent_kafka", None)  # import fails as if missing
    with pytest.raises(dc.MissingDependencyError, match=r"workbench\[streaming\]"):
        dc.ingest_kafka({"group.id": GROUP}, TOPIC, TABLE)


def consumer_process(root: Path, kafka: LocalKafka) -> subprocess.Popen:
    """A consumer of tests/features/kafka_workers.py, in a process of its own."""
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.features.kafka_workers",
            str(root),
            kafka.bootstrap_servers,
            GROUP,
            TOPIC,
            "25",
            "1",
        ],
        cwd=ROOT,
        env={**os.environ, "WORKBENCH_LEASE_SECONDS": "2"},  # a killed writer's lease expires soon
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


@pytest.mark.slow
def test_consumers_killed_at_random_points_and_restarted_ingest_every_message_once(tmp_path, kafka):
    root = tmp_path / "lake"
    dc.init_local(root)
    count, kills, rng = 6000, 4, random.Random(45)
    produce(kafka, range(count))
    # A consumer stops only once the whole topic is in the table, so none ends before the kills.
    consumers = [consumer_process(root, kafka) for _ in range(3)]
    done, landed = 0, 0
    for _ in range(kills):
        deadline = time.monotonic() + 30
        while committed() == done and time.monotonic() < deadline:
            time.sleep(0.05)  # kill only once something committed since the last kill
        time.sleep(rng.uniform(0, 0.3))
        if committed() == count:
            break  # all in already (a slow machine): no more kills to land mid-ingest
        victim = rng.randrange(len(consumers))
        consumers[victim].kill()
        consumers[victim].wait()
        consumers[victim] = consumer_process(root, kafka)
        landed += 1
        done = committed()
    assert landed >= 2  # kills landed while the topic was being ingested
    for c in consumers:
        _, err = c.communicate(timeout=120)
        assert c.returncode == 0, err.decode()[-2000:]
    assert_exactly_once(count)
