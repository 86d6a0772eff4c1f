"""The library's core: catalogs of Delta tables, transactions over them, reads and writes, and
the run log, media and inference features; no IPython and no engine imports.

Layers, each importing only those below it (checked by ``lint-imports``, see pyproject.toml):
session > inference > media > events > io > ops > transactions > data > catalog > delta >
schema > storage > base. docs/architecture.md says what each one owns."""
