"""The Daft engine: lazy Daft DataFrames over a version's files, Daft writes, merges and SQL."""

from workbench.engines.daft.engine import DaftEngine

__all__ = ["DaftEngine"]
