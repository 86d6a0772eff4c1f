"""Rows built into Arrow from buffers equal pyarrow's own conversion of the same rows, nulls,
non-ASCII text and empty inputs included, and never import pandas."""

from __future__ import annotations

import subprocess
import sys

import pyarrow as pa
import pytest

from workbench.core.base.arrow_rows import arrow_rows

SCHEMA = pa.schema([("name", pa.string()), ("n", pa.int64()), ("note", pa.string())])


@pytest.mark.parametrize(
    "rows",
    [
        [],
        [{"name": "a", "n": 1, "note": "x"}],
        [{"name": "ünï ✓", "n": -(2**63)}, {"n": 2**63 - 1, "note": ""}, {}],
        [{"name": None, "n": None, "note": None}] * 9 + [{"name": "tenth", "n": 0}],
        [{"name": "x" * 100_000, "n": 7, "other": "ignored"}],
    ],
)
def test_rows_equal_pyarrows_own_conversion(rows):
    built = arrow_rows(rows, SCHEMA)
    built.validate(full=True)
    expected = pa.Table.from_pylist([{k: r.get(k) for k in SCHEMA.names} for r in rows], SCHEMA)
    assert built.equals(expected)


def test_a_type_it_does_not_build_is_refused():
    with pytest.raises(TypeError, match="string and int64"):
        arrow_rows([{"x": 1.5}], pa.schema([("x", pa.float64())]))


def test_building_rows_imports_no_pandas():
    code = (
        "import sys, pyarrow as pa\n"
        "from workbench.core.base.arrow_rows import arrow_rows\n"
        "arrow_rows([{'a': 'x', 'b': 1}], pa.schema([('a', pa.string()), ('b', pa.int64())]))\n"
        "print('pandas' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
