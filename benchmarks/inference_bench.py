"""``dc.infer`` against hand-written Daft and Ray pipelines running the same built-in models.

Per round and case (text-embedding on review texts, image-facts on a media table of generated
images, image-safety with ``--image-safety``) both systems start from identical copies of a
fresh table: workbench runs ``dc.infer(force=True)``; the baseline runs the same model object in
a Daft class UDF over ``daft.read_deltalake`` (or a Ray ``map_batches`` actor over
``ray.data.from_arrow``) and MERGEs its outputs with ``deltalake``. The order alternates every
round; ratios are medians of per-round workbench / baseline. After the Daft pair of the text
case, 1% of the texts change and a plain ``dc.infer`` is timed against the full run. Ray starts
once up front (timed apart) through workbench's own starter, so both share the instance.

Run with ``python -m benchmarks.inference_bench [--texts N] [--images N] [--rounds R]
[--no-ray] [--image-safety]``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import resource
import shutil
import statistics
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks.timing import seconds

if TYPE_CHECKING:
    import pyarrow as pa

    from workbench.core.inference.model import Model

DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "inference.json"
RATIO_TARGET = 1.15
INCREMENTAL_TARGET = 0.05
CHANGED_FRACTION = 0.01
BATCH_SIZE = 256  # workbench's DEFAULT_BATCH_SIZE, given to the baselines too
WARMUP_ROWS = 32
RAY_CPUS = 2
RAY_OBJECT_STORE = 200 * 2**20

_SUBJECTS = (
    "The battery",
    "This blender",
    "The hotel room",
    "Our waiter",
    "The app",
    "The jacket",
    "This novel",
    "The delivery",
    "The headphones",
    "The camera",
    "Customer support",
    "The mattress",
    "The coffee",
    "The update",
    "This keyboard",
    "The flight",
)
_VERDICTS = (
    "was excellent",
    "felt flimsy",
    "exceeded my expectations",
    "broke after a week",
    "is worth every penny",
    "was a total letdown",
    "works as advertised",
    "arrived late and damaged",
    "is surprisingly quiet",
    "smelled strange",
    "made my mornings easier",
    "could be cheaper",
)
_DETAILS = (
    "and I would buy it again",
    "but the manual is confusing",
    "so I returned it",
    "although setup took an hour",
    "and the colour matches the photos",
    "yet the price keeps rising",
    "which my kids love",
    "even in cold weather",
    "after the second firmware update",
    "compared with the previous model",
)
_ENDINGS = ("", " Five stars.", " Two stars.", " Would not recommend.", " Highly recommended!",
            " Meh.", " Ask me again in a year.")  # fmt: skip


def review_texts(count: int, seed: int = 13) -> list[str]:
    """``count`` varied review sentences, the same for the same seed."""
    rng = random.Random(seed)
    texts = []
    for i in range(count):
        clauses = [rng.choice(_SUBJECTS), rng.choice(_VERDICTS), rng.choice(_DETAILS)]
        extra = f", {rng.choice(_DETAILS)}" if rng.random() < 0.4 else ""
        texts.append(f"{' '.join(clauses)}{extra}.{rng.choice(_ENDINGS)} (review {i})")
    return texts


def write_images(folder: Path, count: int, seed: int = 13) -> Path:
    """``count`` distinct small images (gradients, rectangles and noise; PNG and JPEG
    alternating) in ``folder``, the same for the same seed."""
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        height, width = (int(v) for v in rng.integers(64, 160, size=2))
        base = rng.integers(0, 256, size=3)
        ramp = np.linspace(0, 1, width)[None, :, None] * rng.integers(-120, 120, size=3)
        pixels = np.broadcast_to(base + ramp, (height, width, 3)).copy()
        for _ in range(3):
            top, left = rng.integers(0, height // 2), rng.integers(0, width // 2)
            pixels[top : top + height // 3, left : left + width // 3] = rng.integers(0, 256, 3)
        pixels += rng.normal(0, 8, size=pixels.shape)
        image = Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8))
        image.save(folder / f"img_{i:04d}.{'png' if i % 2 else 'jpg'}")
    return folder


@dataclass(frozen=True)
class Case:
    """One model over one kind of table: how to make a fresh workbench table of ``rows`` rows,
    and which key and column the baseline reads (``fetch``: the column holds URIs to read)."""

    model: str
    key: str
    column: str
    fetch: bool
    make: Callable[[str, int], None]


def text_case(texts: list[str]) -> Case:
    """text-embedding on a keyed table of reviews."""

    def make(name: str, rows: int) -> None:
        import pyarrow as pa

        import workbench as dc

        schema = dc.Schema.of(
            [
                dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True),
                dc.Field.of(pa.field("text", pa.string())),
            ]
        )
        data = pa.table({"id": range(rows), "text": texts[:rows]}, schema=schema.arrow)
        dc.write(data, name, mode="create", schema=schema)

    return Case("text-embedding", "id", "text", False, make)


def image_case(model: str, folders: dict[int, Path]) -> Case:
    """An image model on a media table imported from the generated folder with that many
    images."""

    def make(name: str, rows: int) -> None:
        import workbench as dc

        dc.import_media(folders[rows], name)

    return Case(model, "key", "uri", True, make)


class WorkerRss:
    """Peak RSS (MB) of Ray worker processes (``ray::...``) sampled while the block runs."""

    def __init__(self, interval: float = 0.1):
        self.interval, self.peak_mb = interval, 0.0
        self._stop = threading.Event()

    def _sample(self) -> None:
        import psutil

        while not self._stop.wait(self.interval):
            for process in psutil.process_iter(["name", "memory_info"]):
                name, memory = process.info["name"] or "", process.info["memory_info"]
                if name.startswith("ray::") and memory is not None:
                    self.peak_mb = max(self.peak_mb, memory.rss / 2**20)

    @contextlib.contextmanager
    def watching(self) -> Iterator[WorkerRss]:
        """Sample in a thread for the duration of the block."""
        thread = threading.Thread(target=self._sample, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            thread.join()


def _key_and_outputs(model: Model, keys: pa.Array, values: list[Any]) -> pa.StructArray:
    """The model's outputs for a batch as a struct of the key and output columns."""
    import pyarrow as pa

    (name,) = model.inputs
    outputs = model.predict({name: values})
    schema = model.output_schema()
    arrays = [keys, *[pa.array(outputs[f.name], f.type) for f in schema]]
    return pa.StructArray.from_arrays(arrays, names=["k", *schema.names])


