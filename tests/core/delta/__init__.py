"""Tests of workbench.core.delta."""
