"""One DuckDB database a process: the scratch work (parsing, casts, filter checks) runs on a
cursor of the database queries run on, opened for the local catalogs registered, so a first
query opens one database, not two; opened anew (wider) for a catalog put later, while other
threads parse and query, every answer stays exact."""

from __future__ import annotations

import threading

import duckdb
import pyarrow as pa

import workbench as dc
from workbench.core.base.caches import clear_process_caches


def _catalog(root, rows: int) -> None:
    dc.put_catalog(root.name, dc.Catalog(dc.CatalogProperties(str(root))))
    dc.write(pa.table({"id": list(range(rows))}), "t", catalog=root.name)


def test_a_first_query_and_a_filtered_read_open_one_database(tmp_path, monkeypatch):
    dc.init({"a": dc.Catalog(dc.CatalogProperties(str(tmp_path / "a")))})
    dc.write(pa.table({"id": [1, 2, 3]}), "t")
    opened = []
    connect = duckdb.connect
    monkeypatch.setattr(duckdb, "connect", lambda *a, **k: opened.append(1) or connect(*a, **k))
    clear_process_caches()  # the write's database closed: the queries open what they need
    assert dc.sql("SELECT id FROM default.t WHERE id >= 2", read_as="pyarrow").num_rows == 2
    assert dc.read("t", read_as="pyarrow", filter="id = 3").num_rows == 1
    assert len(opened) == 1


def test_threads_parse_and_query_while_a_new_catalog_widens_the_database(tmp_path):
    dc.init({"a": dc.Catalog(dc.CatalogProperties(str(tmp_path / "a")))})
    dc.write(pa.table({"id": list(range(100))}), "t")
    wrong, errors = [], []
    start = threading.Barrier(4)

    def reader(k: int) -> None:
        start.wait()
        try:
            for i in range(30):
                bound = (k * 7 + i) % 100
                got = dc.sql(
                    f"SELECT count(*) AS n FROM default.t WHERE id < {bound}", read_as="pyarrow"
                )
                kept = dc.read("t", read_as="pyarrow", filter=f"id >= {bound}").num_rows
                if got["n"][0].as_py() != bound or kept != 100 - bound:
                    wrong.append((k, bound))
        except Exception as e:  # every error reported below
            errors.append(e)

    threads = [threading.Thread(target=reader, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    start.wait()
    for n in range(3):  # each put and first query opens the database anew, wider
        _catalog(tmp_path / f"more{n}", 10 + n)
        counted = dc.sql(f"SELECT count(*) AS n FROM more{n}.default.t", read_as="pyarrow")
        assert counted["n"][0].as_py() == 10 + n
    for t in threads:
        t.join()
    assert not errors and not wrong
