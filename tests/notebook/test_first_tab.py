"""The first Tab of a new kernel lists the catalog's tables: a kernel that has just run
``%load_ext workbench`` and opened a catalog, asked to complete right away, ten kernels in a
row (the first listing once took longer than completion waits, so the first Tab gave nothing)."""

from __future__ import annotations

import pandas as pd
import pytest

import workbench as dc

pytestmark = [pytest.mark.kernel, pytest.mark.slow]
KERNELS = 10


@pytest.fixture
def root(tmp_path) -> str:
    where = str(tmp_path / "catalog")
    dc.init_local(where)
    dc.write(pd.DataFrame({"id": [1]}), "orders", "sales", auto_create_namespace=True)
    dc.write(pd.DataFrame({"id": [1]}), "payroll", "hr", auto_create_namespace=True)
    return where


def _first_tab(root: str, text: str) -> list[str]:
    """What a new kernel completes at the end of ``text`` right after opening ``root``."""
    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name="python3")
    try:
        setup = f"import workbench as dc\n%load_ext workbench\ndc.init_local({root!r})"
        reply = client.execute_interactive(setup, timeout=60)
        assert reply["content"]["status"] == "ok", reply["content"]
        msg_id = client.complete(text, len(text))
        reply = client.get_shell_msg(timeout=30)
        assert reply["parent_header"]["msg_id"] == msg_id
        return reply["content"]["matches"]
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def test_the_first_tab_of_every_new_kernel_lists_tables(root):
    found = [_first_tab(root, "%%dc sql\nSELECT * FROM ") for _ in range(KERNELS)]
    listed = sum(matches == ["hr.payroll", "sales.orders"] for matches in found)
    assert listed == KERNELS, found
