"""Filters over a table's rows: a small tree SQL text and pyarrow expressions both become,
checked against the table's columns, written back as SQL, and read against the Delta log's
statistics to skip files."""
