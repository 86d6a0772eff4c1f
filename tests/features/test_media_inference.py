"""Built-in models over a real media table: bytes fetched by URI, outputs merged by key,
reruns skipping unchanged files, search by meaning, and the gallery over the predictions."""

from __future__ import annotations

from pathlib import Path

import pyarrow.compute as pc
import pytest
from PIL import Image

import workbench as dc
from tests.conftest import tree_digest
from tests.notebook.test_magics import run
from workbench.widgets import Gallery


def by_key() -> dict[str, dict]:
    return {r["key"]: r for r in dc.read("files", "media", read_as="pyarrow").to_pylist()}


def infer(model: str, kind: str, engine: str = "local") -> dc.InferResult:
    return dc.infer(
        "files",
        model,
        namespace="media",
        where=pc.field("kind") == kind,
        engine=engine,
        progress=False,
    )


@pytest.mark.parametrize("engine", ["local", "daft"])
def test_image_and_audio_models_read_the_files_behind_the_uris(catalog, media_folder, engine):
    dc.import_media(media_folder, "files", namespace="media")
    assert infer("image-facts", "image", engine).rows_predicted == 4
    assert infer("voice-activity", "audio", engine).rows_predicted == 2
    rows = by_key()
    images = [r for r in rows.values() if r["kind"] == "image"]
    assert all(len(r["phash"]) == 16 and 0 <= r["brightness"] <= 1 for r in images)
    assert all(r["phash"] is None for r in rows.values() if r["kind"] != "image")
    speech, silence = rows["audio/speech_00.wav"], rows["audio/silence.wav"]
    assert speech["speech_ratio"] > 0.3 > 0.1 > silence["speech_ratio"]


