"""Delta Lake: commits written directly, data files and their add/remove actions, snapshots of
a table version and the caches that build them incrementally. Imports base, storage, schema."""
