"""Resolve mentions to anchor node ids: exact normalised name through the index first, else
the nearest names by the vector index above a similarity floor. Ambiguous names keep
several candidates, and every anchor records how it was found."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass

from graphraft.embeddings import Embedder
from graphraft.entities.extract import Mention
from graphraft.graph.store import GraphStore
from graphraft.patterns import AnchorRef


@dataclass(frozen=True)
class Anchor:
    mention: str
    id: str
    name: str
    labels: tuple[str, ...]
    method: str  # exact | vector
    score: float  # 1.0 for exact; cosine similarity for vector

    @property
    def ref(self) -> AnchorRef:
        return AnchorRef(self.id, self.labels)

    def to_dict(self) -> dict:
        data = asdict(self)
        data["labels"] = list(self.labels)
        return data


class EntityResolver:
    def __init__(self, store: GraphStore, embedder_factory: Callable[[], Embedder | None] | None = None,
                 similarity_floor: float = 0.75, max_candidates: int = 3):
        self.store = store
        self._embedder_factory = embedder_factory
        self._embedder: Embedder | None = None
        self.similarity_floor = similarity_floor
        self.max_candidates = max_candidates

    def _embed(self, text: str) -> list[float] | None:
        if self._embedder is None and self._embedder_factory is not None:
            self._embedder = self._embedder_factory()
            self._embedder_factory = None
        return self._embedder.embed([text])[0] if self._embedder is not None else None

    def resolve(self, mention: Mention | str) -> list[Anchor]:
        text = mention.text if isinstance(mention, Mention) else mention
        exact = self.store.nodes_by_name(text, limit=self.max_candidates)
        if exact:
            return [Anchor(text, row["id"], row["name"], _domain(row["labels"]), "exact", 1.0) for row in exact]
        vector = self._embed(text)
        if vector is None:
            return []
        anchors = []
        for node, similarity in self.store.nearest_names(vector, k=self.max_candidates):
            if similarity >= self.similarity_floor:
                anchors.append(Anchor(text, node["id"], node["name"], _domain(node["labels"]), "vector",
                                      round(similarity, 4)))
        return anchors

    def resolve_all(self, mentions: list[Mention]) -> list[Anchor]:
        """Anchors for every mention, without repeating a node."""
        seen, anchors = set(), []
        for mention in mentions:
            for anchor in self.resolve(mention):
                if anchor.id not in seen:
                    seen.add(anchor.id)
                    anchors.append(anchor)
        return anchors


def _domain(labels) -> tuple[str, ...]:
    return tuple(sorted(label for label in labels if label != "__Entity__"))
