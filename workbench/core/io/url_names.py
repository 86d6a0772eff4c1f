"""``dc://catalog[/namespace[/table]][/*|/**]`` URLs: their parts, checked (DeltaCAT's
``DeltaCatUrl`` among them); ``urls`` does what they name."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.core.base.errors import InvalidNameError, InvalidUrlError, brief
from workbench.core.base.names import validate_name

SCHEME = "dc://"
WILDCARDS = ("*", "**")


@dataclass(frozen=True)
class CatalogUrl:
    """A parsed ``dc://`` URL: catalog, optional namespace and table, optional trailing wildcard."""

    catalog: str
    namespace: str | None = None
    table: str | None = None
    wildcard: str | None = None

    @property
    def path(self) -> list[str]:
        """The namespace and table parts that are present."""
        return [p for p in (self.namespace, self.table) if p is not None]


def parse_url(url: str) -> CatalogUrl:
    """Parse ``dc://catalog[/namespace[/table]][/*|/**]``, or raise ``InvalidUrlError``."""
    if not isinstance(url, str) or not url.startswith(SCHEME):
        raise InvalidUrlError(
            f"{brief(repr(url), 60) if isinstance(url, str) else 'A ' + type(url).__name__} is "
            "not a workbench URL; write dc://<catalog>[/<namespace>[/<table>]] (dc.put takes "
            "the URL first, then the data)."
        )
    parts = url[len(SCHEME) :].rstrip("/").split("/")
    wildcard = parts.pop() if parts and parts[-1] in WILDCARDS else None
    if not parts or not parts[0] or len(parts) > 3 or any(p in WILDCARDS for p in parts):
        raise InvalidUrlError(
            f"{url!r} is malformed: expected dc://<catalog>[/<namespace>[/<table>]] with an "
            "optional trailing /* or /**."
        )
    try:
        names = [
            validate_name(kind, p)
            for kind, p in zip(("catalog", "namespace", "table"), parts, strict=False)
        ]
    except InvalidNameError as e:
        raise InvalidUrlError(f"{url!r} has an invalid part: {e}") from None
    if wildcard and len(names) == 3:
        raise InvalidUrlError(
            f"{url!r}: a wildcard can follow a catalog or namespace, not a table."
        )
    return CatalogUrl(*names, wildcard=wildcard) if len(names) < 3 else CatalogUrl(*names)


class DeltaCatUrl(str):
    """A ``dc://`` URL under DeltaCAT's name: the URL string itself (so it goes wherever a URL
    string does), checked when made, with its parts as attributes."""

    def __new__(cls, url: str) -> DeltaCatUrl:
        made = super().__new__(cls, url)
        made._parts = parse_url(url)
        return made

    @property
    def url(self) -> str:
        """The URL as a plain string."""
        return str(self)

    @property
    def catalog_name(self) -> str:
        """The catalog the URL names."""
        return self._parts.catalog

    @property
    def namespace(self) -> str | None:
        """The namespace the URL names, if any."""
        return self._parts.namespace

    @property
    def table(self) -> str | None:
        """The table the URL names, if any."""
        return self._parts.table
