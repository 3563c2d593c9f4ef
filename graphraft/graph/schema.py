"""The shape of a graph: what `graphraft schema` prints and what enumeration builds on."""

from __future__ import annotations

import re

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


#: a number as text: digits, a point, an exponent (not "nan" or "inf", which Python reads too)
NUMBER_TEXT = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def number_of(value: object) -> float | None:
    """Text read as a number, as Cypher's ``toFloat`` reads it (None where it holds none)."""
    if not isinstance(value, str) or not NUMBER_TEXT.fullmatch(value):
        return None
    return float(value)


def numeric_text(values: list) -> bool:
    """Whether text values hold numbers, as a graph loaded from CSV keeps them (``'32.38'``):
    every one that is not blank reads as a finite number and some have a fractional part. Text
    of whole numbers alone (``'1'``, ``'10'``) is more often a code (ids, postal codes) than a
    quantity, and stays text."""
    fraction = False
    for value in values:
        if not isinstance(value, str):
            return False
        text = value.strip()
        if not text:
            continue
        if number_of(text) is None:
            return False
        fraction = fraction or "." in text
    return fraction


#: a date as ISO text, alone or at the start of a date and time (``1996-07-04 00:00:00.000``)
ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?!\d)")
#: the share of a text property's values that must be dates for it to be compared as dates
#: (the others: a placeholder such as ``'NULL'`` where the source had none)
DATE_SHARE = 0.9


def date_text(values: list) -> bool:
    """Whether text values hold dates as ISO text (``'1996-07-04'``, ``'1996-07-04
    00:00:00.000'``), which compare in the order of the dates they write: nearly all of those
    that are not blank (``DATE_SHARE``) start with one."""
    if not all(isinstance(v, str) for v in values):
        return False
    texts = [v.strip() for v in values if v.strip()]
    if not texts:
        return False
    return sum(1 for text in texts if ISO_DATE.match(text)) >= DATE_SHARE * len(texts)


class PropertyInfo(BaseModel):
    """One property of a label (or relationship type), from a sample of its nodes."""

    type: str  # string, integer, float, boolean, list, date, datetime, ...; "mixed" when they differ
    sampled: int  # nodes (relationships) of the sample that carry it
    #: every value it takes, when there are at most FEW_VALUES (NAMED_VALUES for text)
    values: list[Value] | None = None
    #: text that holds numbers (``numeric_text``): compared and aggregated as numbers, ``toFloat(...)``
    numeric: bool = False
    #: text that holds dates as ISO text (``date_text``): compared in order with a date the question quotes
    dates: bool = False
    #: text that no two nodes (relationships) share, over all of them (a key: ``productName``,
    #: ``title``): grouped by it, each group is one node, so the language groups by the node instead
    unique: bool = False

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
