"""The wheel works without the repository beside it: built as ``make build`` builds it, installed
(not editable) into a new virtual environment, and used there from a folder outside the
repository: the README's quick start, media tables and built-in models, a bundled report through
``dc.report`` and ``python -m workbench report``, the magics and a widget.

How the environment gets its dependencies: pip installs the wheel with ``--no-deps
--no-index``, and a ``.pth`` file in the new environment holds the path of the folder where this
test's own dependencies are installed. Python appends that folder to ``sys.path`` after the
environment's site-packages and does not run the ``.pth`` files inside it, so the editable
install's import hook that maps ``workbench`` to the checkout never loads. The dependencies'
data files (nbconvert's templates, under ``share/jupyter``) are linked into the new
environment's prefix beside the wheel's own (the JupyterLab extension), where they would be had
pip installed them there. So workbench's own
files can only come from the wheel, which ``wheel_session.py`` checks for every workbench module
it loaded and for the report template and Spark log settings it found. The alternatives were
worse: ``--system-site-packages`` would run that hook and import the checkout, and installing
the dependencies again (``--find-links``, a pip cache) takes minutes and the network. No process
gets PYTHONPATH, and all run in a folder outside the repository.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.kernel]

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 300  # seconds for any one step


def _quick_start() -> str:
    """The README's quick start: the first Python block after its heading."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Quick start\n", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)


def _environment() -> dict[str, str]:
    """This process's variables without PYTHONPATH (which may name the checkout) or workbench
    settings; models stay offline."""
    kept = {
        key: value
        for key, value in os.environ.items()
        if key != "PYTHONPATH" and not key.startswith("WORKBENCH_")
    }
    return {**kept, "HF_HUB_OFFLINE": "1"}


def _new_environment(folder: Path, wheel: Path) -> Path:
    """A virtual environment with the wheel installed and this test's dependencies on its path;
    its Python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    python = folder / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(python), "--disable-pip-version-check"]
    subprocess.run([*pip, "install", "-q", "--no-deps", "--no-index", str(wheel)], check=True)
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    dependencies = dict.fromkeys([sysconfig.get_path("purelib"), sysconfig.get_path("platlib")])
    Path(site, "workbench-test-dependencies.pth").write_text("\n".join(dependencies) + "\n")
    jupyter = folder / "share" / "jupyter"  # the wheel put its JupyterLab extension here
    for entry in Path(sys.prefix, "share", "jupyter").iterdir():
        if not (jupyter / entry.name).exists():
            (jupyter / entry.name).symlink_to(entry)
    return python


def test_the_wheel_installed_in_a_new_environment_works_without_the_repository(tmp_path):
    built = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "build_wheel.py"), str(tmp_path / "dist")],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = (tmp_path / "dist").glob("workbench-*.whl")
    python = _new_environment(tmp_path / "venv", wheel)
    work = tmp_path / "work"
    work.mkdir()

    def run(*arguments: str) -> str:
        done = subprocess.run(
            [str(python), *arguments],
            cwd=work,
            env=_environment(),
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        assert done.returncode == 0, f"{arguments}:\n{done.stdout}\n{done.stderr}"
        return done.stdout

    where = run("-c", "import workbench; print(workbench.__file__)").strip()
    extension = tmp_path / "venv" / "share" / "jupyter" / "labextensions" / "workbench-jupyterlab"
    assert (extension / "package.json").is_file() and list(extension.glob("static/remoteEntry.*"))
    assert Path(where).is_relative_to(tmp_path / "venv"), where
    (work / "quick_start.py").write_text(_quick_start(), encoding="utf-8")
    printed = run("quick_start.py")
    assert "Felix" in printed and "merge keys: user_id" in printed, printed
    shutil.copy(ROOT / "tests" / "project" / "wheel_session.py", work)
    printed = run("wheel_session.py", str(ROOT))
    assert "all from" in printed, printed
    run("-m", "workbench", "report", "catalog_overview", "-o", "cli.html")
    assert "media.samples" in (work / "cli.html").read_text(encoding="utf-8")
    runs = run("-m", "workbench", "runs", "--kind", "report")
    assert runs.count("report catalog_overview") == 2, runs
