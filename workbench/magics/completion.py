"""Tab completion for ``%dc``: commands, then catalogs, namespaces and tables."""

from __future__ import annotations

import shlex

from workbench.magics.parser import COMMANDS

TABLE_COMMANDS = {
    "show",
    "describe",
    "history",
    "diff",
    "write",
    "merge",
    "delete",
    "drop",
    "optimize",
    "timetravel",
}


def completions(line: str) -> list[str]:
    """Candidates for the word being typed at the end of a ``%dc`` line (after the magic name)."""
    import workbench.api as dc
    from workbench.core.catalog.registry import catalog_name

    try:
        words = shlex.split(line)
    except ValueError:
        return []
    typing_new_word = line.endswith(" ") or not words
    current = "" if typing_new_word else words[-1]
    done = words if typing_new_word else words[:-1]
    if not done:
        return sorted(c for c in COMMANDS if c.startswith(current))
    command = done[0]
    if command == "use":
        names = []
        for name in dc.list_catalogs():
            names.append(name)
            names += [f"{name}/{ns.name}" for ns in dc.list_namespaces(name)]
        return sorted(n for n in names if n.startswith(current))
    if command == "ls":
        default = catalog_name(dc.get_catalog())
        names = [ns.name for ns in dc.list_namespaces()]
        names += [f"dc://{c}" for c in dc.list_catalogs()]
        names += [f"dc://{default}/{ns}" for ns in names if not ns.startswith("dc://")]
        return sorted(n for n in names if n.startswith(current))
    if command in TABLE_COMMANDS:
        tables = [
            f"{ns.name}.{t.name}" for ns in dc.list_namespaces() for t in dc.list_tables(ns.name)
        ]
        return sorted(t for t in tables if t.startswith(current))
    return []
