"""Table versions: every write mode against existing and missing tables and table versions.

Ports DeltaCAT 2.0 ``TestTableVersionWriteModes`` (deltacat/tests/catalog/
test_default_catalog_impl.py): test_create_mode_combinations, test_append_mode_combinations,
test_auto_mode_combinations, test_replace_mode_combinations, test_merge_mode_with_schema,
test_delete_mode_with_schema, test_error_messages and test_backward_compatibility.
"""

from __future__ import annotations

import pytest

import workbench as dc
from tests.compat.helpers import additional, error, initial, merge_data, mode, simple_merge_schema

pytestmark = pytest.mark.compat

NS = "test_ns"


@pytest.fixture
def cat(catalogs) -> str:
    return catalogs.add("test_table_version_catalog")


def _write(cat, data, table, version, write_mode, **kwargs):
    return dc.write_to_table(
        data,
        table,
        catalog=cat,
        namespace=NS,
        table_version=version,
        mode=mode(write_mode),
        auto_create_namespace=True,
        **kwargs,
    )


def _set_up(cat, table, versions, **kwargs):
    """One CREATE of the initial rows per listed table version, in order."""
    for version in versions:
        _write(cat, initial(), table, version, "CREATE", **kwargs)


def _outcome(cat, data, table, version, write_mode, expected):
    if expected is None:
        _write(cat, data, table, version, write_mode)
    else:
        with pytest.raises(error(expected)):
            _write(cat, data, table, version, write_mode)


@pytest.mark.parametrize(
    "suffix, versions, version, expected",
    [
        ("new", [], "1", None),
        ("new2", [], None, None),
        ("existing", ["1"], "2", None),
        ("existing2", ["1"], "1", "TableVersionAlreadyExistsError"),
        ("existing3", ["1"], None, "TableAlreadyExistsError"),
        ("multi", ["1", "2"], "3", None),
        ("multi2", ["1", "2"], "1", "TableVersionAlreadyExistsError"),
        ("multi3", ["1", "2"], "2", "TableVersionAlreadyExistsError"),
    ],
)
def test_create_mode_combinations(cat, suffix, versions, version, expected):
    table = f"create_test_{suffix}"
    _set_up(cat, table, versions)
    _outcome(cat, initial(), table, version, "CREATE", expected)
    if expected is None and version is not None:
        found = dc.get_table(table, catalog=cat, namespace=NS, table_version=version)
        assert found is not None
        assert found.table_version.table_version == version


# Outcomes shared by APPEND and REPLACE: a missing table or version is an error.
EXISTING_ONLY = [
    ("new", [], None, "TableNotFoundError"),
    ("new2", [], None, "TableNotFoundError"),
    ("new2", [], "1", "TableNotFoundError"),
    ("existing", ["1"], None, None),
    ("existing2", ["1"], "1", None),
    ("existing3", ["1"], "2", "TableVersionNotFoundError"),
    ("multi", ["1", "2"], None, None),
    ("multi2", ["1", "2"], "1", None),  # a version other than the latest
    ("multi3", ["1", "2"], "2", None),
    ("multi4", ["1", "2"], "3", "TableVersionNotFoundError"),
]


@pytest.mark.parametrize("suffix, versions, version, expected", EXISTING_ONLY)
def test_append_mode_combinations(cat, suffix, versions, version, expected):
    table = f"append_test_{suffix}"
    _set_up(cat, table, versions)
    _outcome(cat, additional(), table, version, "APPEND", expected)


