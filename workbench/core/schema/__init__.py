"""Schemas: fields, merge keys and their order, Arrow type rules, schema evolution, type notes
and conforming data to a schema. Imports base and storage."""
