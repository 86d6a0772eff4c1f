"""Tests of workbench.core.catalog."""
