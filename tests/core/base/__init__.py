"""Tests of workbench.core.base."""
