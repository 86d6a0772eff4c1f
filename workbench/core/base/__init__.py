"""Base: typed errors, argument checks, names, the public enumerations, engine settings files,
optional imports and progress bars. Imports nothing else from workbench."""
