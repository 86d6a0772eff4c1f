"""Tab completion from the catalog, as an IPython (v2) context matcher: ``%dc`` commands and
their names, tables and columns in ``%%dc sql`` cells, and names inside the string arguments of
workbench calls. Where it completes it hides every other matcher (no Python names inside SQL);
elsewhere it stays out of the way. It never raises into the cell."""

from __future__ import annotations

import functools
import re
import shlex
from typing import Any

import workbench.api as dc
from workbench.frontend import names
from workbench.frontend.completion import (
    BRANCH,
    CATALOG,
    NAMESPACE,
    SCHEME,
    TABLE,
    TAG,
    Completions,
    complete_call,
    complete_key,
    complete_sql,
    ranked,
)
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
NO_MATCH = "no match"  # the kind of the candidate that stands for none
MATCHER = "workbench.catalog"  # the matcher's identifier (IPCompleter.disable_matchers takes it)
_WORD = re.compile(r"\S*$")
_LINE_MAGIC = re.compile(r"^\s*%dc(\s.*)?$")


COMMAND, ACTION = "%dc command", "%dc branch action"  # the kinds of a %dc line's own words
Items = list[tuple[str, str]]


def completions(line: str, catalog: str | None = None) -> list[str]:
    """Candidates for the word being typed at the end of a ``%dc`` line (after the magic name)."""
    return [text for text, _ in completion_items(line, catalog)]


def completion_items(line: str, catalog: str | None = None) -> tuple[tuple[str, str], ...]:
    """(text, kind) candidates for the word being typed at the end of a ``%dc`` line, matched in
    any case and fuzzily, best first (``ranked``)."""
    try:
        words = shlex.split(line)
    except ValueError:
        return ()
    typing_new_word = line.endswith(" ") or not words
    current = "" if typing_new_word else words[-1]
    done = words if typing_new_word else words[:-1]
    if not done:
        return ranked(current, ((c, COMMAND) for c in sorted(COMMANDS)))
    return ranked(current, _candidates(done, catalog))


def _candidates(done: list[str], catalog: str | None) -> Items:
    """Sorted names, except a diff's points: branches, then tags."""
    return _ordered(done, catalog) if done[0] == "diff" else sorted(_ordered(done, catalog))


def _ordered(done: list[str], catalog: str | None) -> Items:
    command = done[0]
    if command == "use":
        found: Items = []
        for name in names.catalogs():
            other = names.listing(name)
            found.append((name, CATALOG))
            found += [(f"{name}/{ns}", NAMESPACE) for ns in (other.namespaces if other else ())]
        return found
    listing = names.listing(catalog)
    if listing is None:
        return []
    if command == "ls":
        found = [(ns, NAMESPACE) for ns in listing.namespaces]
        found += [(f"{SCHEME}{c}", CATALOG) for c in names.catalogs()]
        return found + [(f"{SCHEME}{listing.catalog}/{ns}", NAMESPACE) for ns in listing.namespaces]
    if command == "branch":
        return _branch_words(done[1:], listing)
    if command == "diff" and len(done) > 1:  # the points: branches, then tags
        return [*((b, BRANCH) for b in listing.branches), *((t, TAG) for t in listing.tags)]
    if command in TABLE_COMMANDS and len(done) == 1:
        return [(t, TABLE) for t in listing.tables]
    return []


def _branch_words(done: list[str], listing: names.CatalogNames) -> Items:
    """Candidates after ``%dc branch``: an action, then a branch name (or, after ``--from``,
    one of main's tags)."""
    if not done:
        return [(action, ACTION) for action in ACTIONS["branch"]]
    if done[-1] == "--from":
        return [(tag, TAG) for tag in listing.tags]
    if len(done) == 1 and done[0] in ("use", "drop", "merge", "diff"):
        found = [(b, BRANCH) for b in listing.branches]
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
    resolve = functools.partial(_resolve, user_ns=user_ns)
    return complete_key(before, resolve) or complete_call(before, resolve)


def _magic_line(line: str, catalog: str | None) -> Completions:
    fragment = _WORD.search(line).group(0)  # type: ignore[union-attr]
    return Completions(fragment, completion_items(line.lstrip(), catalog))


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
        # the text typed, which changes nothing when chosen (JupyterLab's extension drops it).
        items = items or [SimpleCompletion(found.fragment, type=NO_MATCH)]
        return {
            "completions": items,
            "matched_fragment": found.fragment,
            "suppress": True,
            "ordered": True,
        }

    return workbench_matcher
