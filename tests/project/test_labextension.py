"""The committed JupyterLab extension (workbench/labextension/) is built from the TypeScript in
labextension/ as it is now, small, and shipped where JupyterLab finds it; no Node.js needed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from tools.build_labextension import BUILT, SOURCE, recorded_hash, source_hash

ROOT = Path(__file__).resolve().parents[2]
NAME = json.loads((SOURCE / "package.json").read_text(encoding="utf-8"))["name"]


def test_the_committed_build_matches_the_sources():
    assert recorded_hash() == source_hash(), (
        "workbench/labextension/ is stale: run `make labextension` and commit what it builds"
    )


def test_the_built_files_are_small_and_the_build_outputs_are_not_committed():
    files = [p for p in BUILT.rglob("*") if p.is_file()]
    assert any(p.name.startswith("remoteEntry.") for p in files)
    assert all(p.stat().st_size < 1_000_000 for p in files)
    ignored = (SOURCE / ".gitignore").read_text(encoding="utf-8").split()
    assert {"node_modules/", "lib/", "*.tsbuildinfo"} <= set(ignored)


def test_setuptools_installs_it_where_jupyterlab_looks():
    data_files = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "data-files"
    ]
    target = f"share/jupyter/labextensions/{NAME}"
    assert data_files[target] == ["workbench/labextension/package.json"]
    assert data_files[f"{target}/static"] == ["workbench/labextension/static/*"]


@pytest.mark.slow  # several seconds: make test runs it, make test-fast does not
def test_jupyterlab_lists_it_as_enabled():
    listed = subprocess.run(
        [sys.executable, "-m", "jupyter", "labextension", "list"],
        capture_output=True,
        text=True,
        check=True,
    )
    line = next(line for line in (listed.stdout + listed.stderr).splitlines() if NAME in line)
    assert "enabled" in line and "OK" in line, line
