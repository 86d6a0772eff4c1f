"""The ``%dc`` / ``%%dc`` magics: a small command language over the public ``workbench`` API.

Loaded by ``%load_ext workbench``. Magics only parse, call the API and display results.
"""

from __future__ import annotations

from typing import Any

from IPython.core.magic import Magics, line_cell_magic, magics_class

from workbench.api import WorkbenchError
from workbench.frontend.names import warm_up
from workbench.magics.commands import Commands, Message, Session
from workbench.magics.completion import MATCHER, matcher_for
from workbench.magics.parser import HelpRequested, parse

__all__ = ["WorkbenchMagics", "load"]


@magics_class
class WorkbenchMagics(Magics):
    """``%dc <command> ...`` and ``%%dc <command> ...`` with the cell as input."""

    def __init__(self, shell: Any):
        super().__init__(shell)
        self.session = Session()
        self.commands = Commands(shell, self.session)

    @line_cell_magic
    def dc(self, line: str, cell: str | None = None) -> Any:
        """Run a workbench command; ``%dc help`` lists them."""
        from IPython.display import display

        debug = "--debug" in line.split()
        try:
            args = parse(line)
        except HelpRequested as shown:
            return Message(str(shown))
        except WorkbenchError as error:
            if debug:
                raise
            display(Message(f"{type(error).__name__}: {error}", error=True))
            return None
        try:
            result = self.commands.run(args, cell)
        except WorkbenchError as error:
            if args.debug:
                raise
            display(Message(f"{type(error).__name__}: {error}", error=True))
            return None
        if args.output:
            self.shell.user_ns[args.output] = result
        return result


def load(ipython: Any) -> None:
    """Register the magics and the catalog completer on an IPython shell (once)."""
    ipython.register_magics(WorkbenchMagics)
    magics = ipython.magics_manager.registry["WorkbenchMagics"]
    matchers = ipython.Completer.custom_matchers
    matchers[:] = [m for m in matchers if getattr(m, "matcher_identifier", "") != MATCHER]
    matchers.append(matcher_for(ipython, lambda: magics.session.catalog))
    warm_up("workbench.widgets.sidebar", "ipylab")  # the sidebar's, for %dc sidebar
