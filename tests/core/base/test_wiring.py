"""Hook modules load when a process first records a change or names a model, never for a read."""

import subprocess
import sys

HOOKS = ("workbench.core.ops.compaction", "workbench.core.events.runs")

READ_THEN_WRITE = """
import sys
import pyarrow as pa
import workbench as dc
dc.init_local(sys.argv[1])
dc.create_table("t", schema=dc.Schema.of([pa.field("id", pa.int64())]))
dc.write(pa.table({"id": [1, 2]}), "t", mode="append")
print(dc.sql("SELECT count(*) AS n FROM default.t", read_as="pyarrow").column(0)[0].as_py())
print(all(h in sys.modules for h in HOOKS))
"""

READ_ONLY = """
import sys
import workbench as dc
dc.init_local(sys.argv[1])
print(dc.sql("SELECT count(*) AS n FROM default.t", read_as="pyarrow").column(0)[0].as_py())
print([h for h in HOOKS if h in sys.modules])
from workbench.core.inference.resolve import resolve_model
print(type(resolve_model("text-embedding")).__name__)
"""


def _run(code: str, root: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", f"HOOKS = {HOOKS!r}\n" + code, root],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.split("\n")


def test_a_write_loads_the_commit_hooks_and_a_read_alone_does_not(tmp_path):
    root = str(tmp_path / "lake")
    assert _run(READ_THEN_WRITE, root)[:2] == ["2", "True"]
    assert _run(READ_ONLY, root)[:3] == ["2", "[]", "TextEmbedding"]
