"""One sequence of writes run through any engine, and what it leaves: rows, schema with merge
keys, and the table versions the catalog log recorded (the parity tests compare engines)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
from hypothesis import strategies as st

import workbench as dc

KEYED = dc.Schema.of(
    [
        dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True),
        dc.Field.of(pa.field("v", pa.string())),
        dc.Field.of(pa.field("score", pa.float64()), future_default=0.0),
    ]
)

OPERATIONS = [
    ("create", {"id": [1, 2, 3], "v": ["a", "b", "c"]}, "id long, v string"),
    ("merge", {"id": [2, 4], "v": ["B", "d"], "extra": [7, 8]}, "id long, v string, extra int"),
    ("merge", {"id": [3], "score": [1.5]}, "id long, score double"),
    ("delete", {"id": [1, 9]}, "id long"),
    ("replace", {"id": [5, 6], "v": ["e", "f"]}, "id long, v string"),
    ("merge", {"id": [6, 7], "v": ["F", "g"]}, "id long, v string"),
    (  # every column: merge-on-read engines mark rows and write the source as it is
        "merge",
        {"id": [5, 8], "v": ["E", "h"], "score": [2.5, 3.5], "extra": [1, 2]},
        "id long, v string, score double, extra int",
    ),
]
TYPES = {"id": pa.int64(), "v": pa.string(), "extra": pa.int32(), "score": pa.float64()}


def payload(engine: str, data: dict[str, list], ddl: str, spark: Any = None) -> Any:
    """``data`` as the dataset type the engine writes."""
    table = pa.table({k: pa.array(v, TYPES[k]) for k, v in data.items()})
    if engine == "daft":
        import daft

        return daft.from_arrow(table)
    if engine == "ray":
        import ray.data

        return ray.data.from_arrow(table)
    if engine == "spark":
        return spark.createDataFrame(list(zip(*data.values(), strict=True)), ddl)
    return table


def outcome(table: str = "t") -> dict[str, Any]:
    """What a table holds and what the log recorded of it (every file in declared types)."""
    from tests.core.schema.test_fidelity import files_use_declared_types

    files_use_declared_types("", table)
    rows = dc.read(table, read_as=dc.DatasetType.PYARROW).sort_by("id").to_pylist()
    info = dc.get_table(table)
    versions = [
        [c["table_version"] for c in dc.read_transaction(t).changes if c["table_name"] == table]
        for t in dc.transactions(read_as=dc.DatasetType.PYARROW)
        .column("transaction_id")
        .to_pylist()
    ]
    return {
        "rows": rows,
        "schema": [(f.name, str(f.type), f.is_merge_key) for f in info.schema],
        "versions": versions,
    }


def run_sequence(
    engine: str,
    root: Path | dc.Catalog,
    steps: list[tuple[str, dict, str]] = OPERATIONS,
    spark: Any = None,
) -> dict[str, Any]:
    """Run ``steps`` through ``engine`` on a fresh catalog (a new folder, or a catalog made by
    the ``new_catalog`` fixture); return the outcome."""
    if isinstance(root, dc.Catalog):
        dc.init({"default": root})
    else:
        dc.init_local(root)
    for mode, data, ddl in steps:
        dc.write(
            payload(engine, data, ddl, spark),
            "t",
            mode=mode,
            schema=KEYED if mode == "create" else None,
        )
    return outcome()


# Hypothesis draws of (mode, keys) pairs, for random_steps.
STEPS = st.lists(
    st.tuples(
        st.sampled_from(["merge", "delete", "replace"]),
        st.lists(st.integers(0, 8), min_size=1, max_size=4, unique=True),
    ),
    min_size=1,
    max_size=3,
)


def random_steps(steps: list[tuple[str, list[int]]]) -> list[tuple[str, dict, str]]:
    """A Hypothesis draw of (mode, keys) pairs as a write sequence after a keyed create."""
    sequence = [("create", {"id": [0, 1, 2], "v": ["a", "b", "c"]}, "id long, v string")]
    for mode, keys in steps:
        if mode == "delete":
            sequence.append((mode, {"id": keys}, "id long"))
        else:
            data = {"id": keys, "v": [f"{mode}{k}" for k in keys]}
            sequence.append((mode, data, "id long, v string"))
    return sequence
