"""A Kafka ingest consumer in a process of its own, for the kill -9 tests and the benchmark.

``python -m tests.features.kafka_workers ROOT BOOTSTRAP GROUP TOPIC BATCH IDLE``: ingest TOPIC
into table ``events`` of the catalog at ROOT with consumer group GROUP, batches of BATCH
messages, until no message came for IDLE seconds.
"""

from __future__ import annotations

import json
import sys

import workbench as dc

TABLE = "events"
# A consumer killed with -9 leaves its group when its session times out: keep that short, so its
# partitions move to the others in seconds, not the default 45. Not below 3.5 s: the brokers hold
# a group's first join 3 s for more members, and a shorter session expires while it waits.
FAST_GROUP = {
    "session.timeout.ms": 4000,
    "heartbeat.interval.ms": 300,
    "max.poll.interval.ms": 10000,
    "log_level": 3,
}


def consumer_config(bootstrap: str, group: str) -> dict[str, object]:
    """The settings of a test consumer of ``group``."""
    return {"bootstrap.servers": bootstrap, "group.id": group, **FAST_GROUP}


def main(root: str, bootstrap: str, group: str, topic: str, batch: int, idle: float) -> None:
    """Ingest until idle, then print what this consumer committed."""
    dc.init_local(root)
    result = dc.ingest_kafka(
        consumer_config(bootstrap, group),
        topic,
        TABLE,
        decode=json.loads,
        batch_rows=batch,
        idle_seconds=idle,
        progress=False,
    )
    print(json.dumps({"rows": result.rows, "batches": result.batches}), flush=True)


if __name__ == "__main__":
    root, bootstrap, group, topic, batch, idle = sys.argv[1:]
    main(root, bootstrap, group, topic, int(batch), float(idle))
