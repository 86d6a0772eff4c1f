"""The report command's arguments, one definition for ``python -m workbench report`` and
``%dc report``: the notebook, ``-p key value`` parameters and ``-o`` the HTML file."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any

from workbench.reports.notebooks import read_notebook, resolve_template
from workbench.reports.parameters import declared_parameters, typed_text

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


def parse_parameters(
    pairs: Iterable[Sequence[str]], template: str | os.PathLike[str] | None = None
) -> dict[str, Any]:
    """``-p key value`` pairs as a dict, each value of the type ``template``'s parameters cell
    declares for it (by annotation or default: ``-p table 2024`` stays text for a text
    parameter); where it declares none, a value that reads as a Python literal (1, 2.5, True,
    None, [1, 2]) is that value, anything else is the text."""
    declared = declared_parameters(read_notebook(resolve_template(template))) if template else None
    return {key: typed_text((declared or {}).get(key), key, text) for key, text in pairs}
