"""What tells one catalog's storage from another's, and what of its options may be shown.

A catalog is its root *and* its storage options (endpoint, credentials): two catalogs on one
root with different options reach different stores, or the same store as different users, so
everything a process opens or remembers for a catalog is keyed by its identity, never by its
root alone. The options enter an identity as a digest salted anew in every process, so a key
that ends up printed or logged says nothing of a secret. Option values that are credentials
are masked wherever options are shown, and removed from any text that carries them."""

from __future__ import annotations

import hmac
import json
import secrets
from collections.abc import Mapping

_SALT = secrets.token_bytes(16)  # this process's: identities are never compared across processes
SECRET_WORDS = ("secret", "token", "password", "key", "credential", "sas", "signature")
MASK = "***"


def options_digest(options: Mapping[str, str] | None) -> str:
    """A short digest of storage options, equal for equal options within this process."""
    text = json.dumps(sorted((options or {}).items()))
    return hmac.new(_SALT, text.encode(), "sha256").hexdigest()[:16]


def store_identity(root: str, options: Mapping[str, str] | None) -> str:
    """The identity of the store a root reaches with ``options``: ``<root>#<digest>``."""
    return f"{root.rstrip('/') or '/'}#{options_digest(options)}"


def identity_root(identity: str) -> str:
    """The root of an identity ``store_identity`` made."""
    return identity.rsplit("#", 1)[0]


def is_secret(name: str) -> bool:
    """True for a storage option whose value is a credential (a key, secret, token, ...)."""
    lowered = name.lower()
    return any(word in lowered for word in SECRET_WORDS)


def masked(options: Mapping[str, str]) -> dict[str, str]:
    """``options`` with every credential's value replaced by ``***``, for showing them."""
    return {k: MASK if is_secret(k) else v for k, v in options.items()}


def redacted(text: str, options: Mapping[str, str] | None) -> str:
    """``text`` with every credential value of ``options`` in it replaced by ``***``."""
    for name, value in (options or {}).items():
        if value and is_secret(name):
            text = text.replace(value, MASK)
    return text


def made_from(key: str, identity: str) -> bool:
    """True for a cache key made from ``identity``: the identity itself, or a line of the
    catalog (``<identity>/<branch id>``)."""
    return key == identity or key.startswith(identity + "/")
