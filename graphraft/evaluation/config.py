"""How an evaluation runs: which methods, and the asking settings they all share
(`graphraft eval` takes each field as a flag)."""

from __future__ import annotations

from pydantic import Field

from graphraft.inference.config import AskConfig

METHODS = ("graphraft", "no-l2", "free", "vector", "base")


class EvaluationConfig(AskConfig):
    methods: str = Field(",".join(METHODS), description="Comma-separated: " + ", ".join(METHODS) + ".")

    def ask_config(self) -> AskConfig:
        return AskConfig.model_validate(self.model_dump(include=set(AskConfig.model_fields)))
