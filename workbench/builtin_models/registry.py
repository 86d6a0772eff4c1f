"""The built-in models by name: ``builtin(name)`` makes one, ``dc.models()`` lists them."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from html import escape
from typing import Any

from workbench.builtin_models.base import BuiltinModel
from workbench.core.base.errors import MissingDependencyError, UnknownModelError
from workbench.core.inference.resolve import use_named_models

# name -> "module:class"; a model's module (and its runtime) is imported only when it is made.
BUILTINS: dict[str, str] = {
    "text-embedding": "workbench.builtin_models.text_embedding:TextEmbedding",
    "image-safety": "workbench.builtin_models.image_safety:ImageSafety",
    "image-facts": "workbench.builtin_models.image_facts:ImageFacts",
    "voice-activity": "workbench.builtin_models.voice_activity:VoiceActivity",
    "speech-to-text": "workbench.builtin_models.speech_to_text:SpeechToText",
}


def builtin(name: str, **parameters: Any) -> BuiltinModel:
    """The built-in model ``name`` (unloaded, so it pickles to workers), with ``parameters``
    replacing its defaults."""
    if name not in BUILTINS:
        raise UnknownModelError(
            f"No built-in model is named {name!r}; the built-ins are {', '.join(BUILTINS)} "
            "(dc.models() describes them), or wrap your own function with dc.model(...)."
        )
    module, cls = BUILTINS[name].split(":")
    return getattr(importlib.import_module(module), cls)(**parameters)


use_named_models(builtin)


@dataclass(frozen=True)
class ModelInfo:
    """One built-in model as ``dc.models()`` lists it."""

    name: str
    inputs: dict[str, str]
    outputs: dict[str, str]
    description: str
    version: str  # "unavailable" when its files are not installed
    ready: bool  # everything it loads is installed here
    missing: str = ""  # when not ready: what is missing and the command that installs it


class ModelList(list[ModelInfo]):
    """The built-in models: a list that shows as a table in notebooks and as text elsewhere."""

    _COLUMNS = ("name", "inputs", "outputs", "description", "version", "ready")

    def _rows(self) -> list[list[str]]:
        return [
            [
                info.name,
                ", ".join(f"{k}: {v}" for k, v in info.inputs.items()),
                ", ".join(f"{k}: {v}" for k, v in info.outputs.items()),
                info.description,
                info.version,
                "yes" if info.ready else f"no: {info.missing}",
            ]
            for info in self
        ]

    def __repr__(self) -> str:
        return "\n".join(
            f"{row[0]}  ({row[1]}) -> {row[2]}  version {row[4]}  ready: {row[5]}\n    {row[3]}"
            for row in self._rows()
        )

    def _repr_html_(self) -> str:
        head = "".join(f"<th style='text-align:left'>{c}</th>" for c in self._COLUMNS)
        body = "".join(
            "<tr>" + "".join(f"<td style='text-align:left'>{escape(v)}</td>" for v in row) + "</tr>"
            for row in self._rows()
        )
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def models() -> ModelList:
    """The built-in models with their inputs, outputs, description, version and whether they
    are ready to load here (if not, the command that installs what they miss)."""
    return ModelList(_info(builtin(name)) for name in BUILTINS)


def _info(model: BuiltinModel) -> ModelInfo:
    """What ``dc.models()`` shows of ``model``."""
    missing = model.missing()
    try:
        version = model.version
    except MissingDependencyError:
        version = "unavailable"
    return ModelInfo(
        model.name,
        dict(model.inputs),
        {field.name: str(field.type) for field in model.output_schema()},
        model.description,
        version,
        missing is None,
        missing or "",
    )