@pytest.mark.parametrize(
    "suffix, versions, version",
    [
        ("new", [], None),
        ("new2", [], "1"),
        ("existing", ["1"], None),
        ("existing2", ["1"], "1"),
        ("existing3", ["1"], "2"),  # creates version 2
        ("multi", ["1", "2"], None),
        ("multi2", ["1", "2"], "1"),
        ("multi3", ["1", "2"], "2"),
        ("multi4", ["1", "2"], "3"),  # creates version 3
    ],
)
def test_auto_mode_combinations(cat, suffix, versions, version):
    table = f"auto_test_{suffix}"
    _set_up(cat, table, versions)
    _write(cat, additional(), table, version, "AUTO")
    written = dc.read(table, NS, cat, read_as="pandas", table_version=version)
    expected = len(additional()) + (
        len(initial()) if version in versions or (version is None and versions) else 0
    )
    assert len(written) == expected, (
        "AUTO appends to a version that exists, creates one that does not"
    )
    if version is not None:
        found = dc.get_table(table, catalog=cat, namespace=NS, table_version=version)
        assert found.table_version.table_version == version


@pytest.mark.parametrize("suffix, versions, version, expected", EXISTING_ONLY)
def test_replace_mode_combinations(cat, suffix, versions, version, expected):
    table = f"replace_test_{suffix}"
    _set_up(cat, table, versions)
    _outcome(cat, merge_data(), table, version, "REPLACE", expected)


# (suffix, set-up versions, version written, expected error). "no_merge_keys" is set up with
# schema=None, i.e. a schemaless table; the others with an ``id`` merge key.
KEYED_MATRIX = [
    ("with_merge_keys", ["1"], "1", None),
    ("with_merge_keys", ["1"], "2", "TableVersionNotFoundError"),
    ("no_merge_keys", ["1"], "1", "TableValidationError"),
    ("multi_version", ["1", "2"], "1", None),
    ("multi_version", ["1", "2"], "2", None),
    ("multi_version", ["1", "2"], "3", "TableVersionNotFoundError"),
]


@pytest.mark.parametrize("write_mode", ["MERGE", "DELETE"])
@pytest.mark.parametrize("suffix, versions, version, expected", KEYED_MATRIX)
def test_keyed_mode_with_schema(cat, write_mode, suffix, versions, version, expected):
    """DeltaCAT's test_merge_mode_with_schema and test_delete_mode_with_schema."""
    table = f"{write_mode.lower()}_test_{suffix}"
    schema = None if suffix == "no_merge_keys" else simple_merge_schema()
    _set_up(cat, table, versions, schema=schema)
    _outcome(cat, merge_data(), table, version, write_mode, expected)


@pytest.mark.parametrize(
    "table, version, write_mode, keywords",
    [
        ("error_test_table", "1", "CREATE", ["version", "already exists", "CREATE"]),
        ("error_test_table", "99", "APPEND", ["version", "does not exist"]),
        ("nonexistent_table", None, "APPEND", ["does not exist", "APPEND"]),
        ("error_test_table", "99", "REPLACE", ["version", "does not exist"]),
        ("nonexistent_table", None, "REPLACE", ["does not exist", "REPLACE"]),
        # The table has no merge keys: the version check must come before the key check.
        ("error_test_table", "99", "MERGE", ["version", "does not exist"]),
    ],
)
def test_error_messages(cat, table, version, write_mode, keywords):
    if table == "error_test_table":
        _write(cat, initial(), table, "1", "CREATE")
    with pytest.raises(Exception) as caught:
        _write(cat, initial(), table, version, write_mode)
    message = str(caught.value).lower()
    for keyword in keywords:
        assert keyword.lower() in message, f"{keyword!r} not in {message!r}"


def test_backward_compatibility(cat):
    """Every mode without a table_version works on the latest version."""
    _write(cat, initial(), "compat_table_1", None, "CREATE")
    _write(cat, additional(), "compat_table_1", None, "AUTO")
    _write(cat, additional(), "compat_table_1", None, "APPEND")
    assert len(dc.read("compat_table_1", NS, cat, read_as="pandas")) == 6
    _write(cat, merge_data(), "compat_table_1", None, "REPLACE")
    final = dc.read("compat_table_1", NS, cat, read_as="pandas").sort_values("id")
    assert final.to_dict("list") == merge_data().sort_values("id").to_dict("list")
