"""The Cypher templates in queries/ (installed as ``graphraft/queries``), read once."""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path


def _folder() -> Path:
    # A source checkout reads the top-level folder; an installed wheel reads its package data.
    checkout = Path(__file__).resolve().parents[2] / "queries"
    if checkout.is_dir():
        return checkout
    return Path(str(resources.files("graphraft.queries")))


@cache
def template(name: str) -> str:
    path = _folder() / f"{name}.cypher"
    lines = path.read_text(encoding="utf-8").splitlines()
    return "\n".join(line for line in lines if not line.lstrip().startswith("//")).strip()
