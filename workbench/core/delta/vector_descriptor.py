"""How an ``add`` action names a file's deletion vector (storage type, where its bytes are,
size, cardinality) and the Z85 text the protocol encodes vector ids and inline vectors in."""

from __future__ import annotations

import struct
import uuid
from dataclasses import dataclass
from typing import Any

from workbench.core.base.errors import DeletionVectorError

_Z85 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"
_Z85_VALUE = {c: i for i, c in enumerate(_Z85)}


def z85_encode(data: bytes) -> str:
    """Z85 text of ``data``, zero-padded to whole 4-byte words (a reader cuts the padding
    off by the size it is told), as the protocol encodes vector ids and inline vectors."""
    data += bytes(-len(data) % 4)
    out = []
    for (word,) in struct.iter_unpack(">I", data):
        chars = []
        for _ in range(5):
            word, digit = divmod(word, 85)
            chars.append(_Z85[digit])
        out.append("".join(reversed(chars)))
    return "".join(out)


def z85_decode(text: str) -> bytes:
    """The bytes a Z85 text encodes."""
    if len(text) % 5:
        raise DeletionVectorError(f"{text!r} is not Z85 text (its length is not a multiple of 5)")
    words = []
    for i in range(0, len(text), 5):
        word = 0
        for c in text[i : i + 5]:
            if c not in _Z85_VALUE:
                raise DeletionVectorError(f"{text!r} is not Z85 text ({c!r} is not a Z85 digit)")
            word = word * 85 + _Z85_VALUE[c]
        if word > 0xFFFFFFFF:
            raise DeletionVectorError(f"{text!r} is not Z85 text (a group exceeds 32 bits)")
        words.append(word)
    return struct.pack(f">{len(words)}I", *words)


@dataclass(frozen=True)
class Descriptor:
    """The deletion vector of one data file, as an ``add`` action records it."""

    storage_type: str
    path_or_inline: str
    offset: int | None
    size: int
    cardinality: int

    @classmethod
    def from_action(cls, action: dict[str, Any]) -> Descriptor:
        """The descriptor of an ``add`` action's ``deletionVector`` field."""
        return cls(
            action["storageType"],
            action["pathOrInlineDv"],
            action.get("offset"),
            int(action["sizeInBytes"]),
            int(action["cardinality"]),
        )

    def to_action(self) -> dict[str, Any]:
        """The ``deletionVector`` field of an ``add`` action."""
        action: dict[str, Any] = {
            "storageType": self.storage_type,
            "pathOrInlineDv": self.path_or_inline,
            "sizeInBytes": self.size,
            "cardinality": self.cardinality,
        }
        if self.offset is not None:
            action["offset"] = self.offset
        return action

    @property
    def inline(self) -> bool:
        """Whether the vector's bytes are in the descriptor (no vector file)."""
        return self.storage_type == "i"

    def file_name(self) -> str:
        """The vector file's path relative to the table folder (storage type ``u``)."""
        if self.storage_type != "u":
            raise DeletionVectorError(
                f"Deletion vectors stored as {self.storage_type!r} are not supported; only "
                "vectors beside the table ('u') and inline ones ('i') are."
            )
        prefix, encoded = self.path_or_inline[:-20], self.path_or_inline[-20:]
        name = f"deletion_vector_{uuid.UUID(bytes=z85_decode(encoded))}.bin"
        return f"{prefix}/{name}" if prefix else name