def _read_uris(uris: list[str]) -> list[bytes]:
    """The bytes of local file URIs (the Ray baseline's download)."""
    from urllib.parse import unquote, urlparse

    return [Path(unquote(urlparse(u).path)).read_bytes() for u in uris]


def merge_outputs(path: str, outputs: pa.Table, key: str) -> None:
    """MERGE the outputs into the Delta table at ``path`` by ``key``, adding their columns."""
    from deltalake import DeltaTable

    columns = [c for c in outputs.column_names if c != key]
    (
        DeltaTable(path)
        .merge(
            outputs,
            predicate=f"t.{key} = s.{key}",
            source_alias="s",
            target_alias="t",
            merge_schema=True,
        )
        .when_matched_update(updates={c: f"s.{c}" for c in columns})
        .execute()
    )


def _named(outputs: pa.Table, key: str) -> pa.Table:
    """Outputs with the struct's key field named back to ``key``."""
    return outputs.rename_columns([key if n == "k" else n for n in outputs.column_names])


def daft_baseline(path: str, model: Model, case: Case) -> None:
    """The model in a Daft class UDF over ``daft.read_deltalake``, merged with deltalake."""
    import daft
    import pyarrow as pa
    from daft import col
    from daft.functions import download

    key_type = pa.string() if case.fetch else pa.int64()
    struct = pa.struct([pa.field("k", key_type), *model.output_schema()])

    @daft.cls(use_process=False)
    class Predict:
        def __init__(self, model: Model):
            model.load()
            self.model = model

        @daft.method.batch(
            return_dtype=daft.DataType.from_arrow_type(struct), unnest=True, batch_size=BATCH_SIZE
        )
        def __call__(self, keys: daft.Series, values: daft.Series) -> pa.StructArray:
            return _key_and_outputs(self.model, keys.to_arrow(), values.to_pylist())

    frame = daft.read_deltalake(path)
    values = download(col(case.column)) if case.fetch else col(case.column)
    outputs = frame.select(Predict(model)(col(case.key), values)).to_arrow()
    merge_outputs(path, _named(outputs, case.key), case.key)


