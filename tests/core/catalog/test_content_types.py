"""``content_types=``: the content types a table accepts, kept with the table, checked on writes."""

from __future__ import annotations

import pandas as pd
import pytest
from deltalake import DeltaTable

import workbench as dc
from tests.conftest import tree_digest
from workbench.exceptions import ContentTypeValidationError, InvalidArgumentError

ROWS = pd.DataFrame({"id": [1, 2], "name": ["a", "b"]})


def test_create_table_records_accepted_types_in_the_delta_configuration(catalog):
    dc.create_table("files", schema=None, content_types=["csv", dc.ContentType.JSON])
    info = dc.get_table("files")
    assert info.table_version.content_types == [dc.ContentType.CSV, dc.ContentType.JSON]
    configuration = DeltaTable(info.uri).metadata().configuration
    assert configuration["workbench.contentTypes"] == '["CSV", "JSON"]'
    dc.init_local(catalog.root)  # reopened: the types travel with the table
    assert dc.get_table("files").content_types == (dc.ContentType.CSV, dc.ContentType.JSON)


def test_a_write_of_another_type_is_refused_and_changes_nothing(catalog):
    dc.create_table("files", schema=None, content_types=[dc.ContentType.CSV])
    dc.write(ROWS, "files", content_type=dc.ContentType.CSV)
    before = tree_digest(catalog.root)
    with pytest.raises(ContentTypeValidationError, match="accepts content types \\[CSV\\]"):
        dc.write(ROWS, "files", content_type=dc.ContentType.JSON)
    with pytest.raises(ValueError):  # DeltaCAT code catches a ValueError
        dc.write(ROWS, "files")  # PARQUET by default
    assert tree_digest(catalog.root) == before
    assert dc.get_table("files").row_count == 1  # one manifest row per file written


def test_a_write_that_creates_a_table_must_be_of_an_accepted_type(catalog):
    with pytest.raises(ContentTypeValidationError, match="PARQUET"):
        dc.write(ROWS, "t", content_types=[dc.ContentType.CSV])
    assert not dc.table_exists("t")
    dc.write(ROWS, "t", content_types=[dc.ContentType.PARQUET])
    assert dc.get_table("t").content_types == (dc.ContentType.PARQUET,)


def test_tables_without_content_types_accept_every_type(catalog):
    dc.write(ROWS, "t")
    assert dc.get_table("t").table_version.content_types is None
    dc.create_table("files", schema=None, content_types=[])
    dc.write(ROWS, "files", content_type=dc.ContentType.ORC)
    assert dc.get_table("files").content_types is None


def test_content_types_on_an_existing_table_warns_and_keeps_the_stored_ones(catalog):
    dc.write(ROWS, "t", content_types=[dc.ContentType.PARQUET])
    with pytest.warns(UserWarning, match="applies when a write creates a table"):
        dc.write(ROWS, "t", content_types=[dc.ContentType.CSV, dc.ContentType.PARQUET])
    assert dc.get_table("t").content_types == (dc.ContentType.PARQUET,)


@pytest.mark.parametrize("bad", ["csv", [dc.ContentType.CSV, "xlsx"], 5])
def test_bad_content_types_are_refused(catalog, bad):
    with pytest.raises(InvalidArgumentError):
        dc.create_table("t", content_types=bad)
    assert not dc.table_exists("t")


def test_a_copy_accepts_the_same_content_types(tmp_path):
    dc.init(
        catalogs={
            "one": dc.Catalog(dc.CatalogProperties(str(tmp_path / "one"))),
            "two": dc.Catalog(dc.CatalogProperties(str(tmp_path / "two"))),
        }
    )
    dc.create_table("files", schema=None, content_types=["csv"], catalog="one")
    dc.write(ROWS, "files", catalog="one", content_type="csv")
    dc.write(ROWS, "t", catalog="one", content_types=["parquet"])
    dc.copy("dc://one/default/**", "dc://two/default")
    assert dc.get_table("files", catalog="two").content_types == (dc.ContentType.CSV,)
    assert dc.get_table("t", catalog="two").content_types == (dc.ContentType.PARQUET,)
