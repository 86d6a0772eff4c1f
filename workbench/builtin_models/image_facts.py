"""``image-facts``: cheap facts about an image computed with NumPy: dominant colour,
brightness, sharpness and a perceptual hash for finding near-duplicates."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

import numpy as np
import pyarrow as pa

from workbench.builtin_models import decode
from workbench.builtin_models.base import BYTES_INPUT, BuiltinModel
from workbench.core.base.dependencies import require

_SIDE = 512  # longest side the facts are computed at, so huge images cost no more
_LEVELS = 8  # colour levels per channel when finding the dominant colour
_HASH = 8  # the hash keeps the lowest HASH x HASH DCT frequencies of a 4x larger image


class ImageFacts(BuiltinModel):
    """Facts from pixels alone; its version is a hash of this module, the code being its model."""

    name = "image-facts"
    inputs = BYTES_INPUT
    description = (
        "NumPy image facts: dominant_colour '#rrggbb', brightness 0..1, sharpness (variance "
        "of the Laplacian), phash (64-bit DCT hash, 16 hex; near-duplicates differ in few bits)"
    )
    requires = ("PIL",)

    def weights(self) -> str:
        return __file__

    def output_schema(self) -> pa.Schema:
        return pa.schema(
            [
                ("dominant_colour", pa.string()),
                ("brightness", pa.float32()),
                ("sharpness", pa.float32()),
                ("phash", pa.string()),
            ]
        )

    def _open(self) -> Any:
        return require("PIL.Image", "A built-in model")

    def _run(self, runtime: Any, values: list[Any]) -> Mapping[str, Any]:
        rows = [facts(decode.image(v), runtime) for v in values]
        return {name: [row[name] for row in rows] for name in rows[0]}


def facts(image: Any, pil: Any) -> dict[str, Any]:
    """The four facts of an RGB Pillow image (``pil`` is the ``PIL.Image`` module)."""
    image = image.copy()
    image.thumbnail((_SIDE, _SIDE), pil.Resampling.BILINEAR)
    rgb = np.asarray(image, dtype=np.float32)
    grey = np.asarray(image.convert("L"), dtype=np.float32)
    return {
        "dominant_colour": dominant_colour(rgb),
        "brightness": float(grey.mean() / 255.0),
        "sharpness": sharpness(grey),
        "phash": phash(image.convert("L").resize((4 * _HASH, 4 * _HASH), pil.Resampling.LANCZOS)),
    }


def dominant_colour(rgb: np.ndarray) -> str:
    """The mean colour of the most common of 8x8x8 colour cells, as ``#rrggbb``."""
    pixels = rgb.reshape(-1, 3)
    cells = (pixels * (_LEVELS / 256.0)).astype(np.int64)
    index = (cells[:, 0] * _LEVELS + cells[:, 1]) * _LEVELS + cells[:, 2]
    common = np.bincount(index, minlength=_LEVELS**3).argmax()
    red, green, blue = np.rint(pixels[index == common].mean(axis=0)).astype(int)
    return f"#{red:02x}{green:02x}{blue:02x}"


def sharpness(grey: np.ndarray) -> float:
    """Variance of the 4-neighbour Laplacian of grey levels 0..255: low means blurred."""
    if min(grey.shape) < 3:
        return 0.0
    laplacian = (
        grey[:-2, 1:-1] + grey[2:, 1:-1] + grey[1:-1, :-2] + grey[1:-1, 2:] - 4 * grey[1:-1, 1:-1]
    )
    return float(laplacian.var())


def phash(small: Any) -> str:
    """The perceptual hash of a small square grey image: each of the lowest 8x8 DCT
    coefficients above their median is a 1 bit (64 bits as 16 hex digits)."""
    pixels = np.asarray(small, dtype=np.float64)
    basis = _dct_matrix(pixels.shape[0])
    low = (basis @ pixels @ basis.T)[:_HASH, :_HASH]
    bits = (low > np.median(low)).reshape(-1)
    return f"{int(''.join('1' if b else '0' for b in bits), 2):016x}"


@cache
def _dct_matrix(size: int) -> np.ndarray:
    """The orthonormal DCT-II matrix of ``size`` (pure function of ``size``)."""
    k = np.arange(size)[:, None]
    n = np.arange(size)[None, :]
    matrix = np.sqrt(2.0 / size) * np.cos(np.pi * (2 * n + 1) * k / (2 * size))
    matrix[0] /= np.sqrt(2.0)
    return matrix
