"""The report command's arguments, one definition for ``python -m workbench report`` and
``%dc report``: the notebook, ``-p key value`` parameters and ``-o`` the HTML file."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence
from typing import Any

# (flags, argparse options) of each argument; both commands add their own --as-of
REPORT_ARGUMENTS: list[tuple[tuple[str, ...], dict[str, Any]]] = [
    (("template",), {"help": "a notebook path or a bundled template's name"}),
    (
        ("-p", "--parameter"),
        {
            "nargs": 2,
            "action": "append",
            "default": [],
            "metavar": ("KEY", "VALUE"),
            "help": "a parameter of the notebook; repeat for several",
        },
    ),
    (
        ("-o", "--output"),
        {"dest": "html", "help": "the HTML file (default reports/<template>.html)"},
    ),
    (("--branch",), {"help": "the branch the report reads (default: the current one)"}),
]


def parse_parameters(pairs: Iterable[Sequence[str]]) -> dict[str, Any]:
    """``-p key value`` pairs as a dict; a value that reads as a Python literal (1, 2.5, True,
    None, [1, 2]) is that value, anything else is the text."""
    values: dict[str, Any] = {}
    for key, text in pairs:
        try:
            values[key] = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            values[key] = text
    return values
