"""Tab completion for ``%dc``: commands, then catalogs, namespaces and tables."""

from __future__ import annotations

import shlex

from workbench.magics.parser import ACTIONS, COMMANDS

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
    if command == "branch":
        return sorted(n for n in _branch_words(done[1:]) if n.startswith(current))
    if command == "diff" and len(done) > 1:  # the points: branches, then tags
        points = [b.name for b in dc.branches()] + sorted(dc.tags())
        return [p for p in points if p.startswith(current)]
    if command in TABLE_COMMANDS:
        tables = [
            f"{ns.name}.{t.name}" for ns in dc.list_namespaces() for t in dc.list_tables(ns.name)
        ]
        return sorted(t for t in tables if t.startswith(current))
    return []


def _branch_words(done: list[str]) -> list[str]:
    """Candidates after ``%dc branch``: an action, then a branch name (or, after ``--from``,
    one of main's tags)."""
    import workbench.api as dc

    if not done:
        return list(ACTIONS["branch"])
    if done[-1] == "--from":
        with dc.branch("main"):
            return list(dc.tags())
    if len(done) == 1 and done[0] in ("use", "drop", "merge", "diff"):
        names = [b.name for b in dc.branches()]
        return names if done[0] == "use" else names[1:]  # main is first; it is neither
    return []
