"""Never a wrong row: every read path by every lived-in table state by every query shape it can
express, checked against the plain-Python model of the rows.

Local paths (pandas, Arrow, polars, numpy, Daft, DuckDB SQL, readers of the folders, show,
diff, changes) run in the fast tier; Spark and Ray paths in theirs; the object-store catalog in
the s3 tier."""

from __future__ import annotations

import pytest

import workbench as dc
from tests.conformance.filters import FILTERS, check_filters
from tests.conformance.paths import PATHS, Path
from tests.conformance.shapes import (
    AGGREGATE,
    ALL,
    FILTER,
    JOIN,
    PROJECT,
    SHAPES,
    check,
)
from tests.conformance.states import STATES

# Not on an object store: a reader of the folders that does not take this project's
# object-store options, and the pandas, numpy and polars forms of the local engine's reads and
# of the change feed, which convert the rows read:pyarrow (changes:pyarrow) fetches there exactly
# as they do on the local catalog.
NOT_ON_OBJECT_STORES = {
    "folder:duckdb",
    "read:pandas",
    "read:numpy",
    "read:polars",
    "changes:pandas",
}


# States that each bring something a scan or a rendering of a query could get wrong (times,
# types, vectors, a later column, long text, keys, addressing, an empty table, vacuumed files).
# A Spark or Ray query costs a hundred local ones: every state's scan runs on them (the shape
# all), while what they compute over the rows scanned (a projection, a filter, an aggregate, a
# join, a limit) and a read repeated in one process (the driver's caches, which are the local
# paths' own, run there on every state) run on these states. On an object store every shape
# runs on these states: what differs there from the local catalog is what a read fetches and
# keeps (vectors, versions, branches, vacuumed and compacted files).
TELLING_STATES = {
    "plain",
    "vectors_file",
    "vec_version",
    "vec_as_of",
    "branch",
    "evolved",
    "grown",
    "many_types",
    "long_text",
    "compacted",
    "two_keys",
    "emptied",
    "vacuumed_partly",
}

# On an object store a read path differs from its local run in what it fetches and keeps (the
# scan, its vectors, its caches: the shapes all, limit, repeated, diff and the filters); what an
# engine computes over the scanned rows (a projection, a join, an aggregate, one filter) it
# computes as on the local catalog, so those shapes run there only.
LOCAL_ONLY_SHAPES = {PROJECT, JOIN, AGGREGATE, FILTER}


def cases(marks: set[str], object_store: bool = False) -> list:
    """(path, state, shape) for every path whose tier marks are ``marks``."""
    chosen = []
    for path in PATHS:
        if set(path.marks) != marks or (object_store and path.name in NOT_ON_OBJECT_STORES):
            continue
        for state, traits in STATES.items():
            if object_store and not traits.small:
                continue
            chosen += [
                pytest.param(path, state, shape, id=f"{path}-{state}-{shape}")
                for shape in (*SHAPES, FILTERS)
                if path.applies(traits, shape)
                and not (object_store and shape in LOCAL_ONLY_SHAPES)
                and (state in TELLING_STATES or not _telling_only(path, shape, object_store))
            ]
    return chosen


def _telling_only(path: Path, shape: str, object_store: bool) -> bool:
    """Whether ``path`` runs ``shape`` only on ``TELLING_STATES``."""
    if path.telling_states_only:
        return True
    if set(path.marks) & {"spark", "ray"}:
        return shape != ALL
    return object_store  # what a read fetches and keeps there: the telling states show it


def conforms(lived, path: Path, state: str, shape: str) -> None:
    table_state = lived.states[state]
    try:
        answer = path.run(lived.where, table_state, shape)
    except dc.TableVersionNotFoundError:
        if STATES[state].gone:
            return  # files the state needs were vacuumed: this error, or its exact rows
        raise
    if shape == FILTERS:
        required = path.filter_cases(table_state)
        check_filters(table_state, answer, path.keeps_write_order, required)
        return
    check(table_state, shape, answer, lived.partner, ordered=path.keeps_write_order)


# Paths that convert what another path reads (pandas, numpy and polars: read:pyarrow's rows),
# compute over the same scan in another engine (Daft), or are other libraries' readers of the
# tables' folders: ``make test-fast`` runs them on the telling states, ``make test`` (the slow
# tier too) on every state.
FAST_ON_TELLING_STATES_ONLY = {
    "read:pandas",
    "read:numpy",
    "read:polars",
    "read:daft",
    "sql:daft",
    "folder:duckdb",
    "folder:polars",
    "folder:deltalake",
}


