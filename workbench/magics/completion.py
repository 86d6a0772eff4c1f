"""Tab completion from the catalog, as an IPython (v2) context matcher: ``%dc`` commands and
their names, tables and columns in ``%%dc sql`` cells, and names inside the string arguments of
workbench calls. Where it completes it hides every other matcher (no Python names inside SQL);
elsewhere it stays out of the way. It never raises into the cell."""

from __future__ import annotations

import re
import shlex
from typing import Any

import workbench.api as dc
from workbench.frontend import names
from workbench.frontend.completion import Completions, complete_call, complete_sql
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
    "gallery",
    "infer",
}
MATCHER = "workbench.catalog"  # the matcher's identifier (IPCompleter.disable_matchers takes it)
_WORD = re.compile(r"\S*$")
_LINE_MAGIC = re.compile(r"^\s*%dc(\s.*)?$")


def completions(line: str, catalog: str | None = None) -> list[str]:
    """Candidates for the word being typed at the end of a ``%dc`` line (after the magic name)."""
    try:
        words = shlex.split(line)
    except ValueError:
        return []
    typing_new_word = line.endswith(" ") or not words
    current = "" if typing_new_word else words[-1]
    done = words if typing_new_word else words[:-1]
    if not done:
        return sorted(c for c in COMMANDS if c.startswith(current))
    return [c for c in _candidates(done, catalog) if c.startswith(current)]


def _candidates(done: list[str], catalog: str | None) -> list[str]:
    """Sorted names, except a diff's points: branches, then tags."""
    return _ordered(done, catalog) if done[0] == "diff" else sorted(_ordered(done, catalog))


def _ordered(done: list[str], catalog: str | None) -> list[str]:
    command = done[0]
    if command == "use":
        found = []
        for name in names.catalogs():
            other = names.listing(name)
            found += [name] + [f"{name}/{ns}" for ns in (other.namespaces if other else ())]
        return found
    listing = names.listing(catalog)
    if listing is None:
        return []
    if command == "ls":
        found = [*listing.namespaces, *(f"dc://{c}" for c in names.catalogs())]
        return found + [f"dc://{listing.catalog}/{ns}" for ns in listing.namespaces]
    if command == "branch":
        return _branch_words(done[1:], listing)
    if command == "diff" and len(done) > 1:  # the points: branches, then tags
        return [*listing.branches, *listing.tags]
    if command in TABLE_COMMANDS and len(done) == 1:
        return list(listing.tables)
    return []


def _branch_words(done: list[str], listing: names.CatalogNames) -> list[str]:
    """Candidates after ``%dc branch``: an action, then a branch name (or, after ``--from``,
    one of main's tags)."""
    if not done:
        return list(ACTIONS["branch"])
    if done[-1] == "--from":
        return list(listing.tags)
    if len(done) == 1 and done[0] in ("use", "drop", "merge", "diff"):
        found = list(listing.branches)
        return found if done[0] == "use" else found[1:]  # main is first; it is neither
    return []


def catalog_completions(
    text: str, offset: int, user_ns: dict, catalog: str | None = None
) -> Completions | None:
    """What to offer at ``offset`` of cell ``text`` (None: not a place this completes);
    ``catalog`` is the one ``%dc use`` chose."""
    before = text[:offset]
    line_start = before.rfind("\n") + 1
    first_line = text.split("\n", 1)[0]
    if first_line.startswith("%%"):
        if not first_line.startswith("%%dc"):
            return None  # another cell magic's body
        if line_start == 0:
            return _magic_line(before[len("%%dc") :], catalog)
        if first_line.split()[1:2] == ["sql"]:
            body_start = len(first_line) + 1
            return complete_sql(text[body_start:], offset - body_start, catalog)
    current = before[line_start:]
    if _LINE_MAGIC.match(current):
        return _magic_line(current.split("%dc", 1)[1], catalog)
    return complete_call(before, lambda dotted: _resolve(dotted, user_ns))


def _magic_line(line: str, catalog: str | None) -> Completions:
    fragment = _WORD.search(line).group(0)  # type: ignore[union-attr]
    return Completions(fragment, tuple((c, "dc") for c in completions(line.lstrip(), catalog)))


def _resolve(dotted: str, user_ns: dict) -> Any:
    """The object a dotted name in the notebook names, looked up without running code: only
    modules' and table handles' attributes are read."""
    first, *rest = dotted.split(".")
    found = user_ns.get(first)
    for attribute in rest:
        if not (_is_module(found) or isinstance(found, (dc.TableHandle, dc.TableMap))):
            return None
        found = getattr(found, attribute, None)
    return found


def _is_module(value: Any) -> bool:
    return type(value).__name__ == "module"


def matcher_for(shell: Any, catalog: Any) -> Any:
    """An IPython context matcher over ``shell``'s namespace; ``catalog()`` gives the catalog
    ``%dc use`` chose."""
    from IPython.core.completer import SimpleCompletion, context_matcher

    @context_matcher(identifier=MATCHER)
    def workbench_matcher(context: Any) -> dict:
        lines = context.full_text.split("\n")
        offset = sum(len(line) + 1 for line in lines[: context.cursor_line])
        offset += context.cursor_position
        try:
            found = catalog_completions(context.full_text, offset, shell.user_ns, catalog())
        except Exception:  # completion never raises into the user's cell
            found = None
        if found is None:
            return {"completions": [], "suppress": False}
        items = [SimpleCompletion(text, type=kind) for text, kind in found.items]
        # Nothing to offer still hides the others (IPython suppresses only with a candidate):
        # the text typed, which changes nothing when chosen.
        items = items or [SimpleCompletion(found.fragment, type="")]
        return {
            "completions": items,
            "matched_fragment": found.fragment,
            "suppress": True,
            "ordered": True,
        }

    return workbench_matcher
