"""Lived-in tables: each is written the way users write (appends, merges, partial upserts,
deletes, schema evolution, optimize, a branch), beside a model of its rows, and every point a
reader can address (latest, ``version=``, ``as_of``, a branch) becomes a ``TableState``."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

import workbench as dc
from tests.conformance.edge_states import EDGE_BUILDERS, FIRST_BUILDERS
from tests.conformance.model import TableModel
from tests.conformance.tables import (
    AS_OF,
    BRANCH,
    KEYED,
    LATEST,
    NAMESPACE,
    ON_BRANCH,
    PARTNER,
    VECTORS_OFF,
    VERSION,
    TableState,
    Writer,
    last_transaction,
    rows,
)


@dataclass(frozen=True)
class Traits:
    """What a state is, known before it is built: how it is addressed, whether ``dc.diff``
    has a first point to compare it with, whether a small (object-store) build has it, and
    whether ``dc.vacuum`` removed files it needs (a read raises ``TableVersionNotFoundError``,
    or returns its rows where the files it reads are left; never other rows)."""

    address: str = LATEST
    diffable: bool = True
    small: bool = True
    gone: bool = False


STATES = {
    "plain": Traits(),
    "vectors_file": Traits(),
    "vec_version": Traits(VERSION),
    "vec_as_of": Traits(AS_OF),
    "vec_tag": Traits(AS_OF),
    "branch": Traits(ON_BRANCH),
    "branch_only": Traits(ON_BRANCH, diffable=False),
    "vectors_inline": Traits(),
    "purged": Traits(),
    "evolved": Traits(),
    "grown": Traits(),  # new keys with a new column: files of two schemas, one with a vector
    "vectors_off": Traits(),
    "turned_off": Traits(),
    "optimized": Traits(),
    "many_commits": Traits(small=False),
    "compacted": Traits(),
    "compacted_version": Traits(VERSION),
    "compacted_appends": Traits(),
    "vacuumed": Traits(),
    "vacuumed_partly": Traits(AS_OF, gone=True),
    "vacuumed_whole": Traits(VERSION, gone=True),
    "many_types": Traits(),
    "long_text": Traits(),
    "widened": Traits(),
    "widened_before": Traits(VERSION),
    "table_version_2": Traits(),
    "string_key": Traits(),
    "two_keys": Traits(),
    "engines": Traits(),
    "emptied": Traits(),
    "never_written": Traits(),
    "published_branch": Traits(ON_BRANCH),
    "published_main": Traits(),
}


def build(catalog: str, *, small: bool = False) -> dict[str, TableState]:
    """Write every lived-in table into ``catalog`` (``small``: fewer rows, for object stores)
    and return its states by name."""
    rng = np.random.default_rng(20261126)
    size = 600 if small else 2000
    dc.create_namespace(NAMESPACE, catalog=catalog)
    states: dict[str, TableState] = {}
    partner = Writer(catalog, PARTNER, TableModel(["id", "m"], key="id"))
    partner_schema = dc.Schema.of(
        [
            dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True),
            dc.Field.of(pa.field("m", pa.int64())),
        ]
    )
    partner.create([{"id": i, "m": i * 7} for i in range(0, size * 2, 3)], partner_schema)
    builders = (_plain, _vectors, _inline, _purged, _evolved, _copy_on_write, _turned_off)
    for builder in (*FIRST_BUILDERS, *builders, _compacted, *EDGE_BUILDERS):
        states.update(builder(catalog, rng, size))
    if not small:
        states.update(_many_commits(catalog, rng))
    wanted = {name for name, traits in STATES.items() if traits.small or not small}
    assert set(states) == wanted, set(states) ^ wanted
    for name, state in states.items():
        assert state.address == STATES[name].address, name
    return states


def _plain(catalog: str, rng: np.random.Generator, size: int) -> dict[str, TableState]:
    """No merge keys: appends in write order, nulls, a one-row commit."""
    w = Writer(catalog, "plain", TableModel(["id", "n", "s"]))
    w.create(rows(rng, range(size // 4)))
    w.append(rows(rng, range(size // 4, size // 2)))
    w.append(rows(rng, [size]))
    return {"plain": w.state("plain")}


def _vectors(catalog: str, rng: np.random.Generator, size: int) -> dict[str, TableState]:
    """Keyed, merge-on-read: full merges, a partial upsert, then many keys deleted (vectors in
    files); its history gives the ``version=``, ``as_of`` and tag states, and a branch."""
    w = Writer(catalog, "vec", TableModel(["id", "n", "s"], key="id"))
    w.create(rows(rng, range(size)), KEYED)
    w.merge(rows(rng, range(size - size // 5, size + size // 5)))
    early = w.state("vec_as_of", as_of=last_transaction(catalog))
    w.merge(rows(rng, rng.choice(size, size // 6, replace=False), columns="n"))  # partial
    older = w.state("vec_version", version=w.version())
    w.merge(rows(rng, rng.choice(size, size // 6, replace=False)))
    dc.tag("before-delete", catalog=catalog)
    tagged = w.state("vec_tag", as_of="before-delete")
    live = [r["id"] for r in w.model.rows()]
    w.delete(rng.choice(live, size // 4, replace=False))
    states = {
        "vectors_file": w.state("vectors_file"),
        "vec_version": older,
        "vec_as_of": early,
        "vec_tag": tagged,
    }
    on_main = w.model.snapshot()
    dc.create_branch(BRANCH, catalog=catalog)
    w.branch, w.first = BRANCH, (on_main, "main")
    w.merge(rows(rng, range(size + size // 5, size + size // 5 + 50)))
    live = [r["id"] for r in w.model.rows()]
    w.delete(rng.choice(live, 30, replace=False))
    states["branch"] = w.state("branch")
    only = Writer(catalog, "branch_only", TableModel(["id", "n", "s"], key="id"))
    only.branch = BRANCH
    only.create(rows(rng, range(300)), KEYED)
    only.delete(range(0, 300, 7))
    states["branch_only"] = only.state("branch_only")
    return states


def _inline(catalog: str, rng: np.random.Generator, size: int) -> dict[str, TableState]:
    """A few scattered rows deleted and updated: vectors small enough to stay in the log."""
    w = Writer(catalog, "inline", TableModel(["id", "n", "s"], key="id"))
    w.create(rows(rng, range(size // 2)), KEYED)
    w.delete([3, 17, 101])
    w.merge(rows(rng, [5, 250]))
    return {"vectors_inline": w.state("vectors_inline")}


def _purged(catalog: str, rng: np.random.Generator, size: int) -> dict[str, TableState]:
    """Most of a file deleted (past the purge share, so it is rewritten), then merged into."""
    w = Writer(catalog, "purged", TableModel(["id", "n", "s"], key="id"))
    w.create(rows(rng, range(size // 2)), KEYED)
    w.delete(range(0, size // 2, 3))
    w.delete(range(1, size // 2, 3))
    w.merge(rows(rng, range(0, 40)))
    return {"purged": w.state("purged")}


def _evolved(catalog: str, rng: np.random.Generator, size: int) -> dict[str, TableState]:
    """A column added by a merge of new and old keys: null in the rows written before; and
    one added by a merge of new keys only, which leaves the old file without it."""
    w = Writer(catalog, "evolved", TableModel(["id", "n", "s"], key="id"))
    w.create(rows(rng, range(size // 4)), KEYED)
    w.merge(rows(rng, range(size // 8, size // 4 + 50), columns="x"))
    w.delete(range(0, size // 4, 11))
    g = Writer(catalog, "grown", TableModel(["id", "n", "s"], key="id"))
    g.create(rows(rng, range(size // 4)), KEYED)
    g.merge(rows(rng, range(size // 4, size // 4 + 60), columns="nsx"))
    g.delete(range(0, size // 4, 9))
    return {"evolved": w.state("evolved"), "grown": g.state("grown")}


def _copy_on_write(catalog: str, rng: np.random.Generator, size: int) -> dict[str, TableState]:
    """Vectors off from the start: MERGE and DELETE rewrite files."""
    w = Writer(catalog, "cow", TableModel(["id", "n", "s"], key="id"))
    w.create(rows(rng, range(size // 2)), KEYED, table_properties=VECTORS_OFF)
    w.merge(rows(rng, range(size // 4, size // 2 + 100)))
    w.delete(range(0, size // 2, 5))
    return {"vectors_off": w.state("vectors_off")}


def _turned_off(catalog: str, rng: np.random.Generator, size: int) -> dict[str, TableState]:
    """Vectors on, used, then turned off and optimized on another table: no file keeps a
    vector a reader trusting the property would ignore."""
    w = Writer(catalog, "turned_off", TableModel(["id", "n", "s"], key="id"))
    w.create(rows(rng, range(size // 2)), KEYED)
    w.merge(rows(rng, range(0, 60)))
    w.delete(range(100, 400, 2))
    dc.alter_table(
        "turned_off", namespace=NAMESPACE, catalog=catalog, table_version_properties=VECTORS_OFF
    )
    states = {"turned_off": w.state("turned_off")}
    o = Writer(catalog, "optimized", TableModel(["id", "n", "s"], key="id"))
    o.create(rows(rng, range(size // 2)), KEYED)
    o.merge(rows(rng, range(size // 4, size // 2 + 80)))
    o.delete(range(0, size // 2, 4))
    dc.optimize("optimized", NAMESPACE, catalog)
    states["optimized"] = o.state("optimized")
    return states


def _many_commits(catalog: str, rng: np.random.Generator) -> dict[str, TableState]:
    """A commit a minute: dozens of small merges and deletes, each leaving a file or a vector."""
    w = Writer(catalog, "busy", TableModel(["id", "n", "s"], key="id"))
    w.create(rows(rng, range(300)), KEYED)
    for step in range(40):
        w.merge(rows(rng, rng.choice(400, 6, replace=False)))
        if step % 4 == 3:
            live = [r["id"] for r in w.model.rows()]
            w.delete(rng.choice(live, 3, replace=False))
    return {"many_commits": w.state("many_commits")}


def _compacted(catalog: str, rng: np.random.Generator, size: int) -> dict[str, TableState]:
    """Automatic compaction after almost every commit (a step per two small files): merges
    and deletes folded in tiers, time travel to a version before the last steps, and appends
    folded in write order."""
    eager = {"workbench.autoCompact.minNumFiles": "2"}
    w = Writer(catalog, "compacted", TableModel(["id", "n", "s"], key="id"))
    w.create(rows(rng, range(size // 4)), KEYED, table_properties=eager)
    for step in range(12):
        w.merge(rows(rng, rng.choice(size // 2, 8, replace=False)))
        if step == 5:
            middle = w.state("compacted_version", version=w.version())
        if step % 3 == 2:
            live = [r["id"] for r in w.model.rows()]
            w.delete(rng.choice(live, 5, replace=False))
    a = Writer(catalog, "compacted_appends", TableModel(["id", "n", "s"]))
    a.create(rows(rng, range(10)), table_properties=eager)
    for step in range(1, 16):
        a.append(rows(rng, range(step * 10, step * 10 + 10)))
    return {
        "compacted": w.state("compacted"),
        "compacted_version": middle,
        "compacted_appends": a.state("compacted_appends"),
    }
