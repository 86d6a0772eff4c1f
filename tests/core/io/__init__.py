"""Tests of workbench.core.io."""
