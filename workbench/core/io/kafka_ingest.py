"""``dc.ingest_kafka``: a Kafka topic into a table in micro-batches, exactly once.

Each batch's rows and the topic offsets it covers commit in one catalog transaction: the offsets
are idempotency keys, one per partition (``kafka/<group>/<topic>/<partition>``, version = the
batch's last offset of that partition), each bound to follow the offset the consumer started the
batch from. On every partition assignment the consumer seeks to the offset after the one the
catalog recorded, so Kafka's own committed offsets (still committed, for lag monitoring) are never
the source of truth. A consumer that lost a partition to another (a rebalance, a stall, a
restart) finds its batch refused or skipped at commit, reads the recorded offsets again and goes
on from there: several consumers of one group, killed and restarted at any point, add each
message exactly once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from contextlib import suppress
from dataclasses import dataclass, field
from html import escape
from typing import Any

from workbench.core.base.arguments import choice, flag, seconds, text, whole_number
from workbench.core.base.dependencies import STREAMING_INSTALL, require
from workbench.core.base.errors import (
    InvalidArgumentError,
    MessageDecodeError,
    TransactionConflictError,
)
from workbench.core.base.progress import progress as progress_bar
from workbench.core.base.types import TableWriteMode
from workbench.core.io.writer import write
from workbench.core.transactions.committed_keys import idempotency_version
from workbench.core.transactions.context import transaction

POLL_SECONDS = 0.5  # longest wait for messages before the idle clock is looked at again
DEFAULTS = {"enable.auto.commit": False, "fetch.wait.max.ms": 100, "auto.offset.reset": "earliest"}


def kafka_app_id(group: str, topic: str, partition: int) -> str:
    """The idempotency app id under which a group's offsets of one topic partition commit."""
    return f"kafka/{group}/{topic}/{partition}"


@dataclass
class IngestResult:
    """What one ``ingest_kafka`` call committed: rows, batches, and per partition the last offset
    it committed (the catalog's ``dc.idempotency_version(result.app_id(p))``)."""

    table: str
    topic: str
    group: str
    rows: int = 0
    batches: int = 0
    repeats: int = 0  # batches another consumer had committed already: skipped whole
    conflicts: int = 0  # batches refused at commit (a partition moved on): read again
    offsets: dict[int, int] = field(default_factory=dict)

    def app_id(self, partition: int) -> str:
        """The idempotency app id of ``partition`` (see ``dc.idempotency_version``)."""
        return kafka_app_id(self.group, self.topic, partition)

    def __repr__(self) -> str:
        return (
            f"IngestResult(table={self.table!r}, topic={self.topic!r}, rows={self.rows}, "
            f"batches={self.batches}, repeats={self.repeats}, conflicts={self.conflicts}, "
            f"offsets={dict(sorted(self.offsets.items()))})"
        )

    def _repr_html_(self) -> str:
        counts = "".join(
            f"<td style='padding:0 8px'><b>{value}</b> {label}</td>"
            for label, value in (
                ("rows", self.rows),
                ("batches", self.batches),
                ("repeats skipped", self.repeats),
                ("conflicts", self.conflicts),
            )
        )
        offsets = ", ".join(f"{p}: {o}" for p, o in sorted(self.offsets.items())) or "none"
        return (
            f"<div><b>{escape(self.table)}</b> &larr; Kafka topic <b>{escape(self.topic)}</b> "
            f"(group {escape(self.group)})<table><tr>{counts}</tr></table>"
            f"last offsets committed by partition: {escape(offsets)}</div>"
        )


