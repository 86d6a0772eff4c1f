"""Background upkeep: a job whose table was removed meanwhile is skipped quietly; any other
failure is skipped with a warning, and neither stops the jobs queued after it."""

from __future__ import annotations

import logging
import shutil

import pyarrow as pa
from deltalake import DeltaTable, write_deltalake

from workbench.core.delta import upkeep


def test_a_checkpoint_of_a_removed_table_is_skipped_quietly(tmp_path, caplog):
    folder = tmp_path / "t"
    write_deltalake(str(folder), pa.table({"n": [1, 2]}))
    shutil.rmtree(folder)
    with caplog.at_level(logging.DEBUG, logger=upkeep.__name__):
        upkeep.request_checkpoint(str(folder))
        upkeep.flush(30)
    skipped = [r for r in caplog.records if r.getMessage().startswith("Skipped checkpoint")]
    assert [r.levelno for r in skipped] == [logging.DEBUG]


def test_a_table_removed_while_its_job_reads_it_is_skipped_quietly(tmp_path, caplog):
    folder = tmp_path / "t"
    for n in range(3):
        write_deltalake(str(folder), pa.table({"n": [n]}), mode="append")

    def checkpoint_of_a_table_removed_meanwhile() -> None:
        table = DeltaTable(str(folder))  # the log is listed, then the folder goes
        shutil.rmtree(folder)
        table.create_checkpoint()  # deltalake: "Kernel error: File not found", no FileNotFound

    with caplog.at_level(logging.DEBUG, logger=upkeep.__name__):
        upkeep.later("checkpoint t", checkpoint_of_a_table_removed_meanwhile, str(folder))
        upkeep.flush(30)
    skipped = [r for r in caplog.records if r.getMessage().startswith("Skipped checkpoint t")]
    assert [r.levelno for r in skipped] == [logging.DEBUG]


def test_a_failing_job_warns_and_the_next_job_still_runs(tmp_path, caplog):
    folder = tmp_path / "t"
    write_deltalake(str(folder), pa.table({"n": [1, 2]}))

    def broken() -> None:
        raise RuntimeError("disk on fire")

    with caplog.at_level(logging.DEBUG, logger=upkeep.__name__):
        upkeep.later("broken job", broken)
        upkeep.request_checkpoint(str(folder))
        upkeep.flush(30)
    warned = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert [r.getMessage() for r in warned] == ["Skipped broken job: disk on fire"]
    assert DeltaTable(str(folder)).version() == 0
    assert list((folder / "_delta_log").glob("*.checkpoint.parquet"))
