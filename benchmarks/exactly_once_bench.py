"""Exactly-once under failure: Kafka consumers killed with -9 at random points and restarted.

Two ingests of the same topic run under the same kill schedule, side by side: ``dc.ingest_kafka``
(rows and offsets in one catalog transaction) and the usual at-least-once loop (``dc.write`` a
batch, then commit its offsets to Kafka). Each has a group of consumer processes; one of them is
killed at a random moment after the table last changed, and a new one started, ``--kills``
times or until the topic is all in; then they run to its end. The figures: rows vs messages,
duplicates, lost messages, and partitions whose recorded offsets and rows are apart.

Run with ``python -m benchmarks.exactly_once_bench [--kills 50] [--messages 20000]``. The Kafka
cluster is librdkafka's mock brokers in this process (``workbench.testing.LocalKafka``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from contextlib import suppress
from pathlib import Path
from typing import Any

import workbench as dc
from tests.features import kafka_workers
from workbench.testing import LocalKafka

DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "exactly_once.json"
MODES = ("workbench", "at_least_once")
TABLE = kafka_workers.TABLE
IDLE_SECONDS = 1.0
TARGETS = {"duplicates": "0", "lost": "0", "offsets_apart": "0"}


def consume(root: str, bootstrap: str, group: str, topic: str, batch: int, mode: str) -> None:
    """One consumer process of ``mode`` (the benchmark starts and kills these)."""
    if mode == "workbench":  # the consumer the kill -9 tests run
        kafka_workers.main(root, bootstrap, group, topic, batch, IDLE_SECONDS)
        return
    dc.init_local(root)
    config = {**LocalKafka.GROUP_SETTINGS, "bootstrap.servers": bootstrap, "group.id": group}
    _at_least_once(config, topic, batch)


def _at_least_once(config: dict[str, Any], topic: str, batch: int) -> None:
    """The usual loop: write a batch, then commit its offsets to Kafka; a consumer killed
    between the two writes the batch again after its restart."""
    import confluent_kafka as ck
    import pyarrow as pa

    consumer = ck.Consumer(
        {
            **config,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "fetch.wait.max.ms": 100,
        }
    )
    consumer.subscribe([topic])
    idle_since = time.monotonic()
    while True:
        messages = [m for m in consumer.consume(batch, 0.5) if m.error() is None]
        if messages:
            rows = [
                {
                    **json.loads(m.value()),
                    "kafka_partition": m.partition(),
                    "kafka_offset": m.offset(),
                }
                for m in messages
            ]
            data = pa.Table.from_pylist(rows)
            dc.run_transaction(lambda data=data: dc.write(data, TABLE), retries=20)
            with suppress(ck.KafkaException):  # a rebalance refuses it: the batch comes again
                consumer.commit(asynchronous=False)
            idle_since = time.monotonic()
        elif time.monotonic() - idle_since > IDLE_SECONDS and _caught_up(consumer, topic):
            break
    consumer.close()


def _caught_up(consumer: Any, topic: str) -> bool:
    """True when the group's Kafka-committed offsets reach the end of every partition."""
    import confluent_kafka as ck

    parts = [ck.TopicPartition(topic, p) for p in range(LocalKafka.PARTITIONS)]
    for tp in consumer.committed(parts, timeout=10):
        if tp.offset < consumer.get_watermark_offsets(tp, timeout=10)[1]:
            return False
    return True


def _spawn(root: Path, kafka: LocalKafka, topic: str, batch: int, mode: str) -> subprocess.Popen:
    command = [
        sys.executable,
        "-m",
        "benchmarks.exactly_once_bench",
        "consume",
        str(root),
        kafka.bootstrap_servers,
        mode,
        topic,
        str(batch),
        mode,
    ]
    env = {**os.environ, "WORKBENCH_LEASE_SECONDS": "2"}  # a killed writer's lease expires soon
    return subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _newest(mode: str) -> Any:
    """The catalog's newest transaction id (None: none yet): it moves when a batch commits."""
    newest = dc.transactions(catalog=mode, limit=1).to_pylist()
    return newest[0]["transaction_id"] if newest else None