def ingest_kafka(
    consumer_config: Mapping[str, Any],
    topic: str,
    table: str,
    namespace: str | None = None,
    catalog: str | None = None,
    *,
    decode: Callable[[bytes], Mapping[str, Any]] | None = None,
    batch_rows: int = 10_000,
    idle_seconds: float | None = 5.0,
    mode: TableWriteMode | str = TableWriteMode.AUTO,
    metadata: bool = True,
    branch: str | None = None,
    progress: bool = True,
) -> IngestResult:
    """Consume ``topic`` with ``consumer_config`` (confluent-kafka's; ``group.id`` required) into
    ``table``, batches of up to ``batch_rows`` messages each committed exactly once together with
    their offsets, until no message came for ``idle_seconds`` and the table holds every message
    of the topic (None: until interrupted).

    Rows are ``decode(value)`` (e.g. ``json.loads``), or the message ``key`` and ``value`` bytes;
    ``metadata`` adds ``kafka_partition``, ``kafka_offset`` and ``kafka_timestamp``. Run it in as
    many processes as the topic has partitions: the group spreads them, and the catalog's offsets
    (``dc.idempotency_version(f"kafka/{group}/{topic}/{partition}")``) say where each resumes.

    >>> dc.ingest_kafka({"bootstrap.servers": "host:9092", "group.id": "lake"}, "orders",
    ...                 "orders", decode=json.loads)
    """
    kafka = require("confluent_kafka", "dc.ingest_kafka", STREAMING_INSTALL)
    config = _consumer_config(consumer_config)
    text("topic", topic, optional=False)
    batch_rows = whole_number("batch_rows", batch_rows, minimum=1)
    idle = None if idle_seconds is None else seconds("idle_seconds", idle_seconds)
    mode = choice(TableWriteMode, mode, "mode")
    flag("metadata", metadata)
    flag("progress", progress)
    if decode is not None and not callable(decode):
        raise InvalidArgumentError(
            f"decode={decode!r} must be a function of a message's value bytes returning a row "
            "(a mapping of column to value), e.g. decode=json.loads."
        )
    ingest = _Ingest(kafka, config, topic, catalog, branch)
    result = IngestResult(table, topic, config["group.id"])
    consumer = kafka.Consumer(config)
    try:
        backlog = ingest.backlog(consumer)
        consumer.subscribe(
            [topic], on_assign=ingest.assigned, on_revoke=ingest.revoked, on_lost=ingest.revoked
        )
        last_message = time.monotonic()
        with progress_bar(backlog, f"{topic} -> {table}", "msg", enabled=progress) as advance:
            while True:
                messages = ingest.fresh(consumer.consume(batch_rows, POLL_SECONDS))
                if not messages:
                    if idle is not None and time.monotonic() - last_message >= idle:
                        if ingest.backlog(consumer) == 0:
                            break
                        last_message = time.monotonic()  # others' partitions lag: wait on
                    continue
                last_message = time.monotonic()
                rows = _rows(messages, decode, metadata)
                advance(ingest.commit(consumer, messages, rows, table, namespace, mode, result))
    finally:
        consumer.close()
    return result


def _consumer_config(consumer_config: Mapping[str, Any]) -> dict[str, Any]:
    """The consumer's settings: the caller's, over defaults of no automatic offset commits (the
    catalog holds the offsets), short fetch waits (a fetch waiting on an idle broker delays the
    offset queries that tell when the topic is all in) and a group's first run reading from the
    start."""
    if not isinstance(consumer_config, Mapping):
        raise InvalidArgumentError(
            f"consumer_config={consumer_config!r} must be a mapping of confluent-kafka consumer "
            'settings, e.g. {"bootstrap.servers": "host:9092", "group.id": "lake"}.'
        )
    group = consumer_config.get("group.id")
    if not isinstance(group, str) or not group:
        raise InvalidArgumentError(
            "consumer_config needs a 'group.id': the consumer group names whose offsets the "
            'catalog records, e.g. {"group.id": "orders-lake", ...}.'
        )
    if "cooperative" in str(consumer_config.get("partition.assignment.strategy", "")):
        raise InvalidArgumentError(
            "dc.ingest_kafka takes eager partition assignment (range or roundrobin), not "
            "cooperative-sticky: each assignment seeks every partition to the catalog's offset."
        )
    return {**DEFAULTS, **consumer_config}


def _rows(
    messages: list[Any], decode: Callable[[bytes], Mapping[str, Any]] | None, metadata: bool
) -> Any:
    """The rows of a batch of messages as an Arrow table."""
    import pyarrow as pa

    if decode is None:
        columns = {
            "key": pa.array([m.key() for m in messages], pa.binary()),
            "value": pa.array([m.value() for m in messages], pa.binary()),
        }
        rows = pa.table(columns)
    else:
        decoded = []
        for m in messages:
            try:
                decoded.append(decode(m.value()))
            except Exception as e:
                raise MessageDecodeError(
                    f"decode could not read the message at partition {m.partition()}, offset "
                    f"{m.offset()} of topic {m.topic()!r}: {e!r}. Nothing of its batch was "
                    "committed; fix decode (or the message) and run again."
                ) from e
        rows = pa.Table.from_pylist(decoded)
    if metadata:
        stamps = [m.timestamp()[1] for m in messages]
        rows = (
            rows.append_column(
                "kafka_partition", pa.array([m.partition() for m in messages], pa.int32())
            )
            .append_column("kafka_offset", pa.array([m.offset() for m in messages], pa.int64()))
            .append_column("kafka_timestamp", pa.array(stamps, pa.timestamp("ms", tz="UTC")))
        )
    return rows


