"""Tests of workbench.core.transactions."""