class RayPredict:
    """The Ray baseline's actor: the model loaded once, batches of (key, input) to outputs."""

    def __init__(self, model: Model, case: Case):
        model.load()
        self.model, self.case = model, case

    def __call__(self, batch: pa.Table) -> pa.Table:
        import pyarrow as pa

        values = batch.column(self.case.column).to_pylist()
        if self.case.fetch:
            values = _read_uris(values)
        keys = batch.column(self.case.key).combine_chunks()
        struct = _key_and_outputs(self.model, keys, values)
        return pa.Table.from_struct_array(struct)


def ray_baseline(path: str, model: Model, case: Case) -> None:
    """The model in a ``map_batches`` actor over ``ray.data.from_arrow``, merged with
    deltalake."""
    import pyarrow as pa
    import ray.data
    from deltalake import DeltaTable

    data = DeltaTable(path).to_pyarrow_table(columns=[case.key, case.column])
    predicted = ray.data.from_arrow(data).map_batches(
        RayPredict,
        fn_constructor_kwargs={"model": model, "case": case},
        batch_format="pyarrow",
        batch_size=BATCH_SIZE,
        concurrency=1,
    )
    outputs = pa.concat_tables(predicted.iter_batches(batch_format="pyarrow", batch_size=None))
    merge_outputs(path, _named(outputs, case.key), case.key)


def _fresh_pair(case: Case, name: str, rows: int, folder: Path) -> str:
    """Make the workbench table ``name`` and a copy of its Delta folder for the baseline."""
    import workbench as dc

    case.make(name, rows)
    copy = folder / f"baseline_{name}"
    shutil.copytree(dc.delta_table(name).table_uri.removeprefix("file://"), copy)
    return str(copy)


def _pair(
    case: Case, model: Model, engine: str, name: str, rows: int, folder: Path, swap: bool
) -> dict[str, float]:
    """Seconds of ``dc.infer`` and of the baseline on identical fresh tables, in swapped order
    when ``swap``; on Ray also the workers' peak RSS of each."""
    import workbench as dc

    baseline = {"daft": daft_baseline, "ray": ray_baseline}[engine]
    path = _fresh_pair(case, name, rows, folder)
    systems: dict[str, Callable[[], Any]] = {
        "workbench": lambda: dc.infer(name, model, engine=engine, progress=False, force=True),
        "baseline": lambda: baseline(path, model, case),
    }
    order = list(systems)[::-1] if swap else list(systems)
    measured: dict[str, float] = {}
    for system in order:
        if engine == "ray":
            with WorkerRss().watching() as rss:
                measured[system] = seconds(systems[system])
            measured[f"{system}_worker_rss_mb"] = rss.peak_mb
        else:
            measured[system] = seconds(systems[system])
    return measured


def _incremental(case: Case, model: Model, name: str, rows: int) -> float:
    """Seconds of a plain ``dc.infer`` on Daft after 1% of the (already predicted) rows of
    table ``name`` changed."""
    import pyarrow as pa
    import pyarrow.compute as pc

    import workbench as dc

    changed = max(1, int(rows * CHANGED_FRACTION))
    current = dc.read(name, read_as="pyarrow").sort_by(case.key).slice(0, changed)
    edited = pc.binary_join_element_wise(current.column(case.column), " (edited)", "")
    index = current.column_names.index(case.column)
    dc.write(current.set_column(index, pa.field(case.column, pa.string()), edited), name)
    return seconds(lambda: dc.infer(name, model, engine="daft", progress=False))


