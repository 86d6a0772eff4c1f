"""The package's layers: the import-linter contracts in pyproject.toml hold, and no import
cycle (function-level and type-only imports included) spans more than two modules."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_layer_contracts_hold():
    # In a process of its own: import-linter configures logging, which would silence others.
    checker = Path(sys.executable).parent / "lint-imports"
    done = subprocess.run(
        [str(checker), "--no-cache", "--config", str(ROOT / "pyproject.toml")],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout[-3000:]


def import_cycles() -> list[list[str]]:
    """Strongly connected components of workbench's import graph with more than one module
    (every import counts: function-level and type-only ones, as in the contracts)."""
    import grimp

    graph = grimp.build_graph("workbench", exclude_type_checking_imports=False, cache_dir=None)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:  # Tarjan's algorithm
        index[module] = low[module] = len(index)
        stack.append(module)
        for imported in graph.find_modules_directly_imported_by(module):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found


def test_no_import_cycle_spans_more_than_two_modules():
    assert [c for c in import_cycles() if len(c) > 2] == []
