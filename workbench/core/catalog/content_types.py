"""The content types a table accepts (DeltaCAT's ``content_types=``): parsed, kept in the Delta
table's configuration so they travel with the table, and checked on every write."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from workbench.core.base.errors import ContentTypeValidationError, InvalidArgumentError
from workbench.core.base.types import ContentType
from workbench.core.storage.formats import content_type_of

CONTENT_TYPES_PROPERTY = "workbench.contentTypes"  # Delta configuration key: a JSON list of names


def parse_content_types(value: Iterable[Any] | None) -> tuple[ContentType, ...] | None:
    """``content_types=`` as a tuple without repeats (None, or an empty list: any type)."""
    if value is None:
        return None
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise InvalidArgumentError(
            f"content_types={value!r} must be a list of dc.ContentType, e.g. "
            "content_types=[dc.ContentType.PARQUET]."
        )
    parsed = tuple(dict.fromkeys(content_type_of(v) for v in value))
    return parsed or None


def encode_content_types(accepted: tuple[ContentType, ...] | None) -> dict[str, str]:
    """The configuration entry recording ``accepted`` ({} when any type is accepted)."""
    if accepted is None:
        return {}
    return {CONTENT_TYPES_PROPERTY: json.dumps([ct.name for ct in accepted])}


def accepted_content_types(configuration: Mapping[str, str]) -> tuple[ContentType, ...] | None:
    """The content types a table's configuration accepts (None: any)."""
    stored = configuration.get(CONTENT_TYPES_PROPERTY)
    return None if stored is None else tuple(ContentType[name] for name in json.loads(stored))


def check_content_type(
    content_type: ContentType, accepted: tuple[ContentType, ...] | None, table: str
) -> None:
    """Refuse a write whose content type the table does not accept."""
    if accepted is None or content_type in accepted:
        return
    names = ", ".join(ct.name for ct in accepted)
    raise ContentTypeValidationError(
        f"Table {table!r} accepts content types [{names}] only, so a write with content_type="
        f"{content_type.name} was refused and the table is unchanged. Write with one of them "
        f"(content_type=dc.ContentType.{accepted[0].name}), or list {content_type.name} in "
        "content_types= when the table is created."
    )
