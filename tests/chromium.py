"""Headless Chromium for browser tests: Debian's binary (never a downloaded one), a page whose
screenshot is kept even when the test fails, and a switch that keeps the page offline."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

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


@contextmanager
def chromium_page(screenshot: Path, width: int = 1500, height: int = 1100) -> Iterator[Any]:
    """A Playwright page in headless Chromium; a full-page screenshot goes to ``screenshot``
    when the block ends, failed or not."""
    from playwright.sync_api import sync_playwright

    require_chromium()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": width, "height": height})
        try:
            yield page
        finally:
            page.screenshot(path=str(screenshot), full_page=True)
            browser.close()


def offline(page: Any, allowed: Callable[[str], bool]) -> list[str]:
    """Abort every request of ``page`` whose URL ``allowed`` refuses, so the page must work with
    no CDN; returns the URLs aborted (a test asserts it stays empty)."""
    aborted: list[str] = []

    def route(request_route: Any) -> None:
        url = request_route.request.url
        if allowed(url):
            request_route.continue_()
        else:
            aborted.append(url)
            request_route.abort()

    page.route("**/*", route)
    return aborted
