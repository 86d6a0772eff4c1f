"""Media tables: tables of references to files (images, audio, texts), one row per file.

``scan`` lists a folder, ``detect`` finds content types from the bytes, ``facts`` reads cheap
per-kind facts, ``importer`` builds or updates the table, ``fetch`` reads a row's bytes back and
``html`` previews a table in a notebook. Heavy libraries (magika, Pillow) load on first use.
"""
