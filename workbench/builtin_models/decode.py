"""Decoding a row's bytes: images with Pillow, WAV audio with the standard library and NumPy."""

from __future__ import annotations

import io
import wave
from typing import TYPE_CHECKING

import numpy as np

from workbench.core.base.dependencies import require
from workbench.core.media.facts import WAV_ERRORS

if TYPE_CHECKING:
    from PIL.Image import Image

# PCM sample width in bytes -> (NumPy dtype, value that maps to full scale, offset to centre).
_PCM = {1: ("u1", 128.0, 128.0), 2: ("<i2", 32768.0, 0.0), 4: ("<i4", 2147483648.0, 0.0)}


def image(data: bytes) -> Image:
    """An RGB image from encoded bytes (any format Pillow reads), turned upright per EXIF;
    ``ValueError`` for bytes that are not a whole image (empty, truncated, another format)."""
    pil = require("PIL.Image", "A built-in model")
    ops = require("PIL.ImageOps", "A built-in model")
    try:
        with pil.open(io.BytesIO(bytes(data))) as opened:
            upright = ops.exif_transpose(opened)
            return upright.convert("RGB")
    except (OSError, SyntaxError, ValueError, EOFError, pil.DecompressionBombError) as e:
        # Pillow's plugins raise OSError (unidentified, truncated), SyntaxError (broken PNG)
        raise ValueError(
            f"The image models read image files; these {len(data)} bytes are not a whole image "
            f"({type(e).__name__}: {e})."
        ) from e


def audio(data: bytes, rate: int) -> np.ndarray:
    """Mono float32 samples in [-1, 1] at ``rate`` Hz from the bytes of a PCM WAV file."""
    try:
        with wave.open(io.BytesIO(bytes(data))) as wav:
            width, channels, source_rate = (
                wav.getsampwidth(),
                wav.getnchannels(),
                wav.getframerate(),
            )
            frames = wav.readframes(wav.getnframes())
    except WAV_ERRORS as e:
        raise ValueError(
            f"The audio models read PCM WAV files; these {len(data)} bytes are not one ({e})."
        ) from e
    if channels < 1 or source_rate < 1:
        raise ValueError(
            f"This WAV file's header gives {channels} channel(s) at {source_rate} Hz; the audio "
            "models need at least one channel and a positive sample rate."
        )
    frames = frames[: len(frames) - len(frames) % (width * channels)]  # a cut file: whole frames
    samples = _pcm(frames, width).reshape(-1, channels).mean(axis=1)
    return resample(samples, source_rate, rate)


def _pcm(frames: bytes, width: int) -> np.ndarray:
    """PCM frames of ``width`` bytes per sample as float32 in [-1, 1]."""
    if width == 3:  # 24-bit: widen each sample to 32 bits, low byte zero
        raw = np.frombuffer(frames, dtype="u1").reshape(-1, 3)
        frames = np.pad(raw, ((0, 0), (1, 0))).tobytes()
        width = 4
    if width not in _PCM:
        raise ValueError(
            f"WAV samples of {width} bytes are not supported (use 8, 16, 24 or 32-bit PCM)."
        )
    dtype, scale, offset = _PCM[width]
    return ((np.frombuffer(frames, dtype=dtype).astype(np.float32) - offset) / scale).astype(
        np.float32
    )


def resample(samples: np.ndarray, source: int, target: int) -> np.ndarray:
    """``samples`` at ``source`` Hz brought to ``target`` Hz by linear interpolation."""
    if source == target or not len(samples):
        return samples.astype(np.float32)
    count = round(len(samples) * target / source)
    times = np.arange(count) * (source / target)
    return np.interp(times, np.arange(len(samples)), samples).astype(np.float32)
