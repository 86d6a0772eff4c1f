"""``make labextension``: build the JupyterLab extension in ``labextension/`` (TypeScript) into
``workbench/labextension/`` (the prebuilt extension the wheel ships), the only step that needs
Node.js. The built ``package.json`` records a hash of the sources, which
``tests/project/test_labextension.py`` compares so a stale build fails the tests.

Usage: ``python tools/build_labextension.py``. It runs ``npm ci``, ``tsc`` and JupyterLab's
builder (``@jupyterlab/builder``'s ``build-labextension`` against the installed JupyterLab's
``staging`` folder, which is what ``jupyter labextension build`` ran before JupyterLab 4.6
delegated it to ``jupyter-builder``).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "labextension"
BUILT = ROOT / "workbench" / "labextension"
HASH_KEY = "workbench_source_hash"  # the key of the built package.json that holds the hash


def source_files(source: Path = SOURCE) -> list[Path]:
    """The files the build is made from (not node_modules, lib or build caches)."""
    files = [source / name for name in ("package.json", "package-lock.json", "tsconfig.json")]
    return files + sorted((source / "src").rglob("*.ts"))


def source_hash(source: Path = SOURCE) -> str:
    """A SHA-256 of the sources' relative paths and contents."""
    digest = hashlib.sha256()
    for path in source_files(source):
        digest.update(path.relative_to(source).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def recorded_hash(built: Path = BUILT) -> str | None:
    """The source hash the built extension was made from."""
    return json.loads((built / "package.json").read_text(encoding="utf-8")).get(HASH_KEY)


def build() -> None:
    """Build the extension and record its sources' hash."""
    import jupyterlab

    npm = shutil.which("npm")
    if npm is None:
        sys.exit("npm is needed to build the JupyterLab extension (Node.js 20 or newer)")
    run = {"cwd": SOURCE, "check": True}
    subprocess.run([npm, "ci", "--no-audit", "--no-fund"], **run)
    shutil.rmtree(SOURCE / "lib", ignore_errors=True)
    subprocess.run([npm, "exec", "--", "tsc", "-p", "."], **run)
    shutil.rmtree(BUILT, ignore_errors=True)
    builder = SOURCE / "node_modules" / "@jupyterlab" / "builder" / "lib" / "build-labextension.js"
    core = Path(jupyterlab.__file__).parent / "staging"
    subprocess.run(["node", str(builder), "--core-path", str(core), "."], **run)
    package = BUILT / "package.json"
    meta = json.loads(package.read_text(encoding="utf-8"))
    meta[HASH_KEY] = source_hash()
    package.write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    print(f"built {BUILT.relative_to(ROOT)} from {SOURCE.relative_to(ROOT)}")


if __name__ == "__main__":
    build()
