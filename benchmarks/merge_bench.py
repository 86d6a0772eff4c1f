"""Small MERGE and DELETE on big tables: workbench copy-on-write, workbench merge-on-read
(deletion vectors) and DuckLake, side by side in one run.

Run ``python -m benchmarks.merge_bench [--sizes 1000000 4000000] [--rounds 5]``. For each table
size, each system gets a keyed table of 3 columns written once, then ``rounds`` times a MERGE of
100 random keys (half present, half new) and a DELETE of 100 random present keys, in the same
order with the same keys; the median of each is reported with its ratio to DuckLake, and the
4M/1M growth. Then a read of the merge-on-read table after 30 merges beside the same table after
``dc.optimize()``, and the merge step of an incremental ``dc.infer`` (20 of 2,000 rows changed,
384-dim vectors merged back into the table) with vectors on and off. Other jobs may load the
machine: compare the ratios, not the seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.core_bench import DuckLake
from benchmarks.timing import forget_read_data, seconds

CHANGED = 100
SEED = 20261124
VECTORS = {"delta.enableDeletionVectors": "true"}
COW = {"delta.enableDeletionVectors": "false"}


def table_of(ids: Any) -> Any:
    """Rows of the benchmark table for the integer keys ``ids``."""
    import numpy as np
    import pyarrow as pa

    ids = np.asarray(ids, dtype=np.int64)
    return pa.table(
        {"id": ids, "value": ids * 0.5, "label": pa.array(ids % 1000).cast(pa.string())}
    )


class Workbench:
    """A workbench table, copy-on-write or merge-on-read."""

    def __init__(self, root: Path, vectors: bool) -> None:
        import pyarrow as pa

        import workbench as dc

        self.dc = dc
        dc.init_local(root)
        schema = dc.Schema.of(
            [
                dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True),
                dc.Field.of(pa.field("value", pa.float64())),
                dc.Field.of(pa.field("label", pa.string())),
            ]
        )
        dc.create_table("bench", schema=schema, table_properties=VECTORS if vectors else COW)

    def write(self, table: Any) -> None:
        self.dc.write(table, "bench", mode="merge")

    def merge(self, source: Any) -> None:
        self.dc.write(source, "bench", mode="merge")

    def delete(self, keys: Any) -> None:
        self.dc.write(keys, "bench", mode="delete")

    def read(self, version: int | None = None) -> Any:
        return self.dc.read("bench", read_as=self.dc.DatasetType.PYARROW, version=version)


def changes(size: int, rounds: int) -> list[tuple[Any, Any]]:
    """The same MERGE sources and DELETE keys for every system: ``rounds`` pairs."""
    import pyarrow as pa

    rng = random.Random(SEED + size)
    present = list(range(size))
    pairs, next_new = [], size
    for _ in range(rounds):
        updated = rng.sample(present, CHANGED // 2)
        new = list(range(next_new, next_new + CHANGED // 2))
        next_new += CHANGED // 2
        deleted = rng.sample(present, CHANGED)
        pairs.append((table_of(updated + new), pa.table({"id": pa.array(deleted, pa.int64())})))
    return pairs


def measure(system: Any, size: int, pairs: list[tuple[Any, Any]]) -> dict[str, float]:
    """Median MERGE and DELETE seconds of one system on a ``size``-row table."""
    system.write(table_of(range(size)))
    merges, deletes = [], []
    for source, keys in pairs:
        merges.append(seconds(lambda s=source: system.merge(s)))
        deletes.append(seconds(lambda k=keys: system.delete(k)))
    return {
        "merge": statistics.median(merges),
        "delete": statistics.median(deletes),
        "first_merge": merges[0],  # a fresh table's first change: no key index yet
    }


def read_after_merges(folder: Path, size: int, repeats: int = 9) -> dict[str, float]:
    """Reading a merge-on-read table after 30 merges, beside the same table optimized: the
    version before ``dc.optimize()`` and the one after, read in turns (so a load that comes
    and goes weighs on both alike), warm and with nothing kept from earlier reads."""
    system = Workbench(folder, vectors=True)
    system.write(table_of(range(size)))
    for source, _ in changes(size, 30):
        system.merge(source)
    merged = system.dc.get_table("bench").version
    system.dc.optimize("bench")
    times: dict[str, list[float]] = {}
    for kept in ("", "_cold"):  # warm first: a cold read empties what the warm ones keep
        for _ in range(repeats):
            for name, read in (
                ("read_after_30_merges", lambda: system.read(version=merged)),
                ("read_optimized", system.read),
            ):
                if kept:
                    forget_read_data()
                times.setdefault(name + kept, []).append(seconds(read))
    return {name: statistics.median(values) for name, values in times.items()}


def embed(batch: dict[str, Any]) -> dict[str, Any]:
    """A stand-in text model: a 384-dim vector per text (the merge step is what is timed)."""
    import numpy as np

    seeds = [abs(hash(t)) % 2**32 for t in batch["value"]]
    return {"embedding": [np.random.default_rng(s).random(384, np.float32) for s in seeds]}


def infer_merge_step(folder: Path, vectors: bool, rounds: int = 11) -> float:
    """Median seconds of the merge step of ``dc.infer`` after 20 of 2,000 texts changed."""
    import pyarrow as pa

    import workbench as dc
    from workbench.core.inference import infer as inference

    dc.init_local(folder)
    schema = dc.Schema.of(
        [dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True), pa.field("text", pa.string())]
    )
    texts = pa.table({"id": range(2000), "text": [f"text {i}" for i in range(2000)]})
    dc.write(texts, "docs", schema=schema, table_properties=VECTORS if vectors else COW)
    outputs = {"embedding": pa.list_(pa.float32(), 384)}
    model = dc.model(embed, outputs=outputs, name="embed", version="1")
    dc.infer("docs", model, inputs=["text"], engine="local", progress=False)
    times, merge = [], inference._merge

    def merge_step(*args: Any, **kwargs: Any) -> int:
        started = time.perf_counter()
        merged = merge(*args, **kwargs)
        times.append(time.perf_counter() - started)
        return merged

    inference._merge = merge_step
    try:
        for step in range(rounds):
            edited = texts.slice(step * 20, 20).set_column(
                1, "text", pa.array([f"edited {step} {i}" for i in range(20)])
            )
            dc.write(edited, "docs", mode="merge")
            dc.infer("docs", model, inputs=["text"], engine="local", progress=False)
    finally:
        inference._merge = merge
    return statistics.median(times)


def run(sizes: list[int], rounds: int) -> dict[str, Any]:
    """Every measurement of the benchmark, by size and system."""
    results: dict[str, Any] = {"load": os.getloadavg()[0]}
    for size in sizes:
        pairs = changes(size, rounds)
        row = {}
        with tempfile.TemporaryDirectory() as folder:
            for name, make in (
                ("ducklake", lambda p: DuckLake(p)),
                ("workbench_cow", lambda p: Workbench(p, vectors=False)),
                ("workbench_mor", lambda p: Workbench(p, vectors=True)),
            ):
                root = Path(folder, name)
                root.mkdir()
                row[name] = measure(make(root), size, pairs)
        results[str(size)] = row
    with tempfile.TemporaryDirectory() as folder:
        results["reads"] = read_after_merges(Path(folder), sizes[0])
    with tempfile.TemporaryDirectory() as folder:
        results["infer_merge"] = {
            "cow": infer_merge_step(Path(folder, "cow"), vectors=False),
            "mor": infer_merge_step(Path(folder, "mor"), vectors=True),
        }
    return results


def report(results: dict[str, Any], sizes: list[int]) -> str:
    """A table of medians and ratios."""
    lines = [f"load average at start: {results['load']:.2f}"]
    lines.append(f"{'size':>9} {'step':11} {'DuckLake':>9} {'cow':>9} {'mor':>9} {'mor/DL':>7}")
    for size in sizes:
        row = results[str(size)]
        for step in ("merge", "delete", "first_merge"):
            duck, cow, mor = (row[s][step] for s in ("ducklake", "workbench_cow", "workbench_mor"))
            lines.append(
                f"{size:>9} {step:11} {duck * 1e3:8.1f}ms {cow * 1e3:8.1f}ms {mor * 1e3:8.1f}ms "
                f"{mor / duck:6.2f}x"
            )
    if len(sizes) > 1:
        small, big = (results[str(s)]["workbench_mor"] for s in (sizes[0], sizes[-1]))
        for step in ("merge", "delete"):
            lines.append(f"mor {step} {sizes[-1]}/{sizes[0]}: {big[step] / small[step]:.2f}x")
    reads = results["reads"]
    for kept, label in (("", ""), ("_cold", ", nothing kept from earlier reads")):
        ratio = reads[f"read_after_30_merges{kept}"] / reads[f"read_optimized{kept}"]
        lines.append(f"read after 30 merges / optimized{label}: {ratio:.2f}x")
    step = results["infer_merge"]
    lines.append(
        f"dc.infer merge step, 20 of 2,000 rows changed: copy-on-write {step['cow'] * 1e3:.1f} ms,"
        f" merge-on-read {step['mor'] * 1e3:.1f} ms ({step['mor'] / step['cow']:.0%})"
    )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 4_000_000])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path, help="also write the results as JSON here")
    args = parser.parse_args()
    results = run(args.sizes, args.rounds)
    print(report(results, args.sizes))
    if args.out:
        args.out.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
