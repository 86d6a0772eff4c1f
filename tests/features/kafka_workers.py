"""A Kafka ingest consumer in a process of its own, for the kill -9 tests.

``python -m tests.features.kafka_workers ROOT BOOTSTRAP GROUP TOPIC BATCH IDLE``: ingest TOPIC
into table ``events`` of the catalog at ROOT with consumer group GROUP, batches of BATCH
messages, until the topic is all in and no message came for IDLE seconds.
"""

from __future__ import annotations

import json
import sys

import workbench as dc
from workbench.testing import LocalKafka

TABLE = "events"


def main(root: str, bootstrap: str, group: str, topic: str, batch: int, idle: float) -> None:
    """Ingest until the topic is all in and idle."""
    dc.init_local(root)
    config = {**LocalKafka.GROUP_SETTINGS, "bootstrap.servers": bootstrap, "group.id": group}
    dc.ingest_kafka(
        config,
        topic,
        TABLE,
        decode=json.loads,
        batch_rows=batch,
        idle_seconds=idle,
        progress=False,
    )


if __name__ == "__main__":
    root, bootstrap, group, topic, batch, idle = sys.argv[1:]
    main(root, bootstrap, group, topic, int(batch), float(idle))
