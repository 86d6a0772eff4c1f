"""Shared fixtures: a fresh catalog per test, the engines (local, or with ``--cluster`` on real
clusters) and a snapshot helper for failure checks."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import workbench as dc
from workbench.core.delta import upkeep
from workbench.core.storage.known import storage_for
from workbench.core.storage.store import Storage, is_local, local_path


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--cluster",
        action="store_true",
        help="Run only the tests that use Spark or Ray, on a local Spark standalone cluster "
        "(a master, two workers) and a two-node Ray cluster, with their catalogs on a local S3 "
        "server (make test-cluster).",
    )


def on_clusters(config: pytest.Config) -> bool:
    """True when the run is on real clusters (``--cluster``)."""
    return bool(config.getoption("--cluster"))


@pytest.fixture(autouse=True)
def fresh_caches() -> None:
    """Every test starts with the process-wide caches empty (nothing one test read or wrote
    answers another from memory)."""
    from workbench.core.base.caches import clear_process_caches

    clear_process_caches()


@pytest.fixture
def catalog(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dc.Catalog]:
    """A fresh default catalog: in a temporary folder, or with ``--cluster`` on the S3 server."""
    if on_clusters(request.config):
        yield request.getfixturevalue("s3_catalog")
    else:
        yield dc.init_local(tmp_path / "catalog")


@pytest.fixture
def new_catalog(request: pytest.FixtureRequest) -> Callable[[Path], dc.Catalog]:
    """Makes fresh catalogs (not made default) for tests that use several: at the given folder,
    or with ``--cluster`` each in a new bucket of the S3 server."""

    def make(folder: Path) -> dc.Catalog:
        if on_clusters(request.config):
            s3 = request.getfixturevalue("s3")
            return dc.Catalog(dc.CatalogProperties(f"s3://{s3.new_bucket()}/catalog", s3.options))
        return dc.Catalog(dc.CatalogProperties(str(folder)))

    return make


def _storage(root: str | Path, options: dict[str, str] | None = None) -> Storage:
    """The storage under ``root`` (a folder, or a URI under a registered catalog's root) with
    ``options`` (default: those of the catalog whose root holds it)."""
    root = str(root).rstrip("/")
    return Storage(root, storage_for(root + "/").options if options is None else options)


def tree_digest(root: str | Path, options: dict[str, str] | None = None) -> str:
    """Hash of every file path and content under ``root`` (a folder or an object-store URI,
    read with ``options`` when given): equal digests mean nothing changed. Taken at rest: the
    background upkeep asked for so far (a checkpoint, say) is waited for first."""
    upkeep.flush()
    digest = hashlib.sha256()
    if not is_local(str(root)):
        storage = _storage(root, options)
        for key in sorted(entry["path"] for entry in storage.list("")):
            digest.update(key.encode())
            digest.update(storage.get(key) or b"")
        return digest.hexdigest()
    root = local_path(str(root))
    for folder, _, files in sorted(os.walk(root)):
        for name in sorted(files):
            path = Path(folder, name)
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def entries(root: str) -> list[str]:
    """Names of the files and folders directly under ``root`` (a folder or an object-store
    URI; an object store has no empty folders)."""
    if is_local(root):
        return os.listdir(local_path(root))
    storage = _storage(root)
    files = [e["path"] for e in storage.list("") if "/" not in e["path"]]
    return storage.folders("") + files


def fail_log_commits(monkeypatch: pytest.MonkeyPatch, error: Exception) -> None:
    """Make every commit of a catalog log raise ``error`` (a fault not otherwise producible)."""
    real = Storage.put_if_absent

    def failing(self, key, data):
        if "transactions/_delta_log" in key:
            raise error
        return real(self, key, data)

    monkeypatch.setattr(Storage, "put_if_absent", failing)


@pytest.fixture(scope="session")
def local_spark_cluster(request: pytest.FixtureRequest):
    """With ``--cluster``, a standalone Spark cluster of two one-core workers (else None)."""
    if not on_clusters(request.config):
        yield None
        return
    from workbench.testing import LocalSparkCluster

    with LocalSparkCluster() as cluster:
        yield cluster


@pytest.fixture(scope="session")
def spark(local_spark_cluster):
    """One SparkSession for the whole test run (cold start is ~5-10 s): ``local[*]``, or with
    ``--cluster`` the driver of the standalone cluster."""
    pytest.importorskip("pyspark")
    from workbench.engines.spark.session import spark_session

    if local_spark_cluster is not None:
        dc.init(engines={"spark": {"master": local_spark_cluster.master_url}})
    session = spark_session()
    if local_spark_cluster is not None:
        _wait_for_executors(session, local_spark_cluster.workers)
    yield session
    session.stop()


def _wait_for_executors(session, count: int, seconds: float = 120.0) -> None:
    """Wait until ``count`` executors have registered with the driver (which is counted too)."""
    deadline = time.monotonic() + seconds
    while session.sparkContext._jsc.sc().getExecutorMemoryStatus().size() < count + 1:
        if time.monotonic() > deadline:
            pytest.fail(f"{count} Spark executors did not register in {seconds:.0f} s.")
        time.sleep(0.5)


@pytest.fixture(scope="session")
def local_ray_cluster(request: pytest.FixtureRequest):
    """With ``--cluster``, a Ray cluster of two one-CPU nodes (else None)."""
    if not on_clusters(request.config):
        yield None
        return
    from workbench.testing import LocalRayCluster

    with LocalRayCluster() as cluster:
        yield cluster


@pytest.fixture(scope="session")
def ray_cluster(local_ray_cluster):
    """One Ray for the whole test run: a small local instance (start-up costs ~12 s and
    ~1.8 GB), or with ``--cluster`` the two-node cluster, which this process joins."""
    pytest.importorskip("ray")
    import ray

    from workbench.core.data.engine import get_engine

    with contextlib.suppress(dc.EngineUnavailableError):  # Daft's engine keeps Daft in this
        get_engine("daft")  # process: a test's own Daft query would otherwise pick Ray's runner
    if local_ray_cluster is not None:
        dc.init(engines={"ray": {"address": local_ray_cluster.address}})
    else:
        dc.init(engines={"ray": {"num_cpus": 2, "object_store_memory": 256 * 1024**2}})
    get_engine("ray")
    yield
    ray.shutdown()


@pytest.fixture(scope="session")
def s3():
    """A moto S3 server on 127.0.0.1 (a child process, any free port) for the whole test run."""
    pytest.importorskip("moto")
    from workbench.testing import LocalS3

    with LocalS3() as server:
        yield server


@pytest.fixture(scope="session")
def checking_s3():
    """A moto server of its own that checks every request's credentials (IAM checks on)."""
    pytest.importorskip("moto")
    from workbench.testing import LocalS3

    with LocalS3(check_credentials=True) as server:
        yield server


@pytest.fixture
def s3_catalog(s3):
    """A fresh default catalog at s3://<new bucket>/catalog on the moto server."""
    catalog = dc.Catalog(dc.CatalogProperties(f"s3://{s3.new_bucket()}/catalog", s3.options))
    dc.init({"default": catalog})
    yield catalog


MEDIA = Path(__file__).resolve().parent.parent / "media"


@pytest.fixture
def media_folder(tmp_path: Path) -> Path:
    """A private copy of a few sample files of each kind, to change freely."""
    copy = tmp_path / "files"
    for sub, names in {
        "images": ["scene_00.jpg", "scene_02.png", "shapes_07.png", "scene_20.png"],
        "audio": ["speech_00.wav", "silence.wav"],
        "texts": ["review_00_positive.txt", "ticket_03.txt"],
    }.items():
        (copy / sub).mkdir(parents=True)
        for name in names:
            shutil.copy2(MEDIA / sub / name, copy / sub / name)
    return copy


# Test tiers: `make test-fast` leaves these out; `make test` runs everything.
FIXTURE_TIERS = {
    "spark": "spark",
    "ray_cluster": "ray",
    "s3": "s3",
    "s3_catalog": "s3",
    "checking_s3": "s3",
}
CLUSTER_ENGINES = {"spark", "ray_cluster"}


def pytest_itemcollected(item: pytest.Item) -> None:
    """Mark each test with the tiers its fixtures put it in (a test using the ``spark``
    fixture is a ``spark`` test), so no test has to be marked by hand for them. With
    pytest-xdist's ``loadgroup`` (``make test`` runs a worker per core), every Spark test goes
    to one worker, every Ray test to one and every JupyterLab test to one, so each starts its
    session (its JupyterLab server) once: the groups are marked here, as each test is
    collected, since xdist reads them before other hooks that change the collected tests run."""
    fixtures = set(getattr(item, "fixturenames", ()))
    for fixture, tier in FIXTURE_TIERS.items():
        if fixture in fixtures:
            item.add_marker(tier)
    engine = _engine_of(item)
    for group in ("spark", "ray", "browser"):
        if item.get_closest_marker(group) is not None or engine == group:
            item.add_marker(pytest.mark.xdist_group(group))
            break


def _engine_of(item: pytest.Item) -> str | None:
    """The engine a test parametrized by engine (tests/features) runs on: it takes the spark
    fixture only when it runs."""
    return getattr(item, "callspec", None) and item.callspec.params.get("engine")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """With ``--cluster`` keep only the tests that use Spark or Ray; without it, leave out the
    ``cluster`` tests (about the clusters themselves)."""
    selected, deselected = [], []
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if on_clusters(config):
            keep = bool(fixtures & CLUSTER_ENGINES) or _engine_of(item) == "spark"
            local = item.get_closest_marker("local_folder")
            if local is not None:
                item.add_marker(pytest.mark.skip(reason=f"on S3 with --cluster: {local.args[0]}"))
        else:
            keep = item.get_closest_marker("cluster") is None
        (selected if keep else deselected).append(item)
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = selected
