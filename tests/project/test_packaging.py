"""Project set-up promises: conda and pip agree, CI runs the README command, imports stay light."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[2]


def _normalise(requirement: str) -> str:
    return re.sub(r"\s+", "", requirement).lower()


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_environment_yml_lists_the_same_dependencies_as_pyproject():
    project = _project()
    pip_deps = set(map(_normalise, project["dependencies"]))
    for extra in project["optional-dependencies"].values():
        pip_deps |= {_normalise(r) for r in extra if not r.startswith("workbench[")}
    conda_pip = {
        _normalise(line.strip()[2:])
        for line in (ROOT / "environment.yml").read_text().splitlines()
        if line.strip().startswith("- ")
        and "=" in line
        and not line.strip().startswith("- -e")
        and line.startswith("      ")
    }
    assert conda_pip == pip_deps


def test_the_all_extra_is_every_extra_but_the_development_tools():
    extras = _project()["optional-dependencies"]
    (everything,) = extras["all"]
    named = re.fullmatch(r"workbench\[(.*)\]", everything).group(1).split(",")
    assert sorted(named) == sorted(set(extras) - {"all", "dev"})


def test_the_torch_free_voice_model_package_is_pinned_in_one_place():
    """silero-vad is installed without its dependencies (its wheel requires torch): the Makefile
    reads the pin from the module whose error names it; environment.yml and the README name it."""
    from workbench.builtin_models.packages import SILERO_VAD

    makefile = (ROOT / "Makefile").read_text()
    assert "silero-vad==" not in makefile and "builtin_models/packages.py" in makefile
    assert SILERO_VAD in (ROOT / "environment.yml").read_text()
    assert f'pip install --no-deps "{SILERO_VAD}"' in (ROOT / "README.md").read_text()


def test_ci_runs_exactly_the_readme_test_command():
    commands = [
        line
        for line in (ROOT / ".ci" / "run").read_text().splitlines()
        if line.strip() and not line.startswith(("#", "set ", "cd "))
    ]
    assert commands == ["make test"]
    assert "make test" in (ROOT / "README.md").read_text()
    assert "make demo" in (ROOT / "README.md").read_text()


def test_import_workbench_loads_no_heavy_library():
    heavy = ["pandas", "deltalake", "pyarrow.dataset", "daft", "polars", "ray", "pyspark"]
    code = f"import sys, workbench; print(','.join(m for m in {heavy!r} if m in sys.modules))"
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert loaded == ""


def test_every_public_name_loads_on_first_use():
    """``dc.<name>`` loads on first use: ``import workbench`` imports no feature module, and
    every name of ``__all__`` (and DeltaCAT's ``dc.list``, ``dc.copy``, ...) then resolves."""
    code = (
        "import sys, workbench as dc\n"
        "print(any(m.startswith('workbench.core.io') for m in sys.modules))\n"
        "print([n for n in [*dc.__all__, 'list', 'copy', 'get', 'put', 'write_to_table']"
        " if getattr(dc, n, None) is None])\n"
        "print(sorted(set(dc.__all__) - set(dir(dc))))\n"
        "print(hasattr(dc, 'no_such_name'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:4] == ["False", "[]", "[]", "False"]


def test_a_first_write_compacts_and_is_recorded_without_other_names_used(tmp_path):
    """The hooks commits need (automatic compaction, a run noting its writes) are wired by the
    first name used, even when it is only ``dc.write``."""
    code = f"""
import pyarrow as pa, workbench as dc
dc.init_local({str(tmp_path)!r})
for i in range(12):
    dc.write(pa.table({{"id": [i]}}), "t")
with dc.run("r"):
    dc.write(pa.table({{"id": [99]}}), "t")
log = dc.transactions(table="default.t", read_as="pyarrow", compactions=True)
steps = [op for ops in log.column("operations").to_pylist() for op in ops]
print("AUTO_COMPACT" in steps, len(dc.runs(read_as="pyarrow")))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "1"]


@pytest.mark.slow  # several seconds: make test runs it, make test-fast does not
def test_local_operations_start_no_ray_or_spark(tmp_path):
    code = f"""
import sys, pandas as pd, workbench as dc
dc.init_local({str(tmp_path)!r})
dc.write(pd.DataFrame({{"id": [1]}}), "t")
dc.read("t").collect()
dc.read("t", read_as=dc.DatasetType.PANDAS)
ray_started = "ray" in sys.modules and sys.modules["ray"].is_initialized()
print(ray_started, "pyspark" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_bundled_files_inside_an_archive_are_refused_with_how_to_install(tmp_path):
    """Report templates are opened by path, so workbench imported from a zip on sys.path says
    to install it as files instead of failing somewhere in papermill."""
    archive = tmp_path / "workbench.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        for path in (ROOT / "workbench").rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                zipped.write(path, path.relative_to(ROOT).as_posix())
    code = f"""
import workbench, workbench.reports as r
assert workbench.__file__.startswith({str(archive)!r}), workbench.__file__
try:
    r.resolve_template("catalog_overview")
except workbench.UnsupportedFeatureError as e:
    print(e)
"""
    env = {**os.environ, "PYTHONPATH": str(archive)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "templates of workbench.reports is inside an archive" in done.stdout
    assert "install it as files" in done.stdout
