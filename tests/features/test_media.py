"""Media tables on real files and real Delta tables: import, re-import, changes, pruning,
content types from the bytes, facts, dc.get, dc.show, the %dc import magic and S3."""

from __future__ import annotations

import hashlib
import os
import shutil
import wave
from pathlib import Path

import pyarrow.compute as pc
import pytest
from PIL import Image

import workbench as dc
from tests.conftest import tree_digest
from workbench.core.media.columns import URI_PROPERTY, arrow_schema
from workbench.core.storage.fetch import read_many

MEDIA = Path(__file__).resolve().parents[2] / "media"


@pytest.fixture
def folder(media_folder: Path) -> Path:
    return media_folder


def rows(table: str = "files", namespace: str = "media") -> dict[str, dict]:
    return {r["key"]: r for r in dc.read(table, namespace, read_as="pyarrow").to_pylist()}


def log_length() -> int:
    return dc.transactions(read_as="pyarrow").num_rows


def test_import_whole_sample_folder(catalog):
    result = dc.import_media(MEDIA, "files", namespace="media")
    assert result.added == len(list(MEDIA.rglob("*.*"))) and result.updated == result.removed == 0
    info = dc.get_table("files", "media")
    assert info.properties[URI_PROPERTY] == "uri" and info.merge_keys == ["key"]
    assert info.schema.arrow.equals(arrow_schema())
    kinds = [r["kind"] for r in rows().values()]
    assert kinds.count("image") == 50 and kinds.count("audio") == 10
    assert kinds.count("text") >= 50  # texts/, plus README.md and generate.py
    repeat = dc.import_media(MEDIA, "files", namespace="media")
    assert (repeat.added, repeat.updated, repeat.unchanged, repeat.version) == (
        0,
        0,
        result.added,
        None,
    )


def test_reimport_change_add_delete_and_prune(catalog, folder):
    first = dc.import_media(folder, "files", namespace="media")
    assert (first.added, first.version) == (8, 0)
    version, log = dc.get_table("files", "media").version, log_length()
    digest = tree_digest(catalog.root)

    again = dc.import_media(folder, "files", namespace="media")
    assert (again.unchanged, again.version) == (8, None)
    assert dc.get_table("files", "media").version == version and log_length() == log
    assert tree_digest(catalog.root) == digest

    text = folder / "texts" / "ticket_03.txt"
    text.write_text("Refund please, the parcel never came.\n")
    before = rows()
    changed = dc.import_media(folder, "files", namespace="media")
    assert (changed.updated, changed.added, changed.unchanged) == (1, 0, 7)
    after = rows()
    assert after["texts/ticket_03.txt"]["text_length"] == 38
    assert after["texts/ticket_03.txt"]["sha256"] == hashlib.sha256(text.read_bytes()).hexdigest()
    assert {k: v for k, v in after.items() if k != "texts/ticket_03.txt"} == {
        k: v for k, v in before.items() if k != "texts/ticket_03.txt"
    }

    shutil.copy2(MEDIA / "images" / "shapes_01.png", folder / "new.png")
    (folder / "audio" / "silence.wav").unlink()
    kept = dc.import_media(folder, "files", namespace="media")
    assert (kept.added, kept.removed, kept.kept_missing) == (1, 0, 1)
    assert "audio/silence.wav" in rows() and "new.png" in rows()
    pruned = dc.import_media(folder, "files", namespace="media", prune=True)
    assert (pruned.removed, pruned.unchanged) == (1, 8)
    assert "audio/silence.wav" not in rows() and len(rows()) == 8
    assert "removed=1" in repr(pruned) and "<table>" in pruned._repr_html_()


def test_one_transaction_per_import_and_flat(catalog, folder):
    dc.import_media(folder, "files", namespace="media")
    log = log_length()
    (folder / "loose.txt").write_text("Just one file at the top.\n")
    (folder / ".hidden.txt").write_text("skipped\n")
    (folder / "texts" / "ticket_03.txt").unlink()
    both = dc.import_media(folder, "files", namespace="media", prune=True)
    assert (both.added, both.removed) == (1, 1) and log_length() == log + 1  # merge + delete
    flat = dc.import_media(folder, "top", namespace="media", recursive=False)
    assert flat.added == 1 and list(rows("top")) == ["loose.txt"]


def test_content_type_comes_from_the_bytes(catalog, folder):
    shutil.copy2(MEDIA / "images" / "scene_02.png", folder / "texts" / "actually_png.txt")
    shutil.copy2(MEDIA / "texts" / "ticket_03.txt", folder / "images" / "actually_text.png")
    dc.import_media(folder, "files", namespace="media")
    found = rows()
    assert found["texts/actually_png.txt"]["content_type"] == "image/png"
    assert found["texts/actually_png.txt"]["kind"] == "image"
    assert found["images/actually_text.png"]["kind"] == "text"
    assert found["images/scene_00.jpg"]["content_type"] == "image/jpeg"
    assert found["audio/speech_00.wav"]["kind"] == "audio"