def _summary(samples: list[dict[str, float]], rows: int) -> dict[str, float]:
    """Medians of a pair's seconds, of the per-round ratios, and rows/s of the median times."""
    wb = [s["workbench"] for s in samples]
    base = [s["baseline"] for s in samples]
    summary = {
        "workbench_s": statistics.median(wb),
        "baseline_s": statistics.median(base),
        "ratio": statistics.median(a / b for a, b in zip(wb, base, strict=True)),
    }
    summary["workbench_rows_per_s"] = rows / summary["workbench_s"]
    summary["baseline_rows_per_s"] = rows / summary["baseline_s"]
    for system in ("workbench", "baseline"):
        peaks = [s[f"{system}_worker_rss_mb"] for s in samples if f"{system}_worker_rss_mb" in s]
        if peaks:
            summary[f"{system}_worker_rss_mb"] = max(peaks)
    return summary


def _start_ray() -> float:
    """Seconds to start the shared local Ray through workbench's starter. Daft's runner is
    fixed to the native one first: Daft otherwise runs on any Ray it finds initialised."""
    import daft

    daft.set_runner_native()
    os.environ.setdefault("WORKBENCH_RAY_NUM_CPUS", str(RAY_CPUS))
    os.environ.setdefault("WORKBENCH_RAY_OBJECT_STORE_MEMORY", str(RAY_OBJECT_STORE))
    from workbench.engines.ray.runtime import ensure_ray

    return seconds(ensure_ray)


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run(texts: int, images: int, rounds: int, use_ray: bool, image_safety: bool) -> dict[str, Any]:
    """Every measurement, with the load average at start and end."""
    import workbench as dc
    from workbench.builtin_models.registry import builtin

    load_start = os.getloadavg()
    folder = Path(tempfile.mkdtemp())
    result: dict[str, Any] = {"texts": texts, "images": images, "rounds": rounds}
    try:
        dc.init_local(folder / "catalog")
        sizes = {"text-embedding": texts, "image-facts": images, "image-safety": images}
        image_folders = {
            n: write_images(folder / f"images_{n}", n) for n in sorted({images, WARMUP_ROWS})
        }
        cases = [
            text_case(review_texts(max(texts, WARMUP_ROWS))),
            image_case("image-facts", image_folders),
        ]
        if image_safety:
            cases.append(image_case("image-safety", image_folders))
        models = {c.model: builtin(c.model) for c in cases}
        engines = ["daft", *(["ray"] if use_ray else [])]
        if use_ray:
            result["ray_start_s"] = _start_ray()
        rss = {"after_setup": _peak_rss_mb()}
        counter = iter(range(10**6))
        for case in cases:  # warm-up: imports, first model loads, engine start-up
            for engine in engines:
                _pair(
                    case,
                    models[case.model],
                    engine,
                    f"w{next(counter)}",
                    WARMUP_ROWS,
                    folder,
                    False,
                )
        samples: dict[tuple[str, str], list[dict[str, float]]] = {}
        incremental: list[tuple[float, float]] = []
        for i in range(rounds):
            for case in cases:
                for engine in engines:
                    name = f"t{next(counter)}"
                    rows = sizes[case.model]
                    pair = _pair(case, models[case.model], engine, name, rows, folder, i % 2 == 1)
                    samples.setdefault((case.model, engine), []).append(pair)
                    if engine == "daft" and case.model == "text-embedding":
                        step = _incremental(case, models[case.model], name, rows)
                        incremental.append((step, pair["workbench"]))
            print(f"round {i + 1}/{rounds} done", file=sys.stderr)
        rss["after_rounds"] = _peak_rss_mb()
        local = {}
        for case in cases:
            name = f"l{next(counter)}"
            case.make(name, sizes[case.model])
            local[case.model] = sizes[case.model] / seconds(
                lambda name=name, case=case: dc.infer(
                    name, models[case.model], engine="local", progress=False, force=True
                )
            )
        rss["after_local"] = _peak_rss_mb()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    result["pairs"] = {
        f"{model} on {engine}": _summary(s, sizes[model]) for (model, engine), s in samples.items()
    }
    result["local_rows_per_s"] = local
    result["incremental"] = {
        "changed_rows": max(1, int(texts * CHANGED_FRACTION)),
        "seconds": statistics.median(s for s, _ in incremental),
        "full_seconds": statistics.median(f for _, f in incremental),
        "fraction": statistics.median(s / f for s, f in incremental),
    }
    result["driver_peak_rss_mb"] = rss
    result["load_average"] = {"start": load_start, "end": os.getloadavg()}
    result["cpu_count"] = os.cpu_count()
    return result


