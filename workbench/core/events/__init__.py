"""The run log: events of pipeline, inference and report runs, in SQLite or Delta."""
