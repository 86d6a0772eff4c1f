"""Tests of workbench.core.ops."""
