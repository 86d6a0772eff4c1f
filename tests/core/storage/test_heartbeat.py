"""Lease heartbeats: each call's renewal runs on time while its block runs, never once the
block has ended (an exit waits for a renewal under way), and a failing renewal warns and
beats again."""

from __future__ import annotations

import logging
import threading
import time

from workbench.core.storage.heartbeat import Heartbeat


def test_renewals_run_while_the_block_runs_and_never_after(monkeypatch):
    monkeypatch.setenv("WORKBENCH_LEASE_SECONDS", "0.3")  # a beat every 0.1 s
    beats: list[float] = []
    with Heartbeat(lambda: beats.append(time.monotonic())):
        time.sleep(0.55)
    ended = time.monotonic()
    time.sleep(0.3)
    assert len(beats) >= 2  # about five; fewer on a loaded machine
    assert all(b < ended for b in beats)


def test_an_exit_waits_for_a_renewal_under_way(monkeypatch):
    monkeypatch.setenv("WORKBENCH_LEASE_SECONDS", "0.15")
    started, finished = threading.Event(), []

    def slow_renew() -> None:
        started.set()
        time.sleep(0.3)
        finished.append(time.monotonic())

    with Heartbeat(slow_renew):
        assert started.wait(5)
    exited = time.monotonic()
    assert finished and finished[-1] <= exited


def test_calls_with_other_lease_times_each_beat_on_their_own_time(monkeypatch):
    monkeypatch.setenv("WORKBENCH_LEASE_SECONDS", "0.15")
    fast: list[float] = []
    fast_beat = Heartbeat(lambda: fast.append(time.monotonic()))
    monkeypatch.setenv("WORKBENCH_LEASE_SECONDS", "1.5")
    slow: list[float] = []
    with fast_beat, Heartbeat(lambda: slow.append(time.monotonic())):
        time.sleep(0.8)
    assert len(fast) >= 3
    assert 1 <= len(slow) <= 2  # one at 0.5 s (a second only if the sleep overran)


def test_a_failing_renewal_warns_and_beats_again(monkeypatch, caplog):
    monkeypatch.setenv("WORKBENCH_LEASE_SECONDS", "0.15")
    calls = []

    def flaky() -> None:
        calls.append(1)
        if len(calls) == 1:
            raise OSError("store briefly unreachable")

    with caplog.at_level(logging.WARNING), Heartbeat(flaky):
        time.sleep(0.35)
    assert len(calls) >= 2
    assert "Could not renew a table lease (store briefly unreachable)" in caplog.text
