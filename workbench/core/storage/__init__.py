"""Storage: the bytes under a catalog root (a folder or an object store), table leases, and
data-file formats. Imports only base."""
