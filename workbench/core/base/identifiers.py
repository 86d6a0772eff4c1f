"""Names pasted into SQL text, quoted so any name (reserved words, quotes, spaces) is one
identifier: the one quoting rule every engine and the run log use."""

from __future__ import annotations


def quote_identifier(name: str, mark: str = "`") -> str:
    """``name`` quoted for SQL: backticks for Spark and deltalake, '"' for DuckDB and SQLite."""
    return mark + name.replace(mark, mark * 2) + mark
