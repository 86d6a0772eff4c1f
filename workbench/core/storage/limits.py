"""How long a catalog's object-store requests may wait and retry, in each library's form.

Left to themselves, object_store (under delta-rs and obstore) retries a refused connection for up
to three minutes and Daft 25 times, so an endpoint that is down would hang every call. Within
these defaults a request that cannot connect, or gets no byte for ``read_timeout``, is retried
every half second to a second for ``retry_timeout`` (10 s): an outage of a few seconds is ridden
out, a store that is gone fails the request within about that budget. A store that answers
slowly but steadily keeps each library's full per-request ``timeout``. The catalog's storage
options override them, by delta-rs's names (``max_retries``, ``retry_timeout``,
``connect_timeout``, ``read_timeout``, ``timeout``, ``backoff_config.init_backoff``, ...).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from workbench.core.base.errors import InvalidArgumentError

TIMEOUT = "timeout"
READ_TIMEOUT = "read_timeout"
INIT_BACKOFF = "backoff_config.init_backoff"
MAX_BACKOFF = "backoff_config.max_backoff"
BACKOFF_BASE = "backoff_config.base"
DEFAULTS = {
    "max_retries": "20",  # a cap only: with these backoffs the time budget ends retries first
    "retry_timeout": "10s",
    "connect_timeout": "3s",
    READ_TIMEOUT: "5s",
    INIT_BACKOFF: "0.5s",
    MAX_BACKOFF: "1s",
}
KEYS = frozenset({*DEFAULTS, TIMEOUT, BACKOFF_BASE})
AWS_SDK_RETRIES = 4  # pyarrow's and Daft's retries (AWS SDKs') double their wait, unbounded
_SPAN = re.compile(r"(\d+(?:\.\d+)?)\s*([a-zA-Z]*)")
_UNIT_SECONDS = {
    "ns": 1e-9,
    "nsec": 1e-9,
    "us": 1e-6,
    "usec": 1e-6,
    "ms": 1e-3,
    "msec": 1e-3,
    "": 1.0,
    "s": 1.0,
    "sec": 1.0,
    "second": 1.0,
    "seconds": 1.0,
    "m": 60.0,
    "min": 60.0,
    "minute": 60.0,
    "minutes": 60.0,
    "h": 3600.0,
    "hr": 3600.0,
    "hour": 3600.0,
    "hours": 3600.0,
}


def with_defaults(options: Mapping[str, str]) -> dict[str, str]:
    """``options`` with the default limits added where they name none (any case)."""
    given = {key.lower() for key in options}
    return {**{k: v for k, v in DEFAULTS.items() if k not in given}, **options}


@dataclass(frozen=True)
class Limits:
    """The retry and timeout settings of one catalog's object store."""

    max_retries: int
    retry_timeout: timedelta
    connect_timeout: timedelta
    read_timeout: timedelta  # with no byte for this long a request is retried
    timeout: timedelta | None  # per request; None keeps each library's own
    backoff: dict[str, Any]  # obstore's BackoffConfig

    @classmethod
    def of(cls, options: Mapping[str, str]) -> Limits:
        """The limits the options set, over the defaults."""
        chosen = {key.lower(): value for key, value in with_defaults(options).items()}
        backoff: dict[str, Any] = {
            name: duration(key, chosen[key])
            for key, name in ((INIT_BACKOFF, "init_backoff"), (MAX_BACKOFF, "max_backoff"))
        }
        if BACKOFF_BASE in chosen:
            backoff["base"] = _number(BACKOFF_BASE, chosen[BACKOFF_BASE])
        timeout = chosen.get(TIMEOUT)
        return cls(
            max_retries=int(_number("max_retries", chosen["max_retries"], whole=True)),
            retry_timeout=duration("retry_timeout", chosen["retry_timeout"]),
            connect_timeout=duration("connect_timeout", chosen["connect_timeout"]),
            read_timeout=duration(READ_TIMEOUT, chosen[READ_TIMEOUT]),
            timeout=None if timeout is None else duration(TIMEOUT, timeout),
            backoff=backoff,
        )

    def obstore_retry(self) -> dict[str, Any]:
        """obstore's ``retry_config``."""
        return {
            "max_retries": self.max_retries,
            "retry_timeout": self.retry_timeout,
            "backoff": self.backoff,
        }

    def obstore_client(self) -> dict[str, Any]:
        """obstore's ``client_options`` for the timeouts."""
        client = {"connect_timeout": self.connect_timeout, "read_timeout": self.read_timeout}
        return client if self.timeout is None else {**client, "timeout": self.timeout}

    @property
    def aws_sdk_attempts(self) -> int:
        """Attempts a request gets from pyarrow and Daft, whose retries (the AWS SDKs') have no
        time limit and wait twice as long each time: ``max_retries``, but at most a few."""
        return min(self.max_retries, AWS_SDK_RETRIES) + 1

    def daft_s3(self) -> dict[str, int]:
        """Daft's ``S3Config`` arguments for the same limits."""
        return {
            "num_tries": self.aws_sdk_attempts,
            "connect_timeout_ms": _ms(self.connect_timeout),
            "read_timeout_ms": _ms(self.read_timeout),  # Daft's: until the first byte
            "retry_initial_backoff_ms": _ms(self.backoff["init_backoff"]),
        }


def _ms(span: timedelta) -> int:
    return int(span.total_seconds() * 1000)


def duration(option: str, text: str) -> timedelta:
    """A duration given as delta-rs takes it (``"10s"``, ``"500ms"``, ``"1min 30s"``; a bare
    number is seconds)."""
    spans = list(_SPAN.finditer(text))
    rest = _SPAN.sub("", text).strip()
    if not spans or rest or any(s.group(2).lower() not in _UNIT_SECONDS for s in spans):
        raise InvalidArgumentError(
            f"Storage option {option}={text!r} is not a duration; write it like '10s', "
            "'500ms' or '2min'."
        )
    seconds = sum(float(s.group(1)) * _UNIT_SECONDS[s.group(2).lower()] for s in spans)
    return timedelta(seconds=seconds)


def _number(option: str, text: str, whole: bool = False) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if value < 0 or (whole and not value.is_integer()):
        kind = "a whole number" if whole else "a number"
        raise InvalidArgumentError(
            f"Storage option {option}={text!r} must be {kind} of 0 or more, e.g. '3'."
        )
    return value