def _tiered(case):
    """``case``, in the slow tier when ``make test-fast`` leaves it to ``make test``."""
    path, state, _ = case.values
    if str(path) in FAST_ON_TELLING_STATES_ONLY and state not in TELLING_STATES:
        return pytest.param(*case.values, id=case.id, marks=pytest.mark.slow)
    return case


@pytest.mark.parametrize(("path", "state", "shape"), [_tiered(case) for case in cases(set())])
def test_local_read_paths(lived, registered, path, state, shape):
    conforms(lived, path, state, shape)


# Read paths of this process that tell big files from small ones (``live_table``).
SIZE_AWARE = {"read:pyarrow", "sql:local", "diff"}
# The states holding every kind of file the big-file code slices: vectors in files and inline,
# purged and over many commits, at versions and times, a later or widened column, compacted and
# vacuumed files.
BIG_FILE_STATES = TELLING_STATES | {"vectors_inline", "purged", "many_commits", "widened"}


@pytest.mark.slow  # the same reads as test_local_read_paths, through the big-file code
@pytest.mark.parametrize("sliced", [False, True], ids=["deletes-as-they-are", "all-sliced"])
@pytest.mark.parametrize(
    ("path", "state", "shape"),
    [  # filtered reads go through DuckDB's reader, which the size bounds do not steer
        case
        for case in cases(set())
        if str(case.values[0]) in SIZE_AWARE
        and case.values[2] != FILTERS
        and case.values[1] in BIG_FILE_STATES
    ],
)
def test_local_read_paths_with_files_taken_for_big(
    lived, registered, path, state, shape, sliced, monkeypatch
):
    """The same reads with the size bounds lowered, so a table's first files are read as big
    ones (a scan streamed through the slicing of their vectors) beside small and tiny ones;
    ``sliced``: every delete left out by slicing, as when deletes are few among many rows."""
    from workbench.core.delta import decoded_files, deleted_positions, tiny_files

    monkeypatch.setattr(decoded_files, "SMALL_FILE_BYTES", 8 * 1024)
    monkeypatch.setattr(tiny_files, "TINY_FILE_BYTES", 2 * 1024)
    if sliced:
        monkeypatch.setattr(deleted_positions, "MIN_KEPT_RUN", 1)
    conforms(lived, path, state, shape)


# Reads whose rows DuckDB hands over in Arrow batches (``duck_scans.result``): SQL, and the
# filtered reads of this process
BATCHED_READS = {"sql:local", "read:pyarrow", "read:daft"}


@pytest.mark.slow  # the same reads as test_local_read_paths, their results in many batches
@pytest.mark.parametrize(
    ("path", "state", "shape"),
    [
        case
        for case in cases(set())
        if str(case.values[0]) in BATCHED_READS
        and (str(case.values[0]) == "sql:local" or case.values[2] == FILTERS)
        and case.values[1] in TELLING_STATES
    ],
)
def test_local_read_paths_with_results_in_many_batches(
    lived, registered, path, state, shape, monkeypatch
):
    """The same reads with DuckDB's result batches cut to 7 rows, so every result but the
    smallest spans batches, as a big table's does: rows, order and deletes as the model's."""
    from workbench.core.io import duck_scans

    monkeypatch.setattr(duck_scans, "RESULT_BATCH_ROWS", 7)
    conforms(lived, path, state, shape)


@pytest.mark.parametrize(("path", "state", "shape"), cases({"spark"}))
def test_spark_read_paths(spark, lived, registered, path, state, shape):
    conforms(lived, path, state, shape)


@pytest.mark.parametrize(("path", "state", "shape"), cases({"ray"}))
def test_ray_read_paths(ray_cluster, lived, registered, path, state, shape):
    conforms(lived, path, state, shape)


@pytest.mark.parametrize(("path", "state", "shape"), cases(set(), object_store=True))
def test_object_store_read_paths(lived_on_s3, registered, path, state, shape):
    conforms(lived_on_s3, path, state, shape)


@pytest.mark.parametrize(
    ("path", "state", "shape"),
    [c for c in cases(set(), object_store=True) if c.values[2] == FILTERS],
)
def test_object_store_read_paths_by_range(lived_on_s3, registered, path, state, shape, monkeypatch):
    """The filtered reads again with every file read by range (its footer, then the row
    groups its statistics allow), as big files are, not fetched whole."""
    from workbench.core.delta import row_groups
    from workbench.core.storage import file_cache

    monkeypatch.setattr(row_groups, "WHOLE_FILE_BYTES", 0)
    file_cache.clear()
    conforms(lived_on_s3, path, state, shape)
