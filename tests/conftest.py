"""Shared fixtures: a fresh local catalog per test and a snapshot helper for failure checks."""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

import workbench as dc


@pytest.fixture
def catalog(tmp_path: Path) -> Iterator[dc.Catalog]:
    """A fresh default local catalog in a temporary folder."""
    yield dc.init_local(tmp_path / "catalog")


def tree_digest(root: str | Path) -> str:
    """Hash of every file path and content under ``root``: equal digests mean nothing changed."""
    digest = hashlib.sha256()
    for folder, _, files in sorted(os.walk(root)):
        for name in sorted(files):
            path = Path(folder, name)
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def fail_log_commits(monkeypatch: pytest.MonkeyPatch, error: Exception) -> None:
    """Make every commit of a catalog log raise ``error`` (a fault not otherwise producible)."""
    from workbench.core.storage.store import Storage

    real = Storage.put_if_absent

    def failing(self, key, data):
        if "transactions/_delta_log" in key:
            raise error
        return real(self, key, data)

    monkeypatch.setattr(Storage, "put_if_absent", failing)


@pytest.fixture(scope="session")
def spark():
    """One local SparkSession for the whole test run (cold start is ~5-10 s)."""
    pytest.importorskip("pyspark")
    from workbench.engines.spark.session import spark_session

    session = spark_session()
    yield session
    session.stop()


@pytest.fixture(scope="session")
def ray_cluster():
    """One small local Ray instance for the whole test run (start-up costs ~12 s and ~1.8 GB)."""
    pytest.importorskip("ray")
    import ray

    from workbench.core.data.engine import get_engine

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
FIXTURE_TIERS = {"spark": "spark", "ray_cluster": "ray", "s3": "s3", "s3_catalog": "s3"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test with the tiers its fixtures put it in (a test using the ``spark``
    fixture is a ``spark`` test), so no test has to be marked by hand for them."""
    for item in items:
        for fixture, tier in FIXTURE_TIERS.items():
            if fixture in getattr(item, "fixturenames", ()):
                item.add_marker(tier)
