"""Benchmarks comparing workbench against raw deltalake and DuckLake."""
