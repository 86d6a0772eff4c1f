"""Cheap per-kind facts of a file: image size and mode, audio duration and format, text length."""

from __future__ import annotations

import io
import struct
import wave
from typing import Any

from workbench.core.base.dependencies import require
from workbench.core.media.columns import AUDIO, IMAGE, TEXT

# what the standard library's wave module raises on bytes that are not a whole WAV file
WAV_ERRORS = (wave.Error, EOFError, RuntimeError, struct.error)
FACT_COLUMNS = (
    "width",
    "height",
    "mode",
    "duration_s",
    "sample_rate",
    "channels",
    "text_length",
)


def facts(kind: str, data: bytes) -> dict[str, Any]:
    """Every fact column for a file of ``kind``: the kind's own facts, None elsewhere (and
    where the bytes cannot be read as that kind)."""
    found: dict[str, Any] = dict.fromkeys(FACT_COLUMNS)
    reader = {IMAGE: _image, AUDIO: _audio, TEXT: _text}.get(kind)
    if reader is not None:
        found.update(reader(data))
    return found


def _image(data: bytes) -> dict[str, Any]:
    """Width, height and mode from the header (Pillow opens lazily, decoding no pixels)."""
    image_module = require("PIL.Image", "Reading image sizes")
    try:
        with image_module.open(io.BytesIO(data)) as image:
            return {"width": image.width, "height": image.height, "mode": image.mode}
    except (OSError, ValueError, image_module.DecompressionBombError):
        return {}


def _audio(data: bytes) -> dict[str, Any]:
    """Duration, sample rate and channels of a WAV file (other formats give none)."""
    try:
        with wave.open(io.BytesIO(data)) as clip:
            rate = clip.getframerate()
            return {
                "duration_s": clip.getnframes() / rate if rate else None,
                "sample_rate": rate,
                "channels": clip.getnchannels(),
            }
    except WAV_ERRORS:
        return {}


def _text(data: bytes) -> dict[str, Any]:
    """Length in characters (UTF-8, undecodable bytes counted as one replacement each)."""
    return {"text_length": len(data.decode("utf-8", errors="replace"))}
