"""The demo graph shipped with the package: a fictional literary world (books, authors,
publishers, genres, cities, awards) with descriptions, and ~300 questions of 1-3 hops.

It is loaded through the same CSV/JSONL path as your own graph; see scripts/make_demo_graph.py."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

DEMO_GRAPH = "demo"


def demo_dir() -> Path:
    return Path(str(resources.files("graphraft") / "data" / "demo"))


def demo_files() -> tuple[Path, Path, Path]:
    """(nodes.jsonl, relationships.jsonl, questions.jsonl)."""
    folder = demo_dir()
    return folder / "nodes.jsonl", folder / "relationships.jsonl", folder / "questions.jsonl"