def run(mode: str, kafka: LocalKafka, root: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Ingest ``args.messages`` messages under ``args.kills`` kills; the figures."""
    dc.put_catalog(mode, dc.Catalog(dc.CatalogProperties(str(root))))
    topic = f"events-{mode}"
    kafka.produce(topic, (json.dumps({"id": i}) for i in range(args.messages)))
    rng = random.Random(args.seed)
    start = time.perf_counter()
    consumers = [_spawn(root, kafka, topic, args.batch, mode) for _ in range(args.consumers)]
    landed = kills = 0
    last = _newest(mode)
    while kills < args.kills and _ingested(kafka, topic, mode) < args.messages:
        kills += 1
        deadline = time.monotonic() + 60
        while _newest(mode) == last and time.monotonic() < deadline:
            time.sleep(0.02)  # kill only once a batch committed since the last kill
        time.sleep(rng.uniform(0, 0.5))
        victim = rng.randrange(len(consumers))
        consumers[victim].kill()
        consumers[victim].wait()
        consumers[victim] = _spawn(root, kafka, topic, args.batch, mode)
        last = _newest(mode)
        landed += _ingested(kafka, topic, mode) < args.messages
    for c in consumers:
        _, err = c.communicate(timeout=600)
        if c.returncode:
            raise RuntimeError(f"A {mode} consumer failed:\n{err.decode()[-3000:]}")
    seconds = time.perf_counter() - start
    figures = _figures(kafka, topic, args.messages, mode)
    return {
        **figures,
        "kills": kills,  # fewer than asked when the topic was all in before
        "kills_mid_ingest": landed,
        "seconds": round(seconds, 1),
    }


def _figures(kafka: LocalKafka, topic: str, messages: int, mode: str) -> dict[str, Any]:
    """Rows vs messages, duplicates, lost, and partitions whose recorded offsets (the catalog's
    for dc.ingest_kafka, Kafka's committed ones for the other) and rows are apart."""
    rows = dc.read(TABLE, catalog=mode, read_as="pyarrow").to_pylist()
    ids = [r["id"] for r in rows]
    recorded = _recorded(kafka, topic, mode)
    apart = 0
    for p, last in enumerate(recorded):
        in_table = sorted(r["kafka_offset"] for r in rows if r["kafka_partition"] == p)
        apart += in_table != list(range(last + 1))
    return {
        "mode": mode,
        "messages": messages,
        "rows": len(rows),
        "duplicates": len(ids) - len(set(ids)),
        "lost": messages - len(set(ids)),
        "offsets_apart": apart,
    }


def _ingested(kafka: LocalKafka, topic: str, mode: str) -> int:
    """Messages the recorded offsets say are in the table."""
    return sum(last + 1 for last in _recorded(kafka, topic, mode))


def _recorded(kafka: LocalKafka, topic: str, mode: str) -> list[int]:
    """Per partition, the last offset recorded as ingested (-1: none): the catalog's
    idempotency versions for dc.ingest_kafka, the group's Kafka-committed offsets otherwise."""
    partitions = range(LocalKafka.PARTITIONS)
    if mode == "workbench":
        versions = [dc.idempotency_version(f"kafka/{mode}/{topic}/{p}", mode) for p in partitions]
        return [-1 if v is None else v for v in versions]
    import confluent_kafka as ck

    consumer = ck.Consumer(kafka.consumer_config(mode))  # not subscribed: joins no group
    try:
        found = consumer.committed([ck.TopicPartition(topic, p) for p in partitions], timeout=10)
    finally:
        consumer.close()
    return [max(tp.offset, 0) - 1 for tp in found]  # a committed offset is the next to read


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=50)
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--consumers", type=int, default=3)
    parser.add_argument("--batch", type=int, default=50)
    parser.add_argument("--seed", type=int, default=45)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as tmp, LocalKafka() as kafka:
        for mode in MODES:
            results.append(run(mode, kafka, Path(tmp) / mode, args))
            print(json.dumps(results[-1]), flush=True)
    _report(results)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"targets": TARGETS, "results": results}, indent=2))


def _report(results: list[dict[str, Any]]) -> None:
    keys = (
        "messages",
        "rows",
        "duplicates",
        "lost",
        "offsets_apart",
        "kills",
        "kills_mid_ingest",
        "seconds",
    )
    print(f"{'':18}" + "".join(f"{r['mode']:>16}" for r in results))
    for key in keys:
        print(f"{key:18}" + "".join(f"{r[key]:>16}" for r in results))
    base, ours = results[1], results[0]
    ratio = ours["seconds"] / base["seconds"]
    print(f"time ratio (dc.ingest_kafka / at-least-once, kills included): {ratio:.2f}x")


if __name__ == "__main__":
    if sys.argv[1:2] == ["consume"]:
        root, bootstrap, group, topic, batch, mode = sys.argv[2:]
        consume(root, bootstrap, group, topic, int(batch), mode)
    else:
        main()