class _Ingest:
    """One consumer's positions: per assigned partition, the last offset the catalog recorded
    (None: nothing yet), read on each assignment and after each refused commit."""

    def __init__(
        self,
        kafka: Any,
        config: Mapping[str, Any],
        topic: str,
        catalog: str | None,
        branch: str | None,
    ) -> None:
        self.kafka = kafka
        self.group: str = config["group.id"]
        self.topic = topic
        self.catalog = catalog
        self.branch = branch
        self.positions: dict[int, int | None] = {}

    def recorded(self, partition: int) -> int | None:
        """The last offset of ``partition`` the catalog committed (None: none yet)."""
        app_id = kafka_app_id(self.group, self.topic, partition)
        return idempotency_version(app_id, self.catalog, branch=self.branch)

    def start(self, partition: int) -> Any:
        """Where ``partition`` resumes: after its recorded offset, else at its beginning."""
        recorded = self.positions[partition] = self.recorded(partition)
        offset = self.kafka.OFFSET_BEGINNING if recorded is None else recorded + 1
        return self.kafka.TopicPartition(self.topic, partition, offset)

    def assigned(self, consumer: Any, partitions: list[Any]) -> None:
        """A rebalance gave this consumer ``partitions``: start each where the catalog says."""
        consumer.assign([self.start(tp.partition) for tp in partitions])

    def revoked(self, consumer: Any, partitions: list[Any]) -> None:
        """A rebalance took ``partitions`` away (or the group lost them)."""
        for tp in partitions:
            self.positions.pop(tp.partition, None)

    def resync(self, consumer: Any) -> None:
        """Seek every assigned partition back to where the catalog says it resumes."""
        for tp in consumer.assignment():
            consumer.seek(self.start(tp.partition))

    def backlog(self, consumer: Any) -> int:
        """Messages of the topic not yet in the catalog (the progress bar's total)."""
        partitions = consumer.list_topics(self.topic, timeout=10).topics[self.topic].partitions
        total = 0
        for p in partitions:
            low, high = consumer.get_watermark_offsets(self.kafka.TopicPartition(self.topic, p))
            recorded = self.recorded(p)
            total += max(0, high - max(low, -1 if recorded is None else recorded + 1))
        return total

    def fresh(self, messages: list[Any]) -> list[Any]:
        """The messages of a poll that belong to a partition this consumer holds and come after
        its position; a non-fatal broker error is left to the client's retries."""
        fresh = []
        for m in messages:
            error = m.error()
            if error is not None:
                if error.fatal():
                    raise self.kafka.KafkaException(error)
                continue
            if m.partition() in self.positions and m.offset() > _or(self.positions[m.partition()]):
                fresh.append(m)
        return fresh

    def commit(
        self,
        consumer: Any,
        messages: list[Any],
        rows: Any,
        table: str,
        namespace: str | None,
        mode: TableWriteMode,
        result: IngestResult,
    ) -> int:
        """Write ``rows`` and the batch's offsets in one transaction (how many messages it
        committed); on a refusal or a repeat (another consumer moved a partition on), none, and
        seek back to the catalog's offsets."""
        last: dict[int, int] = {}
        for m in messages:
            last[m.partition()] = max(last.get(m.partition(), -1), m.offset())
        app = {p: kafka_app_id(self.group, self.topic, p) for p in last}
        keys = [(app[p], offset) for p, offset in last.items()]
        after = {app[p]: self.positions[p] for p in last}
        message = f"Kafka {self.topic} offsets " + ", ".join(
            f"{p}:{_or(self.positions[p]) + 1}-{o}" for p, o in sorted(last.items())
        )
        try:
            with transaction(
                catalog=self.catalog, branch=self.branch, commit_message=message
            ) as txn:
                txn.add_idempotency(keys, after=after)
                write(rows, table, namespace, mode=mode)
        except TransactionConflictError:
            result.conflicts += 1
            self.resync(consumer)
            return 0
        if txn.skipped:
            result.repeats += 1
            self.resync(consumer)
            return 0
        self.positions.update(last)
        result.offsets.update(last)
        result.rows += len(messages)
        result.batches += 1
        offsets = [self.kafka.TopicPartition(self.topic, p, o + 1) for p, o in last.items()]
        with suppress(self.kafka.KafkaException):  # for lag monitors only: a partition just
            consumer.commit(offsets=offsets, asynchronous=True)  # revoked cannot take it
        return len(messages)


def _or(position: int | None) -> int:
    """A recorded offset, with "none yet" as -1 (the offset before the first)."""
    return -1 if position is None else position
