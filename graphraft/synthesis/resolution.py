"""Resolve mentions to anchor node ids: exact normalised name through the index first, else
the close names, found two ways and pooled: the nearest names by the vector index above a
similarity floor, and the names a character edit or two away (rapidfuzz's edit-distance ratio
over the graph's name dictionary), which catch typos the embedding misses ("Forest Gumpp" is
0.60 from "Forrest Gump" by cosine, 0.87 by characters). Ambiguous names keep several
candidates, and every anchor records how it was found.

A graph loaded without name embeddings (``--no-embed``) has no vector index: there a text
match (names containing the mention's words, ranked by string similarity) stands in for it,
and ``vector_missing`` says so for the caller to report."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass
from difflib import SequenceMatcher

from graphraft.config import FUZZY_FLOOR, MAX_CANDIDATES, SIMILARITY_FLOOR
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
#: the character match keeps at most this many names above FUZZY_FLOOR (graphraft.config),
#: chosen with it on seeded typos of the MetaQA validation entities (benchmarks/typo_linking.py)
FUZZY_CANDIDATES = 3
#: when no name matches exactly, anchors scoring more than this below the best are dropped:
#: a misspelled "Inside Mn" keeps *Inside Man* (0.95) and not *Inside* (0.80), which L1 would
#: otherwise be free to choose (chosen on the same typo set; None keeps every candidate)
CLOSE_MARGIN = 0.1

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

    return EntityResolver(
        store,
        lambda: make_embedder(settings),
        settings.similarity_floor,
        settings.max_candidates,
        fuzzy_floor=settings.fuzzy_floor,
    )


class EntityResolver:
    def __init__(
        self,
        store: GraphStore,
        embedder_factory: Callable[[], Embedder | None] | None = None,
        similarity_floor: float = SIMILARITY_FLOOR,
        max_candidates: int = MAX_CANDIDATES,
        fuzzy_floor: float | None = FUZZY_FLOOR,
        fuzzy_candidates: int = FUZZY_CANDIDATES,
        close_margin: float | None = CLOSE_MARGIN,
    ):
        self.store = store
        self._embedder_factory = embedder_factory
        self._embedder: Embedder | None = None
        self.similarity_floor = similarity_floor
        self.max_candidates = max_candidates
        self._vector_index: bool | None = None
        self.fuzzy_floor, self.fuzzy_candidates = fuzzy_floor, fuzzy_candidates
        self.close_margin = close_margin

    @property
    def vector_missing(self) -> bool:
        """True once a mention needed the vector index and the graph has none."""
        return self._vector_index is False

    @property
    def embedder(self) -> Embedder | None:
        """The settings' embedder, made on first need (None: none configured); ``ask`` reads what a
        question asks for with it too (one model in memory)."""
        if self._embedder is None and self._embedder_factory is not None:
            self._embedder = self._embedder_factory()
            self._embedder_factory = None
        return self._embedder

    def _embed(self, text: str) -> list[float] | None:
        embedder = self.embedder
        return embedder.embed([text])[0] if embedder is not None else None

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
            close = self._text_match(text)
        else:
            close = [
                Anchor(text, node["id"], node["name"], domain_labels(node["labels"]), "vector", round(similarity, 4))
                for node, similarity in self.store.nearest_names(vector, k=self.max_candidates)
                if similarity >= self.similarity_floor
            ]
        return self._pool(close + self._fuzzy_match(text))

    def _pool(self, anchors: list[Anchor]) -> list[Anchor]:
        """One anchor per node (its best score), those within ``close_margin`` of the best, the
        best ``max_candidates`` of them."""
        best: dict[str, Anchor] = {}
        for anchor in anchors:
            if anchor.id not in best or anchor.score > best[anchor.id].score:
                best[anchor.id] = anchor
        ranked = sorted(best.values(), key=lambda a: (-a.score, a.name, a.id))  # ties: by name, the same everywhere
        if ranked and self.close_margin is not None:
            ranked = [a for a in ranked if a.score >= ranked[0].score - self.close_margin]
        return ranked[: self.max_candidates]

    def _fuzzy_match(self, text: str) -> list[Anchor]:
        """Nodes whose normalised name is within a few character edits of the mention's."""
        if self.fuzzy_floor is None:
            return []
        from rapidfuzz import fuzz, process

        found = process.extract(
            normalize_name(text),
            self.store.name_counts().keys(),  # the store's cached dictionary (dropped on a load)
            scorer=fuzz.ratio,
            processor=None,
            limit=self.fuzzy_candidates,
            score_cutoff=self.fuzzy_floor * 100,
        )
        return [
            Anchor(text, row["id"], row["name"], domain_labels(row["labels"]), "fuzzy", round(score / 100, 4))
            for name, score, _ in found
            for row in self.store.nodes_by_name(name, limit=self.max_candidates)
        ]

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

    def resolve_all(self, mentions: list[Mention], check: Callable[[], None] | None = None) -> list[Anchor]:
        """Anchors for every mention, without repeating a node. ``check`` is called before each
        mention (a deadline's check raises when time is up)."""
        seen, anchors = set(), []
        for mention in mentions:
            if check is not None:
                check()
            for anchor in self.resolve(mention):
                if anchor.id not in seen:
                    seen.add(anchor.id)
                    anchors.append(anchor)
        return anchors
