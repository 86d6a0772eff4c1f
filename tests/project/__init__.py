"""Tests of the project itself: packaging, layers, README examples."""
