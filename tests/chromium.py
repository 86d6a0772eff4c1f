"""Headless Chromium for browser tests: Debian's binary (never a downloaded one), its flags, and
a skip (or, in CI, a failure) when it is missing."""

from __future__ import annotations

import os

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def require_chromium() -> None:
    """Skip the test when Chromium is missing; fail instead when CI requires the browser."""
    if not os.path.exists(CHROMIUM):
        message = f"{CHROMIUM} is missing; `make test` installs it (apt-get install chromium)"
        if os.environ.get("WORKBENCH_REQUIRE_BROWSER"):
            pytest.fail(message)
        pytest.skip(message)
