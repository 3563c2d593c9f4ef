"""The `graphraft` command and `python -m graphraft.synthesize` / `python -m graphraft.train`.

Only this package prints or parses flags; it imports the library, and nothing in the
library imports it."""

from graphraft.cli.main import app, main

__all__ = ["app", "main"]
