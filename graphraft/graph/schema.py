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


#: a property with at most this many distinct values has them listed: a few-valued one
FEW_VALUES = 10
#: a text property with at most this many distinct values has them listed too, so that a question
#: naming one ("suppliers from the UK") can be matched to it (``literals.mentioned_values``)
NAMED_VALUES = 100
Value = str | int | float | bool


class PropertyInfo(BaseModel):
    """One property of a label (or relationship type), from a sample of its nodes."""

    type: str  # string, integer, float, boolean, list, date, datetime, ...; "mixed" when they differ
    sampled: int  # nodes (relationships) of the sample that carry it
    #: every value it takes, when there are at most FEW_VALUES (NAMED_VALUES for text)
    values: list[Value] | None = None

    @property
    def few(self) -> bool:
        """Whether it takes at most FEW_VALUES values (each listed)."""
        return self.values is not None and len(self.values) <= FEW_VALUES


class GraphSchema(BaseModel):
    labels: dict[str, int]
    relationship_types: dict[str, int]
    patterns: list[SchemaPattern]
    #: each label's properties (GraphRAFT's own left out), from a sample of its nodes
    properties: dict[str, dict[str, PropertyInfo]] = Field(default_factory=dict)
    #: each relationship type's properties, from a sample of its relationships
    relationship_properties: dict[str, dict[str, PropertyInfo]] = Field(default_factory=dict)
    #: the property that names each label's nodes (graph/naming.py; None: reached by id only)
    names: dict[str, str | None] = Field(default_factory=dict)
    seconds: float = 0.0

    @property
    def node_count(self) -> int:
        return sum(self.labels.values())

    @property
    def relationship_count(self) -> int:
        return sum(self.relationship_types.values())
