"""Rows in and out: ``write`` in every mode, ``read``, SQL, ``diff`` and ``dc://`` URLs, each
through the engine that fits the data."""
