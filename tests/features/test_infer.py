"""dc.infer on real Delta tables and real engines: merged outputs, incremental reruns, lineage
in the catalog log and the run log, typed errors that commit nothing, and load-once models."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import TypedDict

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import workbench as dc
from tests.conftest import tree_digest

KEYED = dc.Schema.of(
    [
        dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True),
        dc.Field.of(pa.field("text", pa.string())),
        dc.Field.of(pa.field("lang", pa.string())),
    ]
)


def _length(batch):
    return {"n": [len(t) for t in batch["text"]]}


def length_model(version: str = "v1") -> dc.Model:
    return dc.model(
        _length, inputs=["text"], outputs={"n": pa.int64()}, name="length", version=version
    )


def docs(rows: int = 40) -> pa.Table:
    return pa.table(
        {
            "id": list(range(rows)),
            "text": [f"text number {i}" for i in range(rows)],
            "lang": ["en" if i % 2 else "fr" for i in range(rows)],
        }
    )


@pytest.fixture(params=["local", "daft", pytest.param("spark", marks=pytest.mark.spark)])
def engine(request) -> str:
    """Each in-process engine; Spark with the shared session."""
    if request.param == "spark":
        request.getfixturevalue("spark")
    return request.param


@pytest.fixture
def table(catalog):
    dc.write(docs(), "docs", "lab", schema=KEYED, auto_create_namespace=True)
    return "docs"


def _fragile(batch):
    if any(t.endswith(" 17") for t in batch["text"]):
        raise ValueError("cannot read this one")
    return {"checked": [len(t) for t in batch["text"]]}


def fragile_model() -> dc.Model:
    """A model that fails on the row whose text ends in 17."""
    return dc.model(_fragile, inputs=["text"], outputs={"checked": pa.int64()}, name="fragile")


def frozen(catalog) -> tuple[str, str]:
    """Digests of the table folder and the catalog log: equal means nothing was committed."""
    root = catalog.root
    return tree_digest(f"{root}/lab/docs"), tree_digest(f"{root}/_workbench/transactions")


def test_infer_merges_outputs_and_reruns_incrementally(table, engine):
    result = dc.infer(table, length_model(), namespace="lab", engine=engine, progress=False)
    assert (result.rows_predicted, result.rows_skipped, result.engine) == (40, 0, engine)
    rows = dc.read(table, "lab", read_as="pyarrow").sort_by("id").to_pylist()
    assert [r["n"] for r in rows] == [len(r["text"]) for r in rows]  # new column by evolution
    assert {r["_model_length"] for r in rows} == {"v1"}
    assert "2 of" not in repr(result) and result._repr_html_().startswith("<table")

    again = dc.infer(table, length_model(), namespace="lab", engine=engine, progress=False)
    assert (again.rows_predicted, again.rows_skipped, again.transaction_id) == (0, 40, None)

    dc.write(pa.table({"id": [3], "text": ["changed"], "lang": ["en"]}), table, "lab")
    changed = dc.infer(table, length_model(), namespace="lab", engine=engine, progress=False)
    assert (changed.rows_predicted, changed.rows_skipped) == (1, 39)
    assert dc.read(table, "lab", read_as="pyarrow").filter(pc.field("id") == 3)["n"][0].as_py() == 7

    forced = dc.infer(
        table, length_model(), namespace="lab", engine=engine, force=True, progress=False
    )
    assert forced.rows_predicted == 40


def test_details_in_the_catalog_log_and_the_run_log(table):
    result = dc.infer(table, length_model(), namespace="lab", engine="local", progress=False)
    record = dc.read_transaction(result.transaction_id)
    (change,) = record.changes
    assert change["operation"] == "WRITE_MERGE+INFER"
    details = change["details"]
    assert details["model"] == "length" and details["model_version"] == "v1"
    assert details["inputs"] == {"text": "text"} and details["input_table_version"] == 0
    assert (details["engine"], details["rows_predicted"], details["rows_skipped"]) == (
        "local",
        40,
        0,
    )
    assert "model_version" in str(record)
    history = dc.transactions().to_pylist()
    assert '"model": "length"' in history[0]["details"] and history[1]["details"] is None
    runs = dc.runs(kind="inference", read_as="pyarrow").to_pylist()
    assert runs[0]["name"] == "infer length" and runs[0]["status"] == "succeeded"
    assert len(runs[0]["transactions"]) == 1
    steps = dc.run_events(runs[0]["run_id"], read_as="pyarrow").to_pylist()
    finished = {e["step"]["name"]: e["step"] for e in steps if e["event_type"] == "STEP_FINISHED"}
    assert set(finished) == {"read", "predict", "merge"}
    assert (finished["predict"]["rows_in"], finished["predict"]["rows_out"]) == (40, 40)


def test_into_another_table_keyed_the_same(table):
    result = dc.infer(
        table, length_model(), namespace="lab", into="lab.lengths", engine="daft", progress=False
    )
    assert result.rows_predicted == 40
    out = dc.read("lengths", "lab", read_as="pyarrow").sort_by("id")
    assert out.column_names == ["id", "n", "_model_length", "_input_length"]
    assert dc.get_table("lengths", "lab").table_version  # exists
    assert dc.delta_table("lengths", "lab").schema().fields[0].name == "id"
    assert "n" not in dc.read(table, "lab", read_as="pyarrow").column_names
    assert dc.read("lengths", "lab", read_as="pyarrow").num_rows == 40
    again = dc.infer(table, length_model(), namespace="lab", into="lab.lengths", progress=False)
    assert again.rows_predicted == 0


def test_where_limits_rows(table):
    result = dc.infer(
        table, length_model(), namespace="lab", where=pc.field("lang") == "en", progress=False
    )
    assert result.rows_predicted == 20
    data = dc.read(table, "lab", read_as="pyarrow")
    assert data.filter(pc.field("lang") == "fr")["n"].null_count == 20
    with pytest.raises(dc.InvalidArgumentError, match="pyarrow expression"):
        dc.infer(table, length_model(), namespace="lab", where="lang = 'en'")


@pytest.mark.parametrize("sizes", [{"batch_size": 0}, {"concurrency": 0}])
def test_batches_and_workers_are_at_least_one(table, sizes):
    with pytest.raises(dc.InvalidArgumentError, match="at least 1"):
        dc.infer(table, length_model(), namespace="lab", progress=False, **sizes)


def test_time_travel_and_diff_between_model_versions(table):
    first = dc.infer(table, length_model("v1"), namespace="lab", progress=False)
    before = dc.read(table, "lab", read_as="pyarrow", version=first.table_version - 1)
    assert "n" not in before.column_names

    def doubled(batch):
        return {"n": [2 * len(t) if i % 4 == 0 else len(t) for i, t in enumerate(batch["text"])]}

    second_model = dc.model(
        doubled, inputs=["text"], outputs={"n": pa.int64()}, name="length", version="v2"
    )
    second = dc.infer(table, second_model, namespace="lab", batch_size=1000, progress=False)
    assert second.rows_predicted == 40  # a new version recomputes every row
    change = dc.diff(table, "lab", first.transaction_id, second.transaction_id)
    assert (change.added, change.removed, change.changed) == (0, 0, 40)  # _model_ changes
    outputs = dc.diff(table, "lab", first.transaction_id, second.transaction_id, columns=["n"])
    assert outputs.changed == 10  # every fourth row's length doubled
    with pytest.raises(dc.InvalidArgumentError, match="nope"):
        dc.diff(table, "lab", first.transaction_id, columns=["nope"])
    values = dc.read(table, "lab", read_as="pyarrow", as_of=first.transaction_id)
    assert set(values["_model_length"].to_pylist()) == {"v1"}


def _progress_setting(batch):
    return {"setting": [os.environ.get("DAFT_PROGRESS_BAR", "unset")] * len(batch["text"])}


def test_daft_draws_no_bar_of_its_own_during_infer(table, monkeypatch):
    """dc.infer draws its own bar (or none with progress=False); Daft's is off while it runs,
    back afterwards, and a value the user chose is kept."""
    monkeypatch.delenv("DAFT_PROGRESS_BAR", raising=False)
    probe = dc.model(
        _progress_setting, inputs=["text"], outputs={"setting": pa.string()}, name="probe"
    )
    dc.infer(table, probe, namespace="lab", engine="daft", progress=False)
    settings = dc.read(table, "lab", read_as="pyarrow").column("setting").to_pylist()
    assert set(settings) == {"0"}
    assert "DAFT_PROGRESS_BAR" not in os.environ
    monkeypatch.setenv("DAFT_PROGRESS_BAR", "1")
    dc.infer(table, probe, namespace="lab", engine="daft", force=True, progress=False)
    assert set(dc.read(table, "lab", read_as="pyarrow").column("setting").to_pylist()) == {"1"}
    assert os.environ["DAFT_PROGRESS_BAR"] == "1"


def test_unknown_model_missing_column_no_keys_and_output_type(catalog, table):
    with pytest.raises(dc.UnknownModelError, match=r"dc\.model"):
        dc.infer(table, "no-such-model", namespace="lab")
    wrong = dc.model(_length, inputs=["body"], outputs={"n": pa.int64()}, name="length")
    with pytest.raises(dc.InputColumnError, match="body"):
        dc.infer(table, wrong, namespace="lab")
    dc.write(pa.table({"text": ["a"]}), "loose", "lab")
    with pytest.raises(dc.MergeKeyError, match="is_merge_key=True"):
        dc.infer("loose", length_model(), namespace="lab")
    clash = dc.model(_length, inputs=["text"], outputs={"lang": pa.int64()}, name="clash")
    with pytest.raises(dc.OutputColumnTypeError, match="lang"):
        dc.infer(table, clash, namespace="lab")


def test_a_model_failing_on_a_row_names_it_and_commits_nothing(catalog, table, engine):
    broken = fragile_model()
    seen = frozen(catalog)
    with pytest.raises(dc.ModelFailedError, match=r"'fragile'.*\{\"id\": 17\}.*cannot read"):
        dc.infer(table, broken, namespace="lab", engine=engine, batch_size=8, progress=False)
    assert frozen(catalog) == seen
    assert dc.runs(kind="inference", read_as="pyarrow")["status"][0].as_py() == "failed"


class CountingModel:
    """A model class that appends a line to a file each time it is made (loaded)."""

    def __init__(self, path: str):
        with open(path, "a") as f:
            f.write("load\n")

    def __call__(self, batch):
        return {"n": [len(t) for t in batch["text"]]}


def infer_counting(table: str, folder: Path, engine: str) -> tuple[dc.InferResult, int]:
    """Infer a model that notes each load in a file, in eight batches of five on one worker;
    the result and the number of loads."""
    loads = folder / "loads.txt"
    counting = dc.model(
        CountingModel,
        inputs=["text"],
        outputs={"n": pa.int64()},
        name="counting",
        parameters={"path": str(loads)},
    )
    result = dc.infer(
        table, counting, namespace="lab", engine=engine, batch_size=5, concurrency=1,
        progress=False,
    )  # fmt: skip
    return result, loads.read_text().count("load")


def test_the_model_loads_once_per_worker(table, tmp_path, engine):
    result, loads = infer_counting(table, tmp_path, engine)
    assert (result.rows_predicted, loads) == (40, 1)


@pytest.mark.slow  # several seconds: make test runs it, make test-fast does not
def test_killed_during_predict_commits_nothing(catalog, table, tmp_path):
    script = textwrap.dedent(
        f"""
        import os, signal, pyarrow as pa, workbench as dc
        dc.init_local({str(Path(catalog.root))!r})
        def die(batch):
            os.kill(os.getpid(), signal.SIGKILL)
        m = dc.model(die, inputs=["text"], outputs={{"n": pa.int64()}}, name="die")
        dc.infer("docs", m, namespace="lab", engine="local", progress=False)
        """
    )
    seen = frozen(catalog)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    done = subprocess.run([sys.executable, "-c", script], env=env, timeout=120)
    assert done.returncode == -signal.SIGKILL
    assert frozen(catalog) == seen
    assert "n" not in dc.read("docs", "lab", read_as="pyarrow").column_names


def test_run_transaction_retries_an_infer(table):
    result = dc.run_transaction(
        lambda: dc.infer(table, length_model(), namespace="lab", progress=False)
    )
    assert result.rows_predicted == 40


@pytest.mark.parametrize(
    "engine",
    [pytest.param("spark", marks=pytest.mark.spark), pytest.param("ray", marks=pytest.mark.ray)],
)
def test_engines_keep_predictions_out_of_this_process(catalog, table, engine, request):
    """Spark and Ray workers choose the rows to predict (a task per table file) and write the
    predictions as files, and the merge-back runs on the engine, so no row comes back here.
    The staged files are gone after a call, whether it commits or fails."""
    from workbench.core.data.engine import get_engine

    request.getfixturevalue({"spark": "spark", "ray": "ray_cluster"}[engine])

    def staged() -> list[str]:
        found = catalog.storage.list("_workbench/staging")
        return [e["path"] for e in found if e["path"].endswith(".parquet")]

    monkeypatch = request.getfixturevalue("monkeypatch")  # choosing rows here, or gathering
    monkeypatch.setattr(type(get_engine(engine)), "predict", _never_called)  # predictions
    monkeypatch.setattr("workbench.core.inference.infer.select_here", _never_called)
    result = dc.infer(table, length_model(), namespace="lab", engine=engine, progress=False)
    rows = dc.read(table, "lab", read_as="pyarrow").to_pylist()
    assert result.rows_predicted == 40 and [r["n"] for r in rows] == [len(r["text"]) for r in rows]
    assert not staged()
    seen = frozen(catalog)
    with pytest.raises(dc.ModelFailedError, match=r"\{\"id\": 17\}"):
        dc.infer(table, fragile_model(), namespace="lab", engine=engine, progress=False)
    assert frozen(catalog) == seen and not staged()


def _never_called(*args, **kwargs):
    raise AssertionError("predictions were gathered in this process")


def test_infer_on_ray(ray_cluster, table, tmp_path):
    result, loads = infer_counting(table, tmp_path, "ray")
    assert (result.rows_predicted, result.engine, loads) == (40, "ray", 1)
    rows = dc.read(table, "lab", read_as="pyarrow").to_pylist()
    assert all(r["n"] == len(r["text"]) for r in rows)

    broken = fragile_model()
    with pytest.raises(dc.ModelFailedError, match=r"\{\"id\": 17\}"):
        dc.infer(table, broken, namespace="lab", engine="ray", progress=False)

    model = dc.model(untyped, inputs=["text"], name="untyped")  # typed by its first batch
    dc.infer(table, model, namespace="lab", engine="ray", batch_size=8, progress=False)
    data = dc.read(table, "lab", read_as="pyarrow")
    assert data.schema.field("upper").type == pa.string()
    assert data.column("upper").to_pylist() == [t.upper() for t in data.column("text").to_pylist()]


def test_ray_keeps_its_model_pool_between_infer_calls(ray_cluster, table, tmp_path):
    loads = tmp_path / "loads.txt"

    def counting(path: Path) -> dc.Model:
        return dc.model(
            CountingModel,
            inputs=["text"],
            outputs={"n": pa.int64()},
            name="counting",
            parameters={"path": str(path)},
        )

    for _ in range(3):  # the same model again: the pool's actor predicts, nothing loads
        result = dc.infer(
            table, counting(loads), namespace="lab", engine="ray", force=True, progress=False
        )
        assert result.rows_predicted == 40
    assert loads.read_text().count("load") == 1
    other = tmp_path / "other.txt"  # another model (other parameters): a new pool
    dc.infer(table, counting(other), namespace="lab", engine="ray", force=True, progress=False)
    assert other.read_text().count("load") == 1 and loads.read_text().count("load") == 1


@pytest.mark.ray
def test_daft_stays_in_process_after_ray_started(catalog, table):
    """Daft's first query picks its Ray runner when Ray is up; engine="daft" keeps it native."""
    script = textwrap.dedent(
        f"""
        import pyarrow as pa, workbench as dc
        from workbench.core.data.engine import get_engine
        dc.init_local({str(Path(catalog.root))!r})
        dc.init(engines={{"ray": {{"num_cpus": 1, "object_store_memory": 100 * 2**20}}}})
        get_engine("ray")  # Ray is up
        m = dc.model(lambda b: {{"n": [len(t) for t in b["text"]]}}, inputs=["text"],
                     outputs={{"n": pa.int64()}}, name="n")
        dc.infer("docs", m, namespace="lab", engine="daft", progress=False)
        import daft
        print(daft.get_or_infer_runner_type())
        """
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, timeout=300, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "native"


class Shapes(TypedDict):
    """Outputs of ``annotated``: a column of ints and a column of float vectors."""

    n: list[int]
    vector: list[list[float]]


def annotated(batch) -> Shapes:
    return {"n": [len(t) for t in batch["text"]], "vector": [[1.0, 2.0] for _ in batch["text"]]}


def untyped(batch):
    texts = batch["text"]
    return {
        "size": [len(t) for t in texts],
        "upper": [t.upper() for t in texts],
        "vector": np.ones((len(texts), 3), dtype=np.float32),
    }


def test_a_model_without_outputs_takes_them_from_the_first_batch(table, engine):
    eager = {"workbench.autoCompact.minNumFiles": "2"}  # Spark's files then bring a step
    dc.alter_table(table, namespace="lab", table_version_properties=eager)
    model = dc.model(untyped, inputs=["text"], name="untyped", version="1")
    result = dc.infer(table, model, namespace="lab", engine=engine, batch_size=8, progress=False)
    assert result.rows_predicted == 40
    data = dc.read(table, "lab", read_as="pyarrow").sort_by("id")
    assert data.schema.field("size").type == pa.int64()
    assert data.schema.field("upper").type == pa.string()
    assert pa.types.is_list(data.schema.field("vector").type)
    assert data.column("upper").to_pylist() == [t.upper() for t in data.column("text").to_pylist()]
    assert data.column("vector").to_pylist()[0] == [1.0, 1.0, 1.0]
    newest = dc.transactions(read_as="pyarrow", table="lab.docs").to_pylist()[0]  # no steps
    assert newest["transaction_id"] == result.transaction_id and "untyped" in newest["details"]
    every = dc.transactions(read_as="pyarrow", table="lab.docs", compactions=True).to_pylist()
    after = [t["operations"] for t in every if t["sequence"] > newest["sequence"]]
    assert all(ops == ["AUTO_COMPACT"] for ops in after)  # the steps that followed, if any


def test_a_model_takes_its_outputs_from_the_return_annotation(table):
    model = dc.model(annotated, inputs=["text"], name="annotated")
    assert model.output_schema() == pa.schema(
        [("n", pa.int64()), ("vector", pa.list_(pa.float64()))]
    )
    dc.infer(table, model, namespace="lab", engine="local", progress=False)
    assert dc.read(table, "lab", read_as="pyarrow").schema.field("n").type == pa.int64()


def test_outputs_that_cannot_be_typed_say_to_pass_outputs(catalog, table):
    before = frozen(catalog)
    nothing = dc.model(lambda b: {"x": [None] * len(b["text"])}, inputs=["text"], name="nulls")
    with pytest.raises(dc.ModelOutputsError, match="outputs="):
        dc.infer(table, nothing, namespace="lab", engine="local", progress=False)
    not_a_dict = dc.model(lambda b: [1] * len(b["text"]), inputs=["text"], name="listy")
    with pytest.raises(dc.ModelOutputsError, match="mapping"):
        dc.infer(table, not_a_dict, namespace="lab", engine="local", progress=False)
    assert frozen(catalog) == before


def test_inputs_as_a_list_of_columns_in_the_models_order(table):
    two = dc.model(
        lambda b: {"joined": [f"{t}/{lang}" for t, lang in zip(b["a"], b["b"], strict=True)]},
        inputs=["a", "b"],
        outputs={"joined": pa.string()},
        name="joined",
    )
    dc.infer(table, two, inputs=["text", "lang"], namespace="lab", progress=False)
    row = dc.read(table, "lab", read_as="pyarrow").sort_by("id").to_pylist()[1]
    assert row["joined"] == f"{row['text']}/{row['lang']}"
    one = length_model()
    dc.infer(table, one, inputs=("lang",), namespace="lab", force=True, progress=False)
    for wrong, message in [
        (["text"], "takes 2 inputs"),
        (["text", 3], "column names"),
        (["text", "nope"], "no column"),
    ]:
        with pytest.raises(dc.WorkbenchError, match=message):
            dc.infer(table, two, inputs=wrong, namespace="lab", force=True, progress=False)


def test_a_model_naming_no_inputs_reads_the_bound_columns_by_their_names(table):
    by_name = dc.model(lambda b: {"n": [len(t) for t in b["text"]]}, name="by_name")
    dc.infer(table, by_name, inputs=["text"], namespace="lab", progress=False)
    pair = dc.model(
        lambda b: {"pair": [f"{t}/{g}" for t, g in zip(b["text"], b["lang"], strict=True)]},
        name="pair",
    )
    dc.infer(table, pair, inputs=["text", "lang"], namespace="lab", progress=False)
    unnamed = dc.model(lambda b: {"size": [len(v) for v in b["value"]]}, name="unnamed")
    dc.infer(table, unnamed, inputs="lang", namespace="lab", progress=False)  # one: also "value"
    mapped = dc.model(lambda b: {"upper": [t.upper() for t in b["x"]]}, name="mapped")
    dc.infer(table, mapped, inputs={"x": "lang"}, namespace="lab", progress=False)
    row = dc.read(table, "lab", read_as="pyarrow").sort_by("id").to_pylist()[1]
    assert (row["n"], row["pair"]) == (len(row["text"]), f"{row['text']}/{row['lang']}")
    assert (row["size"], row["upper"]) == (len(row["lang"]), row["lang"].upper())
    with pytest.raises(dc.InvalidArgumentError, match="input names"):
        dc.model(_length, inputs=5)
    assert list(dc.model(_length, inputs="text").inputs) == ["text"]  # a name, not its letters


def test_a_column_holds_one_models_outputs(catalog, table):
    """A second model writing a column another model wrote is refused (its provenance would
    describe values it did not make), naming both and the ways out; so is a model writing its
    own input. The same model in a new version may, and a dropped column is free again."""
    ones = dc.model(lambda b: {"n": [1] * len(b["text"])}, inputs=["text"], name="ones")
    twos = dc.model(lambda b: {"n": [2] * len(b["text"])}, inputs=["text"], name="twos")
    dc.infer(table, ones, namespace="lab", progress=False)
    before = frozen(catalog)
    with pytest.raises(dc.OutputColumnOwnedError, match=r"'n'.*'ones'.*'twos'.*outputs=.*into="):
        dc.infer(table, twos, namespace="lab", progress=False)
    untyped = dc.model(lambda b: {"n": [3] * len(b["text"])}, inputs=["text"], name="untyped")
    with pytest.raises(dc.OutputColumnOwnedError, match="'ones'"):  # typed by its first batch
        dc.infer(table, untyped, namespace="lab", progress=False)
    dashed = dc.model(lambda b: {"p": [0] * len(b["text"])}, inputs=["text"], name="x-y")
    dc.infer(table, dashed, namespace="lab", progress=False)
    before = frozen(catalog)
    alike = dc.model(lambda b: {"q": [0] * len(b["text"])}, inputs=["text"], name="x_y")
    with pytest.raises(dc.OutputColumnOwnedError, match=r"_model_x_y.*'x-y'"):  # same provenance
        dc.infer(table, alike, namespace="lab", progress=False)
    echo = dc.model(lambda b: {"text": b["text"]}, inputs=["text"], name="echo")
    with pytest.raises(dc.OutputColumnOwnedError, match="reads as input"):
        dc.infer(table, echo, namespace="lab", progress=False)
    assert frozen(catalog) == before
    assert dc.infer(table, ones, namespace="lab", progress=False).rows_predicted == 0

    newer = dc.model(lambda b: {"n": [10] * len(b["text"])}, inputs=["text"], name="ones")
    assert dc.infer(table, newer, namespace="lab", progress=False).rows_predicted == 40
    update = dc.get_table(table, "lab").schema.update(allow_incompatible_changes=True)
    dc.alter_table(table, namespace="lab", schema_updates=update.remove_field("n"))
    dc.infer(table, twos, namespace="lab", force=True, progress=False)
    assert set(dc.read(table, "lab", read_as="pyarrow").column("n").to_pylist()) == {2}
    with pytest.raises(dc.OutputColumnOwnedError, match="'twos'"):
        dc.infer(table, ones, namespace="lab", force=True, progress=False)


def _slow_length(batch):
    time.sleep(5)
    return {"n": [len(t) for t in batch["text"]]}


@pytest.mark.slow  # several seconds: make test runs it, make test-fast does not
def test_a_prediction_longer_than_the_lease_keeps_it_and_commits(catalog, table, monkeypatch):
    """A heartbeat renews the call's leases while the model runs (a 2 s lease, a 5 s model):
    another writer of the table queues behind the call instead of taking an expired lease,
    and both commit (the call used to end in TransactionConflictError after all its work)."""
    monkeypatch.setenv("WORKBENCH_LEASE_SECONDS", "2")
    slow = dc.model(_slow_length, inputs=["text"], outputs={"n": pa.int64()}, name="slow")
    waited, failed = [], []

    def other_writer() -> None:
        time.sleep(1)
        started = time.monotonic()
        try:
            dc.write(pa.table({"id": [99], "text": ["late"], "lang": ["en"]}), table, "lab")
        except Exception as e:
            failed.append(e)
        waited.append(time.monotonic() - started)

    writer = threading.Thread(target=other_writer)
    writer.start()
    try:
        result = dc.infer(table, slow, namespace="lab", engine="local", progress=False)
    finally:
        writer.join()
    assert result.rows_predicted == 40 and not failed
    assert waited[0] > 2  # it queued past the lease time, behind the live call
    rows = {r["id"]: r["n"] for r in dc.read(table, "lab", read_as="pyarrow").to_pylist()}
    assert rows[99] is None and rows[3] == len("text number 3")
    assert not list(Path(catalog.root, "_workbench", "leases").glob("*.json"))  # released


def _scaled_by(factor: int):
    def scaled(batch):
        return {"scaled": [len(t) * factor for t in batch["text"]]}

    return scaled


OFFSET = 0
LOCK = threading.Lock()


def _shifted(batch):
    return {"shifted": [len(t) + OFFSET for t in batch["text"]]}


def _locked(batch):
    with LOCK:
        return {"locked": [len(t) for t in batch["text"]]}


def test_the_default_version_follows_closure_values_and_globals(table, monkeypatch):
    def infer(fn, name: str) -> dc.InferResult:
        model = fn if isinstance(fn, dc.Model) else dc.model(fn, inputs=["text"], name=name)
        return dc.infer(table, model, namespace="lab", progress=False)

    def column(name: str) -> list:
        return dc.read(table, "lab", read_as="pyarrow").sort_by("id").column(name).to_pylist()

    assert infer(_scaled_by(2), "scaled").rows_predicted == 40
    assert infer(_scaled_by(2), "scaled").rows_skipped == 40  # the same closure value
    assert infer(_scaled_by(3), "scaled").rows_predicted == 40  # another one
    assert column("scaled")[1] == 3 * len("text number 1")

    shifted = dc.model(_shifted, inputs=["text"], name="shifted")
    assert infer(shifted, "").rows_predicted == 40
    assert infer(shifted, "").rows_skipped == 40
    monkeypatch.setattr(sys.modules[__name__], "OFFSET", 5)  # after dc.model made it
    assert infer(shifted, "").rows_predicted == 40
    assert column("shifted")[1] == len("text number 1") + 5

    with pytest.warns(UserWarning, match=r"global 'LOCK'.*cannot be hashed.*version="):
        locked = dc.model(_locked, inputs=["text"], name="locked")
    with pytest.warns(UserWarning):
        assert infer(locked, "").rows_predicted == 40
    with pytest.warns(UserWarning):
        assert infer(locked, "").rows_predicted == 40  # unknown state: never kept stale
    pinned = dc.model(_locked, inputs=["text"], name="locked", version="1")
    assert infer(pinned, "").rows_predicted == 40 and infer(pinned, "").rows_skipped == 40


def _drifting(batch):
    """Ints for the first batch (ids 0-7), text after: types a first batch cannot foresee."""
    first = batch["text"][0] == "text number 0"
    return {"d": [1 if first else "one"] * len(batch["text"])}


def test_what_a_model_returns_wrongly_is_a_typed_error_that_commits_nothing(catalog, table, engine):
    n = {"n": pa.int64()}
    cases = [
        (dc.model(lambda b: {"n": [1] * (len(b["text"]) + 1)}, inputs=["text"], outputs=n,
                  name="extra"), dc.ModelFailedError, r"'n' has 2 values for 1 rows"),
        (dc.model(lambda b: {"n": ["x"] * len(b["text"])}, inputs=["text"], outputs=n,
                  name="strings"), dc.ModelFailedError, r"\{\"id\": \d+\}.*convert 'x'"),
        (dc.model(lambda b: {"n": None}, inputs=["text"], outputs=n, name="none"),
         dc.ModelFailedError, "NoneType"),
        (dc.model(lambda b: None, inputs=["text"], outputs=n, name="nothing"),
         dc.ModelFailedError, "not a mapping"),
        (dc.model(lambda b: {"m": [1] * len(b["text"])}, inputs=["text"], outputs=n,
                  name="other"), dc.ModelFailedError, r"no output 'n' \(it gave \['m'\]\)"),
        (dc.model(lambda b: {"n": None}, inputs=["text"], name="untyped_none"),
         dc.ModelOutputsError, "no one type"),
        (dc.model(_drifting, inputs=["text"], name="drifting"),
         dc.ModelFailedError, r"\{\"id\": \d+\}.*(convert|Expected)"),
        (dc.model(lambda b: {"": [1] * len(b["text"])}, inputs=["text"], name="blank"),
         dc.ModelOutputsError, "non-empty"),
    ]  # fmt: skip
    before = frozen(catalog)
    for model, error, message in cases:
        with pytest.raises(error, match=message):
            dc.infer(table, model, namespace="lab", engine=engine, batch_size=8, progress=False)
    assert frozen(catalog) == before
    with pytest.raises(dc.InvalidArgumentError, match="own"):
        dc.model(_length, outputs={"": pa.int64()})


def test_where_is_checked_against_the_table_and_an_empty_choice_commits_nothing(catalog, table):
    before = frozen(catalog)
    for where, reason in [
        (pc.field("nope") == 1, "No match"),
        (pc.field("id") + 1, "must evaluate to bool"),
        (pc.field("id") == "seven", "no kernel"),
    ]:
        with pytest.raises(dc.InvalidArgumentError, match=rf"cannot choose rows.*{reason}.*'id'"):
            dc.infer(table, length_model(), namespace="lab", where=where, progress=False)
    none = dc.infer(
        table, length_model(), namespace="lab", where=pc.field("id") > 99, into="lab.preds",
        progress=False,
    )  # fmt: skip
    assert (none.rows_predicted, none.rows_skipped, none.transaction_id) == (0, 0, None)
    dc.create_table("blank", namespace="lab", schema=KEYED)
    before = frozen(catalog)
    empty = dc.infer("blank", length_model(), namespace="lab", progress=False)
    assert (empty.rows_predicted, empty.transaction_id) == (0, None)
    assert frozen(catalog) == before and not dc.table_exists("preds", "lab")


class _Unloadable:
    """A model class whose making (its load, once per worker) fails."""

    def __init__(self):
        raise OSError("weights.bin is missing")

    def __call__(self, batch):
        return {"n": [len(t) for t in batch["text"]]}


@pytest.mark.parametrize(
    "engine",
    [
        "local",
        "daft",
        pytest.param("spark", marks=pytest.mark.spark),
        pytest.param("ray", marks=pytest.mark.ray),
    ],
)
def test_a_model_that_cannot_load_says_so_and_commits_nothing(catalog, table, engine, request):
    if engine in ("spark", "ray"):
        request.getfixturevalue({"spark": "spark", "ray": "ray_cluster"}[engine])
    before = frozen(catalog)
    for outputs in ({"n": pa.int64()}, None):  # loaded on the engine's workers, or here first
        model = dc.model(_Unloadable, inputs=["text"], outputs=outputs, name="unloadable")
        with pytest.raises(dc.ModelFailedError, match=r"'unloadable'.*to load: OSError: weights"):
            dc.infer(table, model, namespace="lab", engine=engine, progress=False)
    assert frozen(catalog) == before
