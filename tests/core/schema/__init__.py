"""Tests of workbench.core.schema."""
