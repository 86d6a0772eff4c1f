"""What the notebook front ends (magics, widgets) need beside the public API, free of IPython:
the catalog's names under a time limit, and what the text around a cursor asks to complete.

``names``: listings and columns that never raise and never wait long (an unreachable object
store gives no names, not a hang); ``sql_text`` and ``python_text``: where a cursor is in SQL or
in a Python call's string argument; ``completion``: the candidates for a cursor."""
