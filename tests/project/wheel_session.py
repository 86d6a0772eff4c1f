"""What a user of the installed wheel does after the quick start, run by test_wheel.py with the
new environment's Python in a folder outside the repository: a media table and built-in models
over it, a bundled report to HTML, the magics and a widget. Each check fails loudly.

Usage: ``python wheel_session.py REPOSITORY``; prints one line per step.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pyarrow.compute as pc
from PIL import Image

import workbench as dc

PREFIX = Path(sys.prefix).resolve()


def inside_the_environment(file: str | None) -> bool:
    return file is not None and Path(file).resolve().is_relative_to(PREFIX)


def media_and_inference() -> None:
    folder = Path("media")
    folder.mkdir()
    Image.new("RGB", (64, 48), (200, 30, 30)).save(folder / "red.png")
    (folder / "note.txt").write_text("The parcel arrived two weeks late.", encoding="utf-8")
    dc.import_media(folder, "samples", namespace="media")
    assert all(m.ready for m in dc.models()), dc.models()
    dc.infer("samples", "image-facts", namespace="media", where=pc.field("kind") == "image")
    dc.infer("samples", "text-embedding", namespace="media", where=pc.field("kind") == "text")
    rows = dc.read("samples", "media", read_as="pandas").set_index("key")
    assert rows.loc["red.png", "dominant_colour"] == "#c81e1e", rows.loc["red.png"]
    assert len(rows.loc["note.txt", "embedding"]) == 384
    print("dc.infer: image-facts and text-embedding on a media table")


def report() -> None:
    result = dc.report("catalog_overview", progress=False)
    assert inside_the_environment(str(result.template)), result.template
    html = result.html.read_text(encoding="utf-8")
    assert "media.samples" in html and "billing" in html, "the report shows the catalog"
    print(f"dc.report: {result.html.name} from {result.template}")


def magics_and_widgets() -> None:
    from IPython.core.interactiveshell import InteractiveShell

    from workbench.widgets import CatalogBrowser

    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "workbench")
    shown = shell.run_line_magic("dc", "show media.samples --columns key")
    assert sorted(shown["key"]) == ["note.txt", "red.png"], shown
    browser = CatalogBrowser()
    assert "media.samples" in browser.table_list.options, browser.table_list.options
    print("%load_ext workbench, %dc show and the catalog browser")


def main(repository: str) -> None:
    assert inside_the_environment(dc.__file__), f"workbench imported from {dc.__file__}"
    media_and_inference()
    report()
    magics_and_widgets()
    from workbench.engines.spark.session import LOG_CONFIG

    assert inside_the_environment(str(LOG_CONFIG)) and LOG_CONFIG.is_file(), LOG_CONFIG
    loaded = {n: getattr(m, "__file__", None) for n, m in sys.modules.items()}
    ours = {n: f for n, f in loaded.items() if n == "workbench" or n.startswith("workbench.")}
    elsewhere = {n: f for n, f in ours.items() if f is not None and not inside_the_environment(f)}
    assert not elsewhere, f"workbench modules from outside the environment: {elsewhere}"
    on_path = {Path(p).resolve() for p in sys.path if p}
    assert Path(repository).resolve() not in on_path, sys.path
    print(f"{len(ours)} workbench modules, all from {PREFIX}")


if __name__ == "__main__":
    main(sys.argv[1])
