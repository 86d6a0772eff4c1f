"""``speech-to-text``: CMU PocketSphinx with the US English model bundled in its wheel."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pyarrow as pa

from workbench.builtin_models import decode
from workbench.builtin_models.base import BYTES_INPUT, BuiltinModel
from workbench.builtin_models.packages import package_file
from workbench.core.base.dependencies import require

RATE = 16_000


class SpeechToText(BuiltinModel):
    """A transcript per clip, lower case without punctuation ("" when nothing is heard)."""

    name = "speech-to-text"
    inputs = BYTES_INPUT
    description = "PocketSphinx (bundled en-us model, offline) on WAV audio: transcript"
    requires = ("pocketsphinx",)

    def weights(self) -> str:
        return package_file("pocketsphinx", "pocketsphinx/model/en-us/en-us.lm.bin")

    def output_schema(self) -> pa.Schema:
        return pa.schema([("transcript", pa.string())])

    def _open(self) -> Any:
        return require("pocketsphinx", "A built-in model").Decoder(samprate=RATE, loglevel="FATAL")

    def _run(self, runtime: Any, values: list[Any]) -> Mapping[str, Any]:
        return {"transcript": [_transcribe(runtime, decode.audio(v, RATE)) for v in values]}


def _transcribe(decoder: Any, samples: np.ndarray) -> str:
    """The decoder's best hypothesis for one clip of float samples at 16 kHz."""
    pcm = (np.clip(samples, -1.0, 1.0) * 32767).astype("<i2")
    decoder.start_utt()
    decoder.process_raw(pcm.tobytes(), full_utt=True)
    decoder.end_utt()
    hypothesis = decoder.hyp()
    return hypothesis.hypstr if hypothesis is not None else ""
