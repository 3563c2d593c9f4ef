"""Resolve mentions to anchor node ids: exact normalised name through the index first, else
the nearest names by the vector index above a similarity floor. Ambiguous names keep
several candidates, and every anchor records how it was found.

A graph loaded without name embeddings (``--no-embed``) has no vector index: there the
fallback is a text match (names containing the mention's words, ranked by string
similarity), and ``vector_missing`` says so for the caller to report."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass
from difflib import SequenceMatcher

from graphraft.graph.embeddings import Embedder
from graphraft.graph.records import domain_labels
from graphraft.graph.store import GraphStore
from graphraft.synthesis.mentions import Mention
from graphraft.synthesis.patterns import AnchorRef
from graphraft.text import normalize_name

#: the text fallback keeps names at least this similar to the mention (difflib ratio): a
#: mention that is most of the name ("Forrest Gump" in "Forrest Gump 2") passes, a single
#: shared word in a long name does not
TEXT_FLOOR = 0.5

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Anchor:
    mention: str
    id: str
    name: str
    labels: tuple[str, ...]
    method: str  # exact | vector | text
    score: float  # 1.0 for exact; cosine similarity for vector; string similarity for text

    @property
    def ref(self) -> AnchorRef:
        return AnchorRef(self.id, self.labels)

    def to_dict(self) -> dict:
        data = asdict(self)
        data["labels"] = list(self.labels)
        return data


def resolver_for(store: GraphStore, settings) -> EntityResolver:
    """The resolver the settings describe: their embedder (made on first need), floor and candidates."""
    from graphraft.graph.embeddings import make_embedder

    return EntityResolver(store, lambda: make_embedder(settings), settings.similarity_floor, settings.max_candidates)


class EntityResolver:
    def __init__(
        self,
        store: GraphStore,
        embedder_factory: Callable[[], Embedder | None] | None = None,
        similarity_floor: float = 0.75,
        max_candidates: int = 3,
    ):
        self.store = store
        self._embedder_factory = embedder_factory
        self._embedder: Embedder | None = None
        self.similarity_floor = similarity_floor
        self.max_candidates = max_candidates
        self._vector_index: bool | None = None

    @property
    def vector_missing(self) -> bool:
        """True once a mention needed the vector index and the graph has none."""
        return self._vector_index is False

    def _embed(self, text: str) -> list[float] | None:
        if self._embedder is None and self._embedder_factory is not None:
            self._embedder = self._embedder_factory()
            self._embedder_factory = None
        return self._embedder.embed([text])[0] if self._embedder is not None else None

    def resolve(self, mention: Mention | str) -> list[Anchor]:
        text = mention.text if isinstance(mention, Mention) else mention
        exact = self.store.nodes_by_name(text, limit=self.max_candidates)
        if exact:
            return [Anchor(text, row["id"], row["name"], domain_labels(row["labels"]), "exact", 1.0) for row in exact]
        if self._vector_index is None:
            self._vector_index = self.store.has_vector_index()
            if not self._vector_index:
                logger.info("%s has no vector index: names are matched exactly and by text", self.store.description)
        vector = self._embed(text) if self._vector_index else None
        if vector is None:
            return self._text_match(text)
        anchors = []
        for node, similarity in self.store.nearest_names(vector, k=self.max_candidates):
            if similarity >= self.similarity_floor:
                anchors.append(
                    Anchor(
                        text, node["id"], node["name"], domain_labels(node["labels"]), "vector", round(similarity, 4)
                    )
                )
        return anchors

    def _text_match(self, text: str) -> list[Anchor]:
        """Names that contain every word of the mention, most similar first, above the floor."""
        key = normalize_name(text)
        rows = self.store.names_containing(key.split(), limit=50)
        scored = sorted(
            ((SequenceMatcher(None, key, normalize_name(row["name"] or "")).ratio(), row) for row in rows),
            key=lambda pair: -pair[0],
        )
        return [
            Anchor(text, row["id"], row["name"], domain_labels(row["labels"]), "text", round(score, 4))
            for score, row in scored[: self.max_candidates]
            if score >= TEXT_FLOOR
        ]

    def resolve_all(self, mentions: list[Mention]) -> list[Anchor]:
        """Anchors for every mention, without repeating a node."""
        seen, anchors = set(), []
        for mention in mentions:
            for anchor in self.resolve(mention):
                if anchor.id not in seen:
                    seen.add(anchor.id)
                    anchors.append(anchor)
        return anchors
