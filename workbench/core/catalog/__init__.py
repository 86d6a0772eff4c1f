"""The catalog model: the registry of catalog roots, where table folders live, table
versions' names, properties, content types, descriptions, and table locations. No transaction
logic: that is one layer up."""
