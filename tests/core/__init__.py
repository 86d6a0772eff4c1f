"""Tests of the catalog, tables, writes, reads, schemas, transactions and time travel."""
