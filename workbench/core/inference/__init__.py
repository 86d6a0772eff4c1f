"""Batch inference: the model contract and ``dc.infer``."""
