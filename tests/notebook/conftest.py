"""The JupyterLab server of the browser tests: one per test run, on the worker that runs them
all (their xdist group, tests/conftest.py), each test's kernels shut down after it."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from tests.chromium import require_chromium
from tests.notebook.test_browser import NOTEBOOK, ROOT, jupyter_lab, stop_kernels


@pytest.fixture(scope="session")
def lab_server(tmp_path_factory) -> Iterator[tuple[str, str]]:
    """JupyterLab serving a copy of the tutorial; yields (base URL, token)."""
    require_chromium()
    folder = tmp_path_factory.mktemp("lab")
    shutil.copy(ROOT / "tutorials" / NOTEBOOK, folder / NOTEBOOK)
    with jupyter_lab(folder) as served:
        yield served


@pytest.fixture
def lab(lab_server) -> Iterator[tuple[str, str]]:
    """The shared JupyterLab for one test; the kernels it started are shut down after it."""
    yield lab_server
    stop_kernels(*lab_server)
