"""How an evaluation runs: which methods, and the asking settings they all share
(`graphraft eval` takes each field as a flag)."""

from __future__ import annotations

from pydantic import Field

from graphraft.inference.config import AskConfig

METHODS = ("graphraft", "no-l2", "free", "vector", "base")


class EvaluationConfig(AskConfig):
    methods: str = Field(",".join(METHODS), description="Comma-separated: " + ", ".join(METHODS) + ".")
    unmarked: bool = Field(False, description="Strip the [brackets] around each question's entity.")
    typos: int | None = Field(None, description="Put one character edit in each question's entity (this seed).")

    def variant(self, items: list) -> list:
        """The questions as this evaluation asks them (typos first, then brackets stripped)."""
        from graphraft.graph.loaders.question_sets import as_people_write

        return as_people_write(items, self.unmarked, self.typos)