@pytest.fixture
def bad_files(catalog, media_folder: Path) -> Path:
    """A media table of files no built-in model can read: text that is not UTF-8, an empty
    file, a cut PNG, a WAV that is not one (imported before they were spoiled)."""
    folder = media_folder / "unreadable"  # sorts after the readable files
    folder.mkdir()
    (folder / "latin.txt").write_bytes("café crème brûlée".encode("latin-1"))
    (folder / "empty.png").write_bytes(b"")
    whole = (media_folder / "images" / "scene_02.png").read_bytes()
    (folder / "cut.png").write_bytes(whole[: len(whole) // 2])
    (folder / "fake.wav").write_bytes(b"RIFF\x10\x00\x00\x00WAVEnot a wave file at all")
    dc.import_media(media_folder, "files", namespace="media")
    return folder


BAD_FILES = [  # model, a file it reads, a file it cannot read, why
    ("text-embedding", "texts/ticket_03.txt", "unreadable/latin.txt", "not UTF-8 text"),
    ("image-facts", "images/scene_02.png", "unreadable/empty.png", "not a whole image"),
    ("image-facts", "images/scene_02.png", "unreadable/cut.png", "not a whole image"),
    ("image-safety", "images/scene_02.png", "unreadable/cut.png", "not a whole image"),
    ("voice-activity", "audio/silence.wav", "unreadable/fake.wav", "PCM WAV"),
    ("speech-to-text", "audio/silence.wav", "unreadable/empty.png", "PCM WAV"),
]


@pytest.mark.parametrize("engine", ["local", "daft"])
def test_a_file_a_builtin_model_cannot_read_fails_naming_the_model_and_row(
    catalog, bad_files, engine
):
    before = tree_digest(f"{catalog.root}/media/files")
    for model, good, key, why in BAD_FILES:
        rows = pc.field("key").isin([good, key])  # one batch, the readable row first
        with pytest.raises(dc.ModelFailedError, match=rf"'{model}'.*\"{key}\".*{why}"):
            dc.infer("files", model, namespace="media", where=rows, engine=engine, progress=False)
    assert tree_digest(f"{catalog.root}/media/files") == before


@pytest.mark.parametrize(
    "engine",
    [
        "local",
        "daft",
        pytest.param("spark", marks=pytest.mark.spark),
        pytest.param("ray", marks=pytest.mark.ray),
    ],
)
def test_a_file_deleted_after_import_is_media_not_found_on_every_engine(
    catalog, media_folder, engine, request
):
    if engine in ("spark", "ray"):
        request.getfixturevalue({"spark": "spark", "ray": "ray_cluster"}[engine])
    dc.import_media(media_folder, "files", namespace="media")
    (media_folder / "texts" / "ticket_03.txt").unlink()
    before = tree_digest(f"{catalog.root}/media/files")
    with pytest.raises(dc.MediaNotFoundError, match=r"ticket_03\.txt'?: it was moved.*prune=True"):
        infer("text-embedding", "text", engine)
    assert tree_digest(f"{catalog.root}/media/files") == before


@pytest.mark.parametrize(
    "engine",
    [
        "local",
        "daft",
        pytest.param("spark", marks=pytest.mark.spark),
        pytest.param("ray", marks=pytest.mark.ray),
    ],
)
def test_file_names_with_spaces_unicode_and_url_characters(catalog, tmp_path, engine, request):
    if engine in ("spark", "ray"):
        request.getfixturevalue({"spark": "spark", "ray": "ray_cluster"}[engine])
    folder = tmp_path / "my files" / "naïve café"
    folder.mkdir(parents=True)
    texts = {"a b.txt": "hello there", "é ü 😀.txt": "good bye", "100%.txt": "all of it",
             "q?x#y.txt": "a question", "q": "the wrong file"}  # fmt: skip
    for name, text in texts.items():
        (folder / name).write_text(text)
    dc.import_media(folder, "files", namespace="media")
    assert infer("text-embedding", "text", engine).rows_predicted == len(texts)
    found = dc.search("files", "a question", namespace="media", k=1, read_as="pyarrow")
    assert found["key"].to_pylist() == ["q?x#y.txt"]
    assert "é ü 😀.txt" in repr(dc.show("files", "media"))


def test_a_changed_file_is_the_only_row_recomputed(catalog, media_folder):
    dc.import_media(media_folder, "files", namespace="media")
    infer("image-facts", "image")
    before = by_key()["images/scene_02.png"]["brightness"]
    path = media_folder / "images" / "scene_02.png"
    with Image.open(path) as image:
        image.convert("RGB").point(lambda v: v // 4).save(path)  # much darker
    assert dc.import_media(media_folder, "files", namespace="media").updated == 1
    again = infer("image-facts", "image")
    assert (again.rows_predicted, again.rows_skipped) == (1, 3)
    assert by_key()["images/scene_02.png"]["brightness"] < before


def test_texts_are_searchable_by_meaning_after_embedding(catalog, media_folder):
    dc.import_media(media_folder, "files", namespace="media")
    assert infer("text-embedding", "text").rows_predicted == 2
    found = dc.search("files", "I want help with my order", namespace="media", k=1)
    assert list(found["key"]) == ["texts/ticket_03.txt"]


@pytest.fixture
def predicted(catalog, media_folder: Path) -> None:
    dc.import_media(media_folder, "files", namespace="media")
    infer("image-safety", "image")
    infer("image-facts", "image")


def test_gallery_captions_and_filters_by_kind_label_and_score(predicted):
    gallery = Gallery("files", "media", page_size=3)
    assert (gallery.label_column, gallery.score_column) == ("label", "score")
    assert gallery.page_label.value == "8 of 8 files · page 1/3"
    assert "<audio" in gallery.grid.value and "no file matches" not in gallery.grid.value
    gallery.kind_picker.value = "image"
    assert gallery.page_label.value == "4 of 8 files · page 1/2"
    assert gallery.grid.value.count("<img") == 3 and "label: safe" in gallery.grid.value
    assert "phash: " in gallery.grid.value and "_model_" not in gallery.grid.value
    gallery.next_button.click()
    assert gallery.grid.value.count("<img") == 1
    assert [v for _, v in gallery.label_picker.options] == ["", "safe"]  # the labels found
    gallery.label_picker.value = "safe"
    scores = [r["score"] for r in by_key().values() if r["score"] is not None]
    assert (gallery.score_slider.min, gallery.score_slider.max) == pytest.approx(
        (min(scores), max(scores))
    )  # the slider spans the scores found
    gallery.score_slider.value = gallery.score_slider.max
    top = gallery.score_slider.value
    assert gallery.chosen().num_rows == sum(1 for s in scores if s >= top) >= 1
    gallery.kind_picker.value = "audio"  # no clip has a safety label
    assert "no file matches" in gallery.grid.value


def test_gallery_refuses_a_table_without_media(catalog):
    import pandas as pd

    dc.write(pd.DataFrame({"id": [1]}), "plain", "media", auto_create_namespace=True)
    with pytest.raises(dc.NotAMediaTableError, match=r"dc\.import_media"):
        Gallery("plain", "media")


def test_gallery_magic(tmp_path, media_folder):
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "workbench")
    shell.run_line_magic("dc", f"init {tmp_path / 'catalog'}")
    run(shell, f"import {media_folder} media.files")
    gallery, _ = run(shell, "gallery media.files --label kind")
    assert isinstance(gallery, Gallery) and gallery.label_column == "kind"
