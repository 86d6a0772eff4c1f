"""Transactions: the catalog log, staging of Delta actions, commit and roll-forward, the
context a block of code runs in, time travel and history. Imports data and below."""
