"""Idempotency keys: a transaction tagged ``(app_id, version)`` commits at most once per key.

A key is the Delta ``txn`` idea made catalog-wide: the catalog log records, for each app, the
newest version any committed transaction carried, and a transaction whose keys are all at or
below what the log holds is skipped as a whole, inside the commit protocol (the check runs
against the newest log state right before the put-if-absent that commits, and again after a
lost race). Each table commit of the transaction carries the keys as ``txn`` actions, so
deltalake's ``transaction_version(app_id)`` reads them too.
"""

from __future__ import annotations

import json
import numbers
from collections.abc import Iterable, Mapping
from typing import Any

from workbench.core.base.errors import IdempotencyConflictError, InvalidArgumentError
from workbench.core.delta.commits import APP_ID

DETAILS_KEY = "idempotency"  # the log rows' details key holding {app_id: version}
MAX_APP_ID_LENGTH = 256

IdempotencyKeys = tuple[str, int] | Iterable[tuple[str, int]] | Mapping[str, int]


def parse_keys(value: Any, name: str = "idempotency") -> dict[str, int]:
    """The ``idempotency=`` argument as {app_id: version}: one ``(app_id, version)`` pair, a
    list of them, or a mapping; None is no keys."""
    if value is None:
        return {}
    if isinstance(value, Mapping):
        pairs = list(value.items())
    elif isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str):
        pairs = [value]
    elif isinstance(value, (list, tuple)):
        pairs = list(value)
    else:
        raise InvalidArgumentError(_shape_hint(name, value))
    keys: dict[str, int] = {}
    for pair in pairs:
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise InvalidArgumentError(_shape_hint(name, pair))
        app_id, version = _app_id(name, pair[0]), _version(name, pair[1])
        if keys.get(app_id, version) != version:
            raise InvalidArgumentError(
                f"{name} names app {app_id!r} twice, with versions {keys[app_id]} and "
                f"{version}; give each app one version per transaction."
            )
        keys[app_id] = version
    return keys


def _shape_hint(name: str, value: Any) -> str:
    return (
        f"{name}={value!r} is not an idempotency key: pass (app_id, version), e.g. "
        f'{name}=("orders-ingest", 42), or a list of such pairs.'
    )


def _app_id(name: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidArgumentError(
            f"{name}: the app id {value!r} must be a non-empty string naming the job whose "
            'batches it numbers, e.g. ("orders-ingest", 42).'
        )
    if value == APP_ID:
        raise InvalidArgumentError(
            f"{name}: the app id {APP_ID!r} is the one workbench's own catalog commits use; "
            "name your job's app something else."
        )
    if len(value) > MAX_APP_ID_LENGTH:
        raise InvalidArgumentError(
            f"{name}: the app id is {len(value)} characters long; use at most {MAX_APP_ID_LENGTH}."
        )
    return value


def _version(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise InvalidArgumentError(
            f"{name}: the version {value!r} must be a whole number of at least 0 (a batch "
            "number, an offset), increasing with each batch of the app."
        )
    return int(value)


def keys_of(details: str | None) -> dict[str, int]:
    """The keys a log row's details JSON records (none for most rows, found without parsing)."""
    if not details or f'"{DETAILS_KEY}"' not in details:
        return {}
    return {k: int(v) for k, v in json.loads(details).get(DETAILS_KEY, {}).items()}


def repeated(
    keys: Mapping[str, int], follows: Mapping[str, int | None], committed: Mapping[str, int]
) -> bool:
    """True when every key is committed already (the transaction is a repeat, to skip); False
    when none is. Raises ``IdempotencyConflictError`` when only some are, or when a key must
    follow a version (``follows``: a consumer's cursor) that is no longer the newest."""
    done = sorted(app for app, version in keys.items() if committed.get(app, -1) >= version)
    if done and len(done) == len(keys):
        return True
    if done:
        raise IdempotencyConflictError(
            f"Idempotency keys {done} are committed already but "
            f"{sorted(set(keys) - set(done))} are not: another run did part of this work. "
            "Nothing of this transaction was committed; read the apps' versions again "
            "(dc.idempotency_version) and start from there."
        )
    for app, expected in follows.items():
        if committed.get(app) != expected:
            raise IdempotencyConflictError(
                f"App {app!r} was expected at version {expected} but the catalog holds "
                f"{committed.get(app)}: another run moved it. Nothing of this transaction was "
                "committed; run it again to start from the new version."
            )
    return False
