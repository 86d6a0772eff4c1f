"""Tests of inference, media tables, the run log and reports."""
