"""``make build``: the wheel, built from a clean copy of the sources and then checked to hold
every file under ``workbench/`` (modules and the package data read at run time: report
templates, the nbconvert template, Spark's log settings) and nothing else.

Usage: ``python tools/build_wheel.py OUT_FOLDER``; prints the wheel's path and file count, and
exits 1 naming each missing or unexpected file. A copy, since setuptools' ``build/`` folder in
a checkout keeps files deleted from the sources and would put them in the wheel.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "workbench"
PROJECT_FILES = ("pyproject.toml", "README.md")  # what the build reads besides the package
# The prebuilt JupyterLab extension also goes where JupyterLab finds extensions (a data file).
LABEXTENSION = f"{PACKAGE}/labextension/"
LABEXTENSION_DATA = "data/share/jupyter/labextensions/workbench-jupyterlab/"


def source_files(root: Path = ROOT) -> set[str]:
    """The package's files as the wheel must hold them (no caches, no hidden files such as
    Jupyter's checkpoints)."""
    found = set()
    for path in (root / PACKAGE).rglob("*"):
        relative = path.relative_to(root)
        skipped = any(part.startswith(".") or part == "__pycache__" for part in relative.parts)
        if path.is_file() and not skipped and path.suffix != ".pyc":
            found.add(relative.as_posix())
    return found


def build(out: Path, root: Path = ROOT) -> Path:
    """Build the wheel from a copy of ``root``'s sources into ``out``; its path."""
    with tempfile.TemporaryDirectory(prefix="workbench-build-") as tmp:
        source = Path(tmp, "source")
        source.mkdir()
        for name in PROJECT_FILES:
            shutil.copy2(root / name, source / name)
        ignored = shutil.ignore_patterns("__pycache__", "*.pyc", ".*")
        shutil.copytree(root / PACKAGE, source / PACKAGE, ignore=ignored)
        built = Path(tmp, "wheel")
        pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
        subprocess.run([*pip, "wheel", "--no-deps", "-w", str(built), str(source)], check=True)
        (wheel,) = built.glob("*.whl")
        out.mkdir(parents=True, exist_ok=True)
        return Path(shutil.move(wheel, out / wheel.name))


def problems(wheel: Path, root: Path = ROOT) -> list[str]:
    """What is wrong with ``wheel``'s contents: files of the sources it lacks, files it holds
    that the sources do not."""
    with zipfile.ZipFile(wheel) as archive:
        names = [n for n in archive.namelist() if not n.split("/")[0].endswith(".dist-info")]
    held = {n for n in names if not n.split("/")[0].endswith(".data")}
    data = {n.split("/", 1)[1] for n in names if n.split("/")[0].endswith(".data")}
    expected = source_files(root)
    extension = {n.removeprefix(LABEXTENSION) for n in expected if n.startswith(LABEXTENSION)}
    shipped = {n.removeprefix(LABEXTENSION_DATA) for n in data if n.startswith(LABEXTENSION_DATA)}
    return (
        [f"missing from the wheel: {name}" for name in sorted(expected - held)]
        + [f"in the wheel but not in {PACKAGE}/: {name}" for name in sorted(held - expected)]
        + [f"missing from the wheel: {LABEXTENSION_DATA}{n}" for n in sorted(extension - shipped)]
        + [
            f"a data file not in {LABEXTENSION}: {n}"
            for n in sorted(data - {LABEXTENSION_DATA + e for e in extension})
        ]
    )


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    wheel = build(Path(argv[0]))
    wrong = problems(wheel)
    for line in wrong:
        print(line, file=sys.stderr)
    if wrong:
        print(
            f"{wheel} is incomplete: list its data files in [tool.setuptools.package-data] "
            "of pyproject.toml.",
            file=sys.stderr,
        )
        return 1
    with zipfile.ZipFile(wheel) as archive:
        print(f"{wheel}: {len(archive.namelist())} files, every file of {PACKAGE}/ included")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
