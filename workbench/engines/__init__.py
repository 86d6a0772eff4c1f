"""Compute engines beyond the local one: Spark for data pipelines (Daft and Ray to come)."""
