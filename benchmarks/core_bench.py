"""Compare workbench, raw deltalake and DuckLake on core lakehouse operations.

Run ``python -m benchmarks.core_bench [--rows N] [--out PATH]`` from the repository root.

Method: the parent generates the data once (fixed seed) and saves it as Arrow IPC files. Each
repetition is a round that starts one fresh child process per system, in rotated order so that
machine-load drift hits all systems alike. A child loads the data into memory, runs the whole step
sequence once on tiny data to warm up lazy imports and code paths (untimed, own temp dir), then
runs it on the real data in a fresh temp dir, timing each step with ``time.perf_counter`` (read
steps are repeated 3 times in a row and their median kept, as a process's first large read pays for
growing its memory pools), and reports the timings, result checks and its peak RSS as JSON on its
last stdout line. The parent reports per-step medians over the rounds. Import time and fresh-
process first write are separate subprocess runs (median of 5, also interleaved). Cold-start costs
therefore show up in those two rows only, not in the step rows.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from benchmarks.timing import progress

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

SYSTEMS = ("workbench", "deltalake", "ducklake")
STEPS = (
    "write",
    "read_arrow",
    "read_pandas",
    "merge",
    "delete",
    "read_first_version",
    "append_20x1k",
    "read_appended",
)
APPENDS = 20
APPEND_ROWS = 1_000
WARMUP_ROWS = 1_000
SEED = 20240601
PROCESS_RUNS = 5
READS = 3
STEP_RATIO_TARGET = 1.2
IMPORT_TARGET_S = 0.300
FIRST_WRITE_TARGET_S = 0.600
KEY = "id"
REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO_ROOT / "benchmarks" / "results" / "core.json"
DATA_FILES = ("base", "merge", "delete", "log")
RATIO_BASES = {"wb/deltalake": "deltalake", "wb/ducklake": "ducklake"}
TARGETS = {
    "import": f"< {IMPORT_TARGET_S:.3f} s",
    "first_write": f"< {FIRST_WRITE_TARGET_S:.3f} s",
    **{step: f"<= {STEP_RATIO_TARGET}x deltalake" for step in STEPS},
}
T = TypeVar("T")

IMPORT_SNIPPET = (
    "import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
)
IMPORT_MODULES = {"workbench": "workbench", "deltalake": "deltalake", "ducklake": "duckdb"}
FIRST_WRITE_SNIPPETS = {
    "workbench": (
        "import workbench as dc, pyarrow as pa\n"
        "dc.init_local(root)\n"
        "dc.write(pa.table({'id': [1, 2, 3], 'name': ['a', 'b', 'c']}), 't')\n"
    ),
    "deltalake": (
        "import deltalake, pyarrow as pa\n"
        "src = pa.table({'id': [1, 2, 3], 'name': ['a', 'b', 'c']})\n"
        "deltalake.write_deltalake(root + '/t', src)\n"
    ),
    "ducklake": (
        "import duckdb, duckdb_extension_ducklake, glob, os, pyarrow as pa\n"
        "pkg = os.path.dirname(duckdb_extension_ducklake.__file__)\n"
        "ext = glob.glob(pkg + '/extensions/**/*.duckdb_extension', recursive=True)[0]\n"
        "con = duckdb.connect()\n"
        "con.execute(f\"LOAD '{ext}'\")\n"
        "con.execute(f\"ATTACH 'ducklake:{root}/meta.ducklake' AS lake \"\n"
        "            f\"(DATA_PATH '{root}/data/')\")\n"
        "src = pa.table({'id': [1, 2, 3], 'name': ['a', 'b', 'c']})\n"
        "con.execute('CREATE TABLE lake.t AS SELECT * FROM src')\n"
    ),
}


# ---------------------------------------------------------------- data


@dataclass(frozen=True)
class Data:
    """The generated tables: initial rows, upsert source, delete keys and append batches."""

    base: pa.Table
    merge: pa.Table
    delete: pa.Table
    log: pa.Table

    def log_batches(self) -> list[pa.Table]:
        """Split the log table into the creating batch followed by the appended batches."""
        return [self.log.slice(i * APPEND_ROWS, APPEND_ROWS) for i in range(APPENDS + 1)]


def _random_rows(rng: Any, ids: Any) -> pa.Table:
    """Build a table with the benchmark schema for the given int64 ids."""
    import pyarrow as pa
    import pyarrow.compute as pc

    n = len(ids)
    suffix = pa.array(rng.integers(0, 10_000_000, n)).cast(pa.string())
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "name": pc.binary_join_element_wise("name_", suffix, ""),
            "value": pa.array(rng.random(n), pa.float64()),
            "ts": pa.array(1_700_000_000_000 + rng.integers(0, 10**9, n), pa.int64()),
        }
    )


def generate_data(rows: int, seed: int = SEED) -> Data:
    """Generate shuffled base rows, a half-update/half-insert merge source and delete keys."""
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    n_merge, n_delete = rows // 10, rows // 100
    existing = rng.choice(rows, n_merge // 2, replace=False)
    new = np.arange(rows, rows + n_merge - n_merge // 2)
    return Data(
        base=_random_rows(rng, rng.permutation(rows)),
        merge=_random_rows(rng, rng.permutation(np.concatenate([existing, new]))),
        delete=pa.table({KEY: pa.array(rng.choice(rows, n_delete, replace=False), pa.int64())}),
        log=_random_rows(rng, np.arange((APPENDS + 1) * APPEND_ROWS)),
    )


def save_data(data: Data, folder: Path) -> None:
    """Write each table of ``data`` as an uncompressed Arrow IPC file in ``folder``."""
    import pyarrow as pa

    for name in DATA_FILES:
        table = getattr(data, name)
        path = str(folder / f"{name}.arrow")
        with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)


def load_data(folder: Path) -> Data:
    """Read the tables written by :func:`save_data` fully into memory."""
    import pyarrow as pa

    tables = {}
    for name in DATA_FILES:
        with pa.OSFile(str(folder / f"{name}.arrow")) as source:
            tables[name] = pa.ipc.open_file(source).read_all()
    return Data(**tables)


def expected_checks(data: Data) -> dict[str, float]:
    """Compute the row counts and final value sum a correct system must report."""
    import pyarrow as pa
    import pyarrow.compute as pc

    rows = data.base.num_rows
    kept = data.base.filter(pc.invert(pc.is_in(data.base[KEY], data.merge[KEY])))
    upserted = pa.concat_tables([kept, data.merge])
    final = upserted.filter(pc.invert(pc.is_in(upserted[KEY], data.delete[KEY])))
    return {
        "read_arrow_rows": rows,
        "read_pandas_rows": rows,
        "first_version_rows": rows,
        "appended_rows": data.log.num_rows,
        "final_rows": final.num_rows,
        "final_value_sum": pc.sum(final["value"]).as_py(),
    }


# ---------------------------------------------------------------- systems


class Lake(Protocol):
    """The operations every benchmarked system implements on its own catalog folder."""

    def write(self, table: pa.Table) -> None: ...
    def read_arrow(self) -> pa.Table: ...
    def read_pandas(self) -> pd.DataFrame: ...
    def merge(self, source: pa.Table) -> None: ...
    def delete(self, keys: pa.Table) -> None: ...
    def read_first_version(self) -> pa.Table: ...
    def create_log(self, table: pa.Table) -> None: ...
    def append_log(self, table: pa.Table) -> None: ...
    def read_log(self) -> pa.Table: ...


class WorkbenchLake:
    """The project's DeltaCAT-style API on a catalog at ``root`` (a folder, or a URI with
    storage ``options``)."""

    def __init__(self, root: Path | str, options: dict[str, str] | None = None) -> None:
        import workbench as dc

        self.dc = dc
        dc.init({"default": dc.Catalog(dc.CatalogProperties(str(root), options or {}))})

    def write(self, table: pa.Table) -> None:
        dc = self.dc
        fields = [dc.Field.of(f, is_merge_key=f.name == KEY) for f in table.schema]
        dc.write(table, "bench", schema=dc.Schema.of(fields), mode=dc.TableWriteMode.CREATE)

    def read_arrow(self) -> pa.Table:
        return self.dc.read("bench", read_as=self.dc.DatasetType.PYARROW)

    def read_pandas(self) -> pd.DataFrame:
        return self.dc.read("bench", read_as=self.dc.DatasetType.PANDAS)

    def merge(self, source: pa.Table) -> None:
        self.dc.write(source, "bench", mode=self.dc.TableWriteMode.MERGE)

    def delete(self, keys: pa.Table) -> None:
        self.dc.write(keys, "bench", mode=self.dc.TableWriteMode.DELETE)

    def read_first_version(self) -> pa.Table:
        return self.dc.read("bench", read_as=self.dc.DatasetType.PYARROW, version=0)

    def create_log(self, table: pa.Table) -> None:
        self.dc.write(table, "log")

    def append_log(self, table: pa.Table) -> None:
        self.dc.write(table, "log", mode=self.dc.TableWriteMode.APPEND)

    def read_log(self) -> pa.Table:
        return self.dc.read("log", read_as=self.dc.DatasetType.PYARROW)


class DeltaLake:
    """Raw deltalake; deletes by key use a merge with ``when_matched_delete`` (fastest here)."""

    def __init__(self, root: Path | str, options: dict[str, str] | None = None) -> None:
        import deltalake

        self.dl = deltalake
        self.options = options
        self.bench = f"{root}/bench"
        self.log = f"{root}/log"

    def _table(self, uri: str, version: int | None = None) -> Any:
        return self.dl.DeltaTable(uri, version=version, storage_options=self.options)

    def write(self, table: pa.Table) -> None:
        self.dl.write_deltalake(self.bench, table, storage_options=self.options)

    def read_arrow(self) -> pa.Table:
        return self._table(self.bench).to_pyarrow_table()

    def read_pandas(self) -> pd.DataFrame:
        return self._table(self.bench).to_pandas()

    def _merge(self, source: pa.Table) -> Any:
        target = self._table(self.bench)
        predicate = f"t.{KEY} = s.{KEY}"
        return target.merge(source, predicate, source_alias="s", target_alias="t")

    def merge(self, source: pa.Table) -> None:
        self._merge(source).when_matched_update_all().when_not_matched_insert_all().execute()

    def delete(self, keys: pa.Table) -> None:
        self._merge(keys).when_matched_delete().execute()

    def read_first_version(self) -> pa.Table:
        return self._table(self.bench, version=0).to_pyarrow_table()

    def create_log(self, table: pa.Table) -> None:
        self.dl.write_deltalake(self.log, table, storage_options=self.options)

    def append_log(self, table: pa.Table) -> None:
        self.dl.write_deltalake(self.log, table, mode="append", storage_options=self.options)

    def read_log(self) -> pa.Table:
        return self._table(self.log).to_pyarrow_table()


def ducklake_extension_path() -> str:
    """Locate the DuckLake extension binary shipped in the duckdb-extension-ducklake wheel."""
    import glob

    import duckdb_extension_ducklake

    package = os.path.dirname(duckdb_extension_ducklake.__file__)
    return glob.glob(f"{package}/extensions/**/*.duckdb_extension", recursive=True)[0]


class DuckLake:
    """DuckDB with the DuckLake extension (default settings) on a local catalog."""

    def __init__(self, root: Path) -> None:
        import duckdb

        self.con = duckdb.connect()
        self.con.execute(f"LOAD '{ducklake_extension_path()}'")
        self.con.execute(
            f"ATTACH 'ducklake:{root}/meta.ducklake' AS lake (DATA_PATH '{root}/data/')"
        )
        self.first_snapshot = -1

    def _run_with(self, table: pa.Table, sql: str) -> None:
        """Run ``sql`` with ``table`` registered as the view ``src``."""
        self.con.register("src", table)
        self.con.execute(sql)
        self.con.unregister("src")

    def _arrow(self, sql: str) -> pa.Table:
        return self.con.execute(sql).to_arrow_table()

    def write(self, table: pa.Table) -> None:
        self._run_with(table, "CREATE TABLE lake.bench AS SELECT * FROM src")
        self.first_snapshot = self.con.execute("FROM lake.current_snapshot()").fetchone()[0]

    def read_arrow(self) -> pa.Table:
        return self._arrow("SELECT * FROM lake.bench")

    def read_pandas(self) -> pd.DataFrame:
        return self.con.execute("SELECT * FROM lake.bench").df()

    def merge(self, source: pa.Table) -> None:
        self._run_with(
            source,
            f"MERGE INTO lake.bench AS t USING src AS s ON t.{KEY} = s.{KEY} "
            "WHEN MATCHED THEN UPDATE WHEN NOT MATCHED THEN INSERT",
        )

    def delete(self, keys: pa.Table) -> None:
        self._run_with(keys, f"DELETE FROM lake.bench WHERE {KEY} IN (SELECT {KEY} FROM src)")

    def read_first_version(self) -> pa.Table:
        return self._arrow(f"SELECT * FROM lake.bench AT (VERSION => {self.first_snapshot})")

    def create_log(self, table: pa.Table) -> None:
        self._run_with(table, "CREATE TABLE lake.log AS SELECT * FROM src")

    def append_log(self, table: pa.Table) -> None:
        self._run_with(table, "INSERT INTO lake.log SELECT * FROM src")

    def read_log(self) -> pa.Table:
        return self._arrow("SELECT * FROM lake.log")


LAKES: dict[str, Callable[[Path], Lake]] = {
    "workbench": WorkbenchLake,
    "deltalake": DeltaLake,
    "ducklake": DuckLake,
}


# ---------------------------------------------------------------- child process


class Stopwatch:
    """Time named calls and keep the (median) elapsed seconds per name."""

    def __init__(self) -> None:
        self.times: dict[str, float] = {}

    def run(self, name: str, fn: Callable[..., T], *args: Any, repeats: int = 1) -> T:
        """Call ``fn(*args)`` ``repeats`` times, record the median wall time, return a result."""
        elapsed = []
        for _ in range(repeats):
            start = time.perf_counter()
            result = fn(*args)
            elapsed.append(time.perf_counter() - start)
        self.times[name] = statistics.median(elapsed)
        return result


def run_sequence(lake: Lake, data: Data) -> tuple[dict[str, float], dict[str, float]]:
    """Run the steps in order (reads 3 times each); return step timings and result checks."""
    import pyarrow.compute as pc

    watch = Stopwatch()
    batches = data.log_batches()
    watch.run("write", lake.write, data.base)
    checks: dict[str, float] = {}
    checks["read_arrow_rows"] = watch.run("read_arrow", lake.read_arrow, repeats=READS).num_rows
    checks["read_pandas_rows"] = len(watch.run("read_pandas", lake.read_pandas, repeats=READS))
    watch.run("merge", lake.merge, data.merge)
    watch.run("delete", lake.delete, data.delete)
    first = watch.run("read_first_version", lake.read_first_version, repeats=READS)
    checks["first_version_rows"] = first.num_rows
    lake.create_log(batches[0])
    watch.run("append_20x1k", lambda: [lake.append_log(batch) for batch in batches[1:]])
    checks["appended_rows"] = watch.run("read_appended", lake.read_log, repeats=READS).num_rows
    final = lake.read_arrow()
    checks["final_rows"] = final.num_rows
    checks["final_value_sum"] = pc.sum(final["value"]).as_py()
    return watch.times, checks


def child_main(system: str, data_dir: Path) -> None:
    """Warm up, run the timed sequence in a fresh temp dir, print JSON results on stdout."""
    import resource

    import pandas  # noqa: F401  (imported up front so no step pays for it)

    data = load_data(data_dir)
    with tempfile.TemporaryDirectory(prefix=f"bench-{system}-") as tmp:
        warm_root, root = Path(tmp, "warmup"), Path(tmp, "timed")
        warm_root.mkdir()
        root.mkdir()
        run_sequence(LAKES[system](warm_root), generate_data(WARMUP_ROWS, seed=SEED + 1))
        times, checks = run_sequence(LAKES[system](root), data)
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"times": times, "checks": checks, "peak_rss_mib": peak_mib}))


# ---------------------------------------------------------------- parent process


@dataclass(frozen=True)
class Task:
    """One subprocess run: a full step sequence, an import timing or a fresh first write."""

    kind: str
    system: str
    rep: int

    def __str__(self) -> str:
        return f"{self.kind} {self.system} #{self.rep + 1}"


Checks = list[tuple[Task, dict[str, float]]]
Samples = dict[str, dict[str, list[float]]]


def _rotated(systems: Sequence[str], shift: int) -> list[str]:
    """Return ``systems`` rotated left by ``shift`` so each run starts with another system."""
    shift %= len(systems)
    return [*systems[shift:], *systems[:shift]]


def plan(systems: Sequence[str], reps: int) -> list[Task]:
    """List all subprocess runs, systems alternating within each repetition."""
    tasks = []
    for kind, count in (("import", PROCESS_RUNS), ("first_write", PROCESS_RUNS), ("steps", reps)):
        for rep in range(count):
            tasks += [Task(kind, system, rep) for system in _rotated(systems, rep)]
    return tasks


def _child_env() -> dict[str, str]:
    """Environment for subprocesses with the repository root on PYTHONPATH."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    return env


