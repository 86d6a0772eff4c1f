"""Data: the engine protocol and registry, conversions between dataset types (pandas, Arrow,
numpy, ...), schemaless manifests and read options. Imports the catalog and below."""
