"""The shape of a graph: what `graphraft schema` prints and what enumeration builds on."""

from __future__ import annotations

from pydantic import BaseModel, Field


class SchemaPattern(BaseModel):
    source: str
    type: str
    target: str
    count: int

    def __str__(self) -> str:
        return f"({self.source})-[:{self.type}]->({self.target})"


class GraphSchema(BaseModel):
    labels: dict[str, int]
    relationship_types: dict[str, int]
    patterns: list[SchemaPattern]
    #: each label's property keys (GraphRAFT's own left out)
    properties: dict[str, list[str]] = Field(default_factory=dict)
    #: the property that names each label's nodes (graph/naming.py; None: reached by id only)
    names: dict[str, str | None] = Field(default_factory=dict)
    seconds: float = 0.0

    @property
    def node_count(self) -> int:
        return sum(self.labels.values())

    @property
    def relationship_count(self) -> int:
        return sum(self.relationship_types.values())
