"""Operations on the catalog's structure: namespaces, table lifecycle (create, drop, alter,
list, describe) and maintenance (optimize, vacuum), each one catalog transaction."""