def _run_python(args: list[str], what: str) -> str:
    """Run the current interpreter with ``args``; return stdout or raise with its stderr."""
    command = [sys.executable, *args]
    proc = subprocess.run(
        command, check=False, cwd=REPO_ROOT, env=_child_env(), capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{what} failed (exit {proc.returncode}):\n{proc.stderr}")
    return proc.stdout


def time_import(system: str) -> float:
    """Seconds a fresh interpreter spends importing the system's top-level module."""
    snippet = IMPORT_SNIPPET.format(module=IMPORT_MODULES[system])
    return float(_run_python(["-c", snippet], f"import of {system}").split()[-1])


def time_first_write(system: str) -> float:
    """Wall seconds of a fresh process that imports, creates a table and commits 3 rows."""
    root = tempfile.mkdtemp(prefix=f"bench-first-{system}-")
    try:
        start = time.perf_counter()
        _run_python(["-c", f"root = {root!r}\n" + FIRST_WRITE_SNIPPETS[system]], f"{system} write")
        return time.perf_counter() - start
    finally:
        shutil.rmtree(root)


def run_steps_child(system: str, data_dir: Path) -> dict[str, Any]:
    """Run the full step sequence of ``system`` in a child process and parse its JSON."""
    args = ["-m", "benchmarks.core_bench", "--child", system, "--data", str(data_dir)]
    return json.loads(_run_python(args, f"{system} step sequence").strip().splitlines()[-1])


def collect(tasks: list[Task], data_dir: Path) -> tuple[Samples, Checks]:
    """Run all tasks; return samples per row and system, plus the step children's checks."""
    samples: Samples = {}
    checks: Checks = []
    for task in progress(tasks, len(tasks), "runs", describe=str):
        if task.kind == "import":
            found = {"import": time_import(task.system)}
        elif task.kind == "first_write":
            found = {"first_write": time_first_write(task.system)}
        else:
            result = run_steps_child(task.system, data_dir)
            found = {**result["times"], "peak_rss_mib": result["peak_rss_mib"]}
            checks.append((task, result["checks"]))
        for row, value in found.items():
            samples.setdefault(row, {}).setdefault(task.system, []).append(value)
    return samples, checks


def check_failures(checks: Checks, expected: dict[str, float]) -> list[str]:
    """Describe every child result that disagrees with the expected counts and sum."""
    failures = []
    for task, found in checks:
        for name, want in expected.items():
            got = found.get(name)
            if got is None or not math.isclose(got, want, rel_tol=1e-9):
                failures.append(f"{task}: {name} = {got}, expected {want}")
    return failures


def _status(row: str, wb: float | None, ratio: float | None) -> str:
    """PASS/MISS of workbench against the row's target; n/a without the needed numbers."""
    if row not in TARGETS:
        return "-"
    if wb is None or (row in STEPS and ratio is None):
        return "n/a"
    if row == "import":
        ok = wb < IMPORT_TARGET_S
    elif row == "first_write":
        ok = wb < FIRST_WRITE_TARGET_S
    else:
        ok = ratio <= STEP_RATIO_TARGET
    return "PASS" if ok else "MISS"


def summarize(samples: Samples) -> dict[str, dict[str, Any]]:
    """Medians, ratios against deltalake and ducklake, target and PASS/MISS for every row."""
    summary = {}
    for row in (*STEPS, "peak_rss_mib", "import", "first_write"):
        median = {system: statistics.median(values) for system, values in samples[row].items()}
        wb = median.get("workbench")
        ratios = {
            key: wb / median[other] if wb is not None and other in median else None
            for key, other in RATIO_BASES.items()
        }
        summary[row] = {
            "unit": "MiB" if row == "peak_rss_mib" else "s",
            "median": median,
            "samples": samples[row],
            **ratios,
            "target": TARGETS.get(row, "-"),
            "status": _status(row, wb, ratios["wb/deltalake"]),
        }
    return summary


def _cell(value: float | None, fmt: str) -> str:
    """Format a table cell, ``-`` when the value is missing."""
    return "-" if value is None else format(value, fmt)


def markdown(summary: dict[str, dict[str, Any]]) -> str:
    """Render the summary as a Markdown table with one row per step."""
    header = ["step", *SYSTEMS, *RATIO_BASES, "target", "status"]
    rows = [header, ["---", *["---:"] * (len(SYSTEMS) + len(RATIO_BASES)), "---", "---"]]
    for row, info in summary.items():
        fmt = ".0f" if info["unit"] == "MiB" else ".3f"
        values = [_cell(info["median"].get(system), fmt) for system in SYSTEMS]
        ratios = [_cell(info[key], ".2f") + "x" * (info[key] is not None) for key in RATIO_BASES]
        rows.append([f"{row} ({info['unit']})", *values, *ratios, info["target"], info["status"]])
    return "\n".join(f"| {' | '.join(cells)} |" for cells in rows)


def _versions() -> dict[str, str | None]:
    """Installed versions of the benchmarked and supporting packages."""
    versions: dict[str, str | None] = {}
    for dist in ("deltalake", "duckdb", "duckdb-extension-ducklake", "pyarrow", "pandas", "numpy"):
        try:
            versions[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            versions[dist] = None
    return versions


def parent_main(args: argparse.Namespace) -> int:
    """Generate data, run all systems, write the JSON report and print the Markdown table."""
    systems = [s for s in SYSTEMS if s in args.systems]
    load_before = os.getloadavg()
    data = generate_data(args.rows)
    with tempfile.TemporaryDirectory(prefix="bench-data-") as data_dir:
        save_data(data, Path(data_dir))
        samples, checks = collect(plan(systems, args.reps), Path(data_dir))
    failures = check_failures(checks, expected_checks(data))
    summary = summarize(samples)
    report = {
        "meta": {
            "rows": args.rows,
            "reps": args.reps,
            "process_runs": PROCESS_RUNS,
            "systems": systems,
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpu_count": os.cpu_count(),
            "loadavg_before": load_before,
            "loadavg_after": os.getloadavg(),
            "versions": _versions(),
        },
        "results": summary,
        "check_failures": failures,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(markdown(summary))
    for failure in failures:
        print(f"WRONG RESULT: {failure}", file=sys.stderr)
    return 1 if failures else 0


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Parse the command line; ``--child`` and ``--data`` are internal to the harness."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows in the base table")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="JSON report path")
    parser.add_argument("--reps", type=int, default=3, help="step-sequence runs per system")
    parser.add_argument(
        "--systems", nargs="+", choices=SYSTEMS, default=list(SYSTEMS), help="systems to run"
    )
    parser.add_argument("--child", choices=SYSTEMS, help=argparse.SUPPRESS)
    parser.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point for both the parent and the per-system child processes."""
    args = parse_args(argv)
    if args.child:
        child_main(args.child, args.data)
        return 0
    return parent_main(args)


if __name__ == "__main__":
    sys.exit(main())