def test_facts(catalog, folder):
    dc.import_media(folder, "files", namespace="media")
    found = rows()
    for key, row in found.items():
        path = folder / key
        assert row["uri"] == str(path) and row["size"] == path.stat().st_size
        assert row["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
        assert row["modified"].timestamp() == pytest.approx(path.stat().st_mtime, abs=1e-5)
    with Image.open(folder / "images" / "shapes_07.png") as image:
        expected = (image.width, image.height, image.mode)
    png = found["images/shapes_07.png"]
    assert (png["width"], png["height"], png["mode"]) == expected == (64, 64, "P")
    assert found["images/scene_20.png"]["mode"] == "RGBA"
    assert png["duration_s"] is None and png["text_length"] is None
    with wave.open(str(folder / "audio" / "speech_00.wav")) as clip:
        duration = clip.getnframes() / clip.getframerate()
    speech = found["audio/speech_00.wav"]
    assert (speech["sample_rate"], speech["channels"]) == (16000, 1)
    assert speech["duration_s"] == pytest.approx(duration) and speech["width"] is None
    assert found["audio/silence.wav"]["duration_s"] == pytest.approx(2.0)
    review = (folder / "texts" / "review_00_positive.txt").read_text()
    assert found["texts/review_00_positive.txt"]["text_length"] == len(review)


def test_damaged_files_import_without_facts(catalog, folder):
    """A WAV whose header lies (the standard library raises RuntimeError on it), a cut PNG and
    an empty file are rows with their kind and no facts, not a failed import."""
    wav = (folder / "audio" / "silence.wav").read_bytes()
    lying = wav[:16] + (10**9).to_bytes(4, "little") + wav[20:]  # a 1 GB format chunk
    (folder / "audio" / "lying.wav").write_bytes(lying)
    png = (folder / "images" / "scene_02.png").read_bytes()
    (folder / "images" / "cut.png").write_bytes(png[:40])
    (folder / "empty.txt").write_bytes(b"")
    dc.import_media(folder, "files", namespace="media")
    found = rows()
    assert found["audio/lying.wav"]["kind"] == "audio"
    assert found["audio/lying.wav"]["duration_s"] is None
    assert found["images/cut.png"]["width"] is None
    assert (found["empty.txt"]["kind"], found["empty.txt"]["size"]) == ("other", 0)


def test_get_and_read_many(catalog, folder):
    dc.import_media(folder, "files", namespace="media")
    found = rows()
    for row in found.values():
        assert dc.get(row["uri"]) == Path(row["uri"]).read_bytes()
    uris = [r["uri"] for r in found.values()]
    assert read_many(uris) == [Path(u).read_bytes() for u in uris]
    assert dc.get(Path(uris[0])) == Path(uris[0]).read_bytes()
    os.unlink(uris[0])
    with pytest.raises(dc.MediaNotFoundError, match="prune=True"):
        dc.get(uris[0])
    assert read_many(uris[:2], missing_ok=True)[0] is None
    assert dc.get(f"dc://{dc.list_catalogs().popitem()[0]}/media").name == "media"


def test_show_media_and_plain_tables(catalog, folder):
    (folder / "texts" / "markup.txt").write_text("<b>bold</b> & more " * 20)
    dc.import_media(folder, "files", namespace="media")
    preview = dc.show("files", namespace="media", limit=20)
    html = preview._repr_html_()
    assert html.count("<img") == 4 and html.count("<audio controls") == 2
    assert "data:image/" in html and "data:audio/wav;base64," in html
    assert "&lt;b&gt;bold&lt;/b&gt; &amp; more" in html and "<b>bold</b>" not in html
    assert "Great value" in html and "all 9 rows" in html
    assert "first 3 of 9 rows" in dc.show("files", "media", limit=3)._repr_html_()
    text = repr(dc.show("files", "media", limit=3))
    assert text.startswith("media.files: first 3 of 9 rows") and "audio/silence.wav" in text
    images = dc.show("files", "media", where=pc.field("kind") == "image")._repr_html_()
    assert images.count("<img") == 4 and "all 4 rows" in images and "<audio" not in images
    with pytest.raises(dc.InvalidArgumentError, match="pyarrow expression"):
        dc.show("files", "media", where="kind == 'image'")
    with pytest.raises(dc.InvalidArgumentError, match=r"cannot choose rows.*No match.*'key'"):
        dc.show("files", "media", where=pc.field("knd") == "image")
    dc.write({"id": [1, 2], "name": ["<x>", "y"]}, "plain")
    first = dc.transactions(limit=1).column("transaction_id")[0].as_py()
    dc.write({"id": [3], "name": ["z"]}, "plain", mode="add")
    assert "all 2 rows" in repr(dc.show("plain", as_of=first))
    plain = dc.show("plain")._repr_html_()
    assert "<img" not in plain and "&lt;x&gt;" in plain and "preview" not in plain


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda d: dc.import_media(d / "nope", "files"), dc.MediaNotFoundError),
        (lambda d: dc.import_media(d / "images" / "scene_00.jpg", "files"), dc.NotAFolderError),
        (lambda d: dc.import_media(123, "files"), dc.InvalidArgumentError),
        (lambda d: dc.import_media(d, "files", prune="yes"), dc.InvalidArgumentError),
        (lambda d: dc.import_media(d, "files", recursive=1), dc.InvalidArgumentError),
        (lambda d: dc.import_media(d, "../files"), dc.InvalidNameError),
        (lambda d: dc.import_media(d, "other"), dc.NotAMediaTableError),
    ],
)
def test_failed_imports_change_nothing(catalog, folder, call, error):
    dc.import_media(folder, "files")
    dc.write({"id": [1]}, "other")
    shutil.copy2(MEDIA / "images" / "shapes_01.png", folder / "new.png")
    digest, log = tree_digest(catalog.root), log_length()
    with pytest.raises(error):
        call(folder)
    assert tree_digest(catalog.root) == digest and log_length() == log


