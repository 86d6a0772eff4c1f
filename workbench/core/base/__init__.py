"""Base: typed errors, argument checks, names, the public enumerations, engine settings files,
optional imports, progress bars and the package's bundled files. Imports nothing else from
workbench."""
