"""Tests of workbench.core.storage."""
