"""Tests of the notebook front ends: magics, widgets, JupyterLab in Chromium."""
