"""``voice-activity``: Silero VAD (its ONNX file, run without torch) measuring how much of a
clip is speech."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import numpy as np
import pyarrow as pa

from workbench.builtin_models import decode
from workbench.builtin_models.base import BYTES_INPUT, BuiltinModel, by_length
from workbench.builtin_models.packages import SILERO_INSTALL, onnx_session, package_file

RATE = 16_000
_FRAME = 512  # samples per model step at 16 kHz (32 ms)
_CONTEXT = 64  # samples of the previous frame the model sees before each frame
_CHUNK = 32  # clips run side by side, each with its own row of the state tensor


class VoiceActivity(BuiltinModel):
    """Speech probability per 32 ms frame; frames at or above ``threshold`` count as speech."""

    name = "voice-activity"
    inputs = BYTES_INPUT
    description = "Silero VAD (ONNX) on 16 kHz mono WAV: speech_seconds, speech_ratio (0..1)"
    requires = ("onnxruntime",)
    defaults = MappingProxyType({"threshold": 0.5})

    def weights(self) -> str:
        return package_file("silero-vad", "silero_vad/data/silero_vad.onnx", SILERO_INSTALL)

    def output_schema(self) -> pa.Schema:
        return pa.schema([("speech_seconds", pa.float32()), ("speech_ratio", pa.float32())])

    def _open(self) -> Any:
        return onnx_session(self.weights())

    def _run(self, runtime: Any, values: list[Any]) -> Mapping[str, Any]:
        clips = [decode.audio(v, RATE) for v in values]
        frames = np.array([-(-len(clip) // _FRAME) for clip in clips])
        speech = np.zeros(len(clips), dtype=np.int64)
        for rows in by_length(frames, _CHUNK):
            probabilities = _probabilities(runtime, [clips[i] for i in rows])
            counted = np.arange(probabilities.shape[1]) < frames[rows, None]
            speech[rows] = ((probabilities >= self.parameters["threshold"]) & counted).sum(axis=1)
        lengths = np.array([len(clip) for clip in clips])
        seconds = np.minimum(speech * _FRAME, lengths) / RATE
        ratio = speech / np.maximum(frames, 1)
        return {
            "speech_seconds": seconds.astype(np.float32),
            "speech_ratio": ratio.astype(np.float32),
        }


def _probabilities(session: Any, clips: list[np.ndarray]) -> np.ndarray:
    """Speech probability per frame of each clip (zero-padded to the longest), clips as a
    batch: the state tensor (2, batch, 128) and the 64-sample context carry from frame to frame."""
    steps = max(-(-len(clip) // _FRAME) for clip in clips)
    audio = np.zeros((len(clips), steps * _FRAME), dtype=np.float32)
    for row, clip in enumerate(clips):
        audio[row, : len(clip)] = clip
    state = np.zeros((2, len(clips), 128), dtype=np.float32)
    context = np.zeros((len(clips), _CONTEXT), dtype=np.float32)
    rate = np.array(RATE, dtype=np.int64)
    probabilities = np.zeros((len(clips), steps), dtype=np.float32)
    for step in range(steps):
        window = np.concatenate([context, audio[:, step * _FRAME : (step + 1) * _FRAME]], axis=1)
        output, state = session.run(None, {"input": window, "state": state, "sr": rate})
        probabilities[:, step] = output[:, 0]
        context = window[:, -_CONTEXT:]
    return probabilities