def test_failure_during_write_rolls_back(catalog, folder, monkeypatch):
    dc.import_media(folder, "files")
    (folder / "gone.txt").write_text("x\n")
    dc.import_media(folder, "files")
    (folder / "gone.txt").unlink()
    shutil.copy2(MEDIA / "images" / "shapes_01.png", folder / "new.png")
    digest = tree_digest(catalog.root)
    from workbench.core.media import importer

    real = importer._apply

    def failing(loc, rows, gone, create):
        real(loc, rows, [], create)  # the merge lands in the transaction, then the delete fails
        raise OSError("disk full")

    monkeypatch.setattr(importer, "_apply", failing)
    with pytest.raises(OSError, match="disk full"):
        dc.import_media(folder, "files", prune=True)
    assert tree_digest(catalog.root) == digest and "new.png" not in rows("files", "default")


def test_import_magic(tmp_path, folder):
    from IPython.core.interactiveshell import InteractiveShell

    from tests.notebook.test_magics import run

    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "workbench")
    shell.run_line_magic("dc", f"init {tmp_path / 'catalog'}")
    result, _ = run(shell, f"import {folder} media.files -o imported")
    assert result.added == 8 and shell.user_ns["imported"] is result
    (folder / "texts" / "ticket_03.txt").unlink()
    result, _ = run(shell, f"import {folder} media.files --prune")
    assert (result.removed, result.unchanged) == (1, 7)
    _, shown = run(shell, f"import {folder / 'missing'} media.files")
    assert "MediaNotFoundError" in shown[0]
    help_text, _ = run(shell, "import --help")
    assert "--prune" in str(help_text) and "media table" in str(help_text)


def test_import_get_and_show_on_s3(s3_catalog, folder):
    import obstore
    from obstore.store import S3Store

    from workbench.core.storage.store import Storage

    bucket = s3_catalog.root.split("://")[1].split("/")[0]
    store = Storage(f"s3://{bucket}", s3_catalog.properties.storage_options).store
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            obstore.put(store, f"incoming/{path.relative_to(folder)}", path.read_bytes())
    assert isinstance(store, S3Store)
    source = f"s3://{bucket}/incoming"
    result = dc.import_media(source, "files", namespace="media")
    assert result.added == 8
    found = rows()
    png = found["images/shapes_07.png"]
    assert png["uri"] == f"{source}/images/shapes_07.png" and png["content_type"] == "image/png"
    assert png["width"] == 64 and found["audio/speech_00.wav"]["sample_rate"] == 16000
    assert dc.get(png["uri"]) == (folder / "images" / "shapes_07.png").read_bytes()
    assert dc.import_media(source, "files", namespace="media").version is None
    html = dc.show("files", "media")._repr_html_()
    assert html.count("<img") == 4 and html.count("<audio") == 2
    images = pc.field("kind") == "image"  # models read the files from S3: Daft and threads
    assert dc.infer("files", "image-facts", namespace="media", where=images).rows_predicted == 4
    audio = pc.field("kind") == "audio"
    voice = dc.infer("files", "voice-activity", namespace="media", where=audio, engine="local")
    assert voice.rows_predicted == 2 and rows()["images/shapes_07.png"]["phash"] is not None
    with pytest.raises(dc.NotAFolderError):
        dc.import_media(f"{source}/images/shapes_07.png", "files", namespace="media")
    with pytest.raises(dc.MediaNotFoundError):
        dc.import_media(f"s3://{bucket}/nothing-here", "files", namespace="media")
