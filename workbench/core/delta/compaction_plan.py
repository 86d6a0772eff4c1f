"""Which files of a table one automatic compaction step folds together (no I/O: a plan).

Tiered by rows: a file of ``r`` live rows is in tier ``floor(log_F(r))`` for the fan-out ``F``
(the minimum number of files a step merges), so ``F`` files of one tier make about one file of
the next, and a row is rewritten once per tier: O(log n) times for n rows. A step takes the
oldest run of at least ``F`` neighbouring small files (in write order) of the lowest tier that
has one, so the rows keep their order and the output takes the run's place; a run never splits
the files of one commit. Files at or above the target size are left alone, unless their
deletion vectors delete a large share of their rows: such a file is rewritten on its own first
(a small file's vector goes when its run is folded, or when a merge purges the file). The bytes
a step reads are capped, so its cost stays bounded whatever the table's size.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench.core.base.errors import InvalidArgumentError

if TYPE_CHECKING:
    from workbench.core.delta.data_files import DataFile

AUTO_COMPACT_PROPERTY = "delta.autoOptimize.autoCompact"
TARGET_SIZE_PROPERTY = "delta.targetFileSize"
MIN_FILES_PROPERTY = "workbench.autoCompact.minNumFiles"
MAX_STEP_BYTES_PROPERTY = "workbench.autoCompact.maxBytesPerStep"
DELETED_SHARE_PROPERTY = "workbench.autoCompact.deletedShare"

DEFAULT_TARGET_SIZE = 128 * 1024**2
DEFAULT_MIN_FILES = 8
DEFAULT_MAX_STEP_BYTES = 256 * 1024**2
DEFAULT_DELETED_SHARE = 0.25
_OFF = {"false", "off", "0", "no"}
_ON = {"true", "on", "1", "yes", "auto", "legacy"}


@dataclass(frozen=True)
class CompactionSettings:
    """A table's compaction settings, from its Delta-style properties."""

    enabled: bool = True
    target_size: int = DEFAULT_TARGET_SIZE
    min_files: int = DEFAULT_MIN_FILES
    max_step_bytes: int = DEFAULT_MAX_STEP_BYTES
    deleted_share: float = DEFAULT_DELETED_SHARE

    @classmethod
    def of(cls, properties: Mapping[str, str]) -> CompactionSettings:
        """The settings a table's properties give (defaults where they say nothing)."""
        switch = str(properties.get(AUTO_COMPACT_PROPERTY, "true")).lower()
        if switch not in _ON | _OFF:
            raise InvalidArgumentError(
                f"{AUTO_COMPACT_PROPERTY}={switch!r}: use 'true' or 'false'."
            )
        return cls(
            enabled=switch in _ON,
            target_size=_number(properties, TARGET_SIZE_PROPERTY, DEFAULT_TARGET_SIZE, int, 1),
            min_files=_number(properties, MIN_FILES_PROPERTY, DEFAULT_MIN_FILES, int, 2),
            max_step_bytes=_number(
                properties, MAX_STEP_BYTES_PROPERTY, DEFAULT_MAX_STEP_BYTES, int, 1
            ),
            deleted_share=_number(
                properties, DELETED_SHARE_PROPERTY, DEFAULT_DELETED_SHARE, float, 0.0
            ),
        )


def _number(
    properties: Mapping[str, str],
    name: str,
    default: int | float,
    kind: Callable[[str], int | float],
    minimum: float,
) -> int | float:
    text = properties.get(name)
    if text is None:
        return default
    try:
        value = kind(text)
    except ValueError:
        value = None
    if value is None or value < minimum or (isinstance(value, float) and math.isnan(value)):
        raise InvalidArgumentError(
            f"Table property {name}={text!r} must be a number of at least {minimum}."
        )
    return value


def check_settings(properties: Mapping[str, str]) -> None:
    """Raise ``InvalidArgumentError`` for compaction properties a table cannot use."""
    CompactionSettings.of(properties)


def tier(f: DataFile, fan_out: int) -> int:
    """The tier of a file: the power of the fan-out its live rows reach."""
    return int(math.log(max(f.live_rows, 1), fan_out))


def plan_step(
    files: list[DataFile],
    settings: CompactionSettings,
    eligible: Callable[[DataFile], bool] = lambda f: True,
) -> list[DataFile]:
    """The files one step folds together (in write order; empty when none needs it).
    ``eligible`` leaves files out (a branch compacts only the files it wrote)."""
    if not settings.enabled:
        return []
    for f in files:
        if _mostly_deleted(f, settings) and eligible(f):
            return [f]
    return _oldest_run(files, settings, eligible)


def _mostly_deleted(f: DataFile, settings: CompactionSettings) -> bool:
    """A right-sized file (runs never take it) whose vector deletes a large share of it."""
    if f.deletion_vector is None or not _right_sized(f, settings):
        return False
    return f.deletion_vector.cardinality >= settings.deleted_share * max(f.rows, 1)


def _right_sized(f: DataFile, settings: CompactionSettings) -> bool:
    """A file at the target size or above, yet small enough for one step."""
    return settings.target_size <= f.size <= settings.max_step_bytes


def _oldest_run(
    files: list[DataFile], settings: CompactionSettings, eligible: Callable[[DataFile], bool]
) -> list[DataFile]:
    """The oldest run of neighbouring small files holding at least ``min_files`` files of one
    tier (smaller files among them ride along), cut at commit boundaries and at the step's
    byte cap. Oldest first, so an older tier is never starved by newer small files."""
    fan_out = settings.min_files
    commits = [list(group) for _, group in itertools.groupby(files, key=lambda f: f.modified)]

    def small(commit: list[DataFile]) -> bool:
        return all(f.size < settings.target_size and eligible(f) for f in commit)

    per_tier = Counter(tier(f, fan_out) for c in commits if small(c) for f in c)
    levels = sorted(level for level, count in per_tier.items() if count >= fan_out)
    found = [run for level in levels if (run := _first_run(commits, level, small, settings))]
    return min(found, key=lambda run: files.index(run[0])) if found else []


def _first_run(
    commits: list[list[DataFile]],
    level: int,
    small: Callable[[list[DataFile]], bool],
    settings: CompactionSettings,
) -> list[DataFile]:
    """The first run of neighbouring small commits of tier ``level`` or below that holds
    ``min_files`` files of that tier within the byte cap (empty when there is none)."""
    fan_out = settings.min_files

    def qualifies(run: list[DataFile]) -> bool:
        return sum(tier(f, fan_out) == level for f in run) >= fan_out

    run: list[DataFile] = []
    for commit in commits:
        fits = small(commit) and all(tier(f, fan_out) <= level for f in commit)
        if fits and sum(f.size for f in run + commit) <= settings.max_step_bytes:
            run += commit
            continue
        if qualifies(run):
            return run
        run = commit if fits and sum(f.size for f in commit) <= settings.max_step_bytes else []
    return run if qualifies(run) else []