def _status(value: float, target: float) -> str:
    return "PASS" if value <= target else "MISS"


def markdown(result: dict[str, Any]) -> str:
    """The result as Markdown: pairs, incremental rerun, throughput and memory."""
    start, end = result["load_average"]["start"], result["load_average"]["end"]
    lines = [
        f"{result['texts']} texts, {result['images']} images, {result['rounds']} rounds, "
        f"{result['cpu_count']} cores; load average (1/5/15 min) at start "
        f"{'/'.join(f'{v:.2f}' for v in start)}, at end {'/'.join(f'{v:.2f}' for v in end)}",
        "",
        "| model on engine | workbench (s) | baseline (s) | wb/baseline (median of pairs) | "
        "status | wb rows/s | baseline rows/s | Ray worker peak RSS wb / baseline (MB) |",
        "| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: |",
    ]
    for name, row in result["pairs"].items():
        workers = (
            f"{row['workbench_worker_rss_mb']:.0f} / {row['baseline_worker_rss_mb']:.0f}"
            if "workbench_worker_rss_mb" in row
            else ""
        )
        lines.append(
            f"| {name} | {row['workbench_s']:.2f} | {row['baseline_s']:.2f} | "
            f"{row['ratio']:.2f}x | {_status(row['ratio'], RATIO_TARGET)} | "
            f"{row['workbench_rows_per_s']:.0f} | {row['baseline_rows_per_s']:.0f} | {workers} |"
        )
    inc = result["incremental"]
    lines += [
        "",
        "| measure | value | target |",
        "| --- | ---: | --- |",
        f"| incremental rerun, {inc['changed_rows']} texts changed (s) | {inc['seconds']:.2f} | |",
        f"| full text-embedding run on Daft (s) | {inc['full_seconds']:.2f} | |",
        f"| incremental / full (median of pairs) | {inc['fraction']:.1%} | "
        f"<= {INCREMENTAL_TARGET:.0%} {_status(inc['fraction'], INCREMENTAL_TARGET)} |",
    ]
    if "ray_start_s" in result:
        lines.append(f"| Ray start (s) | {result['ray_start_s']:.2f} | |")
    for model, rate in result["local_rows_per_s"].items():
        lines.append(f"| {model} on local engine (rows/s) | {rate:.0f} | |")
    for phase, mb in result["driver_peak_rss_mb"].items():
        lines.append(f"| driver peak RSS {phase.replace('_', ' ')} (MB) | {mb:.0f} | |")
    return "\n".join(lines)


def main() -> int:
    """Parse arguments, run, write JSON and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=2_000)
    parser.add_argument("--images", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-ray", action="store_true", help="skip the Ray pairs")
    parser.add_argument("--image-safety", action="store_true", help="also run image-safety")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    result = run(args.texts, args.images, args.rounds, not args.no_ray, args.image_safety)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    print(markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
