"""An object store that goes away while ``dc.infer`` predicts: gone for good, the call fails
with a typed error within 30 s and commits nothing; gone for a few seconds, the call rides it
out and commits. The endpoint either refuses (its server stopped) or takes connections and
never answers (its server paused), each timed on moto's server."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

import pyarrow as pa
import pytest

import workbench as dc
from workbench.core.inference.result import InferResult
from workbench.testing import LocalS3

pytestmark = [pytest.mark.s3, pytest.mark.slow]

GONE_WITHIN = 30.0  # seconds from the store going away to the call's error
OUTAGE = 5.0  # seconds a short outage lasts
ROWS = 60
KEYED = dc.Schema.of(
    [
        dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True),
        dc.Field.of(pa.field("text", pa.string())),
    ]
)
_predicting = threading.Event()  # set by the model's first batch, predicted in this process


def _length(batch):
    _predicting.set()
    time.sleep(0.1)  # six batches: the store goes away while they are predicted
    return {"n": [len(t) for t in batch["text"]]}


LENGTH = dc.model(_length, inputs=["text"], outputs={"n": pa.int64()}, name="len", version="1")


@pytest.fixture
def server() -> Iterator[LocalS3]:
    """A moto server of its own, whose endpoint a test can take away and bring back."""
    with LocalS3(outages=True) as s3:
        root = f"s3://{s3.new_bucket()}/lake"
        dc.init({"default": dc.Catalog(dc.CatalogProperties(root, s3.options))})
        table = pa.table({"id": range(ROWS), "text": [f"text {i}" * (i % 5) for i in range(ROWS)]})
        dc.write(table, "docs", schema=KEYED)
        _predicting.clear()
        yield s3


# how the store goes away and comes back: refusing connections, or taking them unanswered
OUTAGES = {"stopped": ("cut", "restore"), "paused": ("pause", "resume")}


def _away(server: LocalS3, how: str, seconds: float | None) -> threading.Thread:
    """A thread that takes the store away once the model predicts, for ``seconds`` (None: for
    good); its ``gone_at`` attribute is when the store went away."""
    leave, back = (getattr(server, name) for name in OUTAGES[how])

    def run() -> None:
        if not _predicting.wait(GONE_WITHIN):
            return  # the model never ran here: the test fails on its own
        leave()
        outage.gone_at = time.monotonic()
        if seconds is not None:
            time.sleep(seconds)
            back()

    outage = threading.Thread(target=run, daemon=True)
    outage.start()
    return outage


@pytest.mark.parametrize("how", OUTAGES)
def test_infer_fails_within_seconds_and_commits_nothing_when_the_store_is_gone(server, how):
    before = dc.read("docs", read_as="pyarrow")
    transactions = len(dc.transactions(read_as="pandas"))
    outage = _away(server, how, None)
    with pytest.raises(dc.StorageUnreachableError, match="AWS_ENDPOINT_URL"):
        _infer()
    failed_after = time.monotonic() - outage.gone_at
    assert failed_after < GONE_WITHIN, failed_after
    getattr(server, OUTAGES[how][1])()  # the store back: nothing of the call was committed
    assert _eventually(lambda: dc.read("docs", read_as="pyarrow")) == before
    assert len(dc.transactions(read_as="pandas")) == transactions


@pytest.mark.parametrize("how", OUTAGES)
def test_infer_rides_out_a_short_outage(server, how):
    outage = _away(server, how, OUTAGE)
    result = _infer()
    outage.join(GONE_WITHIN)
    assert _predicting.is_set() and not outage.is_alive()
    assert result.rows_predicted == ROWS
    merged = dc.read("docs", read_as="pyarrow").sort_by("id")
    assert merged["n"].to_pylist() == [len(t) for t in merged["text"].to_pylist()]


def _infer() -> InferResult:
    """``dc.infer`` on the local engine: its model runs in this process, where the test sees
    it start (Daft's default could run it on a Ray another test of this worker started)."""
    return dc.infer("docs", LENGTH, engine="local", batch_size=10, progress=False)


def _eventually(read: Callable[[], pa.Table]) -> pa.Table:
    """``read()`` once the store is taken to answer again (a store that did not answer is
    not asked again for a few seconds)."""
    deadline = time.monotonic() + GONE_WITHIN
    while True:
        try:
            return read()
        except dc.StorageUnreachableError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)
