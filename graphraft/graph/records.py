"""What loaders hand to a store: nodes and relationships identified by ``id``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Every node GraphRAFT loads also carries this label: one index on ``id`` serves
# relationship loading (which knows ids, not labels) and one vector index covers all names.
ENTITY_LABEL = "__Entity__"
EMBEDDING_PROPERTY = "embedding"
NAME_KEY_PROPERTY = "name_norm"
# A node's name as text, from the property that names its label (graph/naming.py)
NAME_TEXT_PROPERTY = "name_text"
#: the properties GraphRAFT keeps on a node itself: not the graph's own (refused in files)
OWN_PROPERTIES = frozenset({"id", NAME_KEY_PROPERTY, NAME_TEXT_PROPERTY, EMBEDDING_PROPERTY})


def name_expression(variable: str) -> str:
    """Cypher for a node's name: what GraphRAFT keeps, else ``name`` (a graph loaded by an
    older version, before its names were prepared again)."""
    return f"coalesce({variable}.{NAME_TEXT_PROPERTY}, {variable}.name)"


def is_reserved_label(label: str) -> bool:
    """GraphRAFT's own labels (``__Entity__``, a Neo4j graph's ``__Graph_NAME__``): ``__`` at both ends."""
    return len(label) > 4 and label.startswith("__") and label.endswith("__")


def graph_label(graph: str) -> str:
    """The label that keeps one graph's nodes apart from the others' in a Neo4j database."""
    if not graph:
        raise ValueError("a graph needs a name")
    return f"__Graph_{graph}__"


def domain_labels(labels) -> tuple[str, ...]:
    """A node's own labels, sorted, without the labels GraphRAFT adds (entity, graph)."""
    return tuple(sorted(label for label in labels if not is_reserved_label(label)))


@dataclass(slots=True)
class NodeRecord:
    id: str
    labels: tuple[str, ...]
    properties: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class RelationshipRecord:
    source: str
    target: str
    type: str
    properties: dict[str, Any] = field(default_factory=dict)


@dataclass
class WriteStats:
    nodes_created: int = 0
    relationships_created: int = 0
    properties_set: int = 0
    labels_added: int = 0

    def __iadd__(self, other: WriteStats) -> WriteStats:
        self.nodes_created += other.nodes_created
        self.relationships_created += other.relationships_created
        self.properties_set += other.properties_set
        self.labels_added += other.labels_added
        return self

    @property
    def changed(self) -> bool:
        return any((self.nodes_created, self.relationships_created, self.properties_set, self.labels_added))


@dataclass
class LoadReport:
    """What one load did: rows seen, what changed, rows skipped and why."""

    nodes: int = 0
    relationships: int = 0
    embedded: int = 0
    missing_endpoints: int = 0
    writes: WriteStats = field(default_factory=WriteStats)
    seconds: float = 0.0
