"""Solved questions shown in L1's prompt (retrieved few-shot examples): for a question, the ``k``
training questions most like it, by the cosine of their all-MiniLM-L6-v2 vectors with what
they name masked (``question_form``), with the queries that answer them. L1 trained with them
(``prompt_examples`` in its config) learns to write its query in the light of its nearest
neighbours' queries; its adapter keeps the pool (``exemplars.jsonl`` and their vectors), so
`ask`, `eval` and L2's training show the same ones.

The similarity is always the bundled MiniLM's, whatever embedder the graph's names use: the
neighbours a question gets must be the ones it would have got in training."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from pydantic import BaseModel

from graphraft.errors import ConfigurationError

EXEMPLARS_FILE = "exemplars.jsonl"
VECTORS_FILE = "exemplars.npy"
SIMILARITY = "all-MiniLM-L6-v2 (bundled), cosine"


class Exemplar(BaseModel, frozen=True):
    """A solved question: its text, the query (the renderer's text) that answers it, its graph."""

    question: str
    cypher: str
    graph: str | None = None


def bundled_embedder(home: Path):
    from graphraft.graph.embeddings import LocalEmbedder, bundled_minilm_path

    return LocalEmbedder(bundled_minilm_path(home))


def _key(question: str) -> str:
    return " ".join(question.casefold().split())


# what names a thing rather than says how the question asks: a [marked] mention, quoted text, a
# number, a run of capitalised words after the first word (in English, a name)
_NAMED = re.compile(
    r"\[[^\]]*\]|'[^']+'(?!\w)|\"[^\"]+\"|‘[^’]+’|“[^”]+”|\d[\d,.]*"
    r"|(?<=\s)(?:[A-Z][\w&'.-]*)(?:\s+(?:of|the|and|de|la|von|van|[A-Z][\w&'.-]*))*(?<![\s])"
)


def question_form(question: str) -> str:
    """The question with what it names masked (``X``): how it asks, compared between questions
    (otherwise two questions about one person are nearer than two that ask the same of two)."""
    return _NAMED.sub("X", question)


class Exemplars:
    """A pool of solved questions and ``k``: how many of them a prompt shows. ``embed``: texts ->
    normalised vectors (the bundled MiniLM's ``embed``); ``vectors``: the pool's, when known."""

    def __init__(self, pool: Sequence[Exemplar], k: int, embed, vectors: np.ndarray | None = None):
        if k < 1:
            raise ValueError("k must be at least 1")
        self.pool, self.k, self.embed = list(pool), k, embed
        if vectors is None:
            forms = [question_form(e.question) for e in self.pool]
            vectors = np.asarray(embed(forms) if self.pool else [], dtype=np.float32)
        self.vectors = np.asarray(vectors, dtype=np.float32).reshape(len(self.pool), -1)
        self._keys = [_key(e.question) for e in self.pool]

    def for_graph(self, graph: str | None) -> Exemplars:
        """The pool's questions of ``graph`` (all of them when none is of it: a pool of one graph
        asked on a copy of it under another name)."""
        keep = [i for i, e in enumerate(self.pool) if e.graph == graph]
        if not keep or len(keep) == len(self.pool):
            return self
        return Exemplars([self.pool[i] for i in keep], self.k, self.embed, self.vectors[keep])

    def nearest(self, questions: Sequence[str]) -> list[list[Exemplar]]:
        """Each question's ``k`` nearest solved questions, the nearest last (just before the
        question), a question of the same text as the asked one never among them (in training
        the pool holds the question itself); ties go to the earlier in the pool."""
        return [[e for e, _ in reversed(found)] for found in self.nearest_scored(questions)]

    def nearest_scored(self, questions: Sequence[str]) -> list[list[tuple[Exemplar, float]]]:
        """``nearest`` with each solved question's cosine to the question, the nearest first."""
        if not questions:
            return []
        if not self.pool:
            return [[] for _ in questions]
        forms = [question_form(q) for q in questions]
        asked = np.asarray(self.embed(forms), dtype=np.float32).reshape(len(questions), -1)
        similarity = asked @ self.vectors.T
        out = []
        for question, row in zip(questions, similarity):
            own = _key(question)
            order = np.argsort(-row, kind="stable")
            chosen = [int(i) for i in order if self._keys[i] != own][: self.k]
            out.append([(self.pool[i], float(row[i])) for i in chosen])
        return out

    def save(self, folder: Path) -> None:
        folder = Path(folder)
        (folder / EXEMPLARS_FILE).write_text(
            "".join(json.dumps(e.model_dump(), ensure_ascii=False) + "\n" for e in self.pool)
        )
        np.save(folder / VECTORS_FILE, self.vectors)

    @classmethod
    def load(cls, folder: Path, k: int, embed) -> Exemplars:
        folder = Path(folder)
        path = folder / EXEMPLARS_FILE
        if not path.is_file():
            raise ConfigurationError(
                f"{folder}: the adapter shows {k} solved questions in L1's prompt but {path.name} is missing"
            )
        try:
            pool = [Exemplar.model_validate_json(line) for line in path.read_text().splitlines() if line.strip()]
            vectors = np.load(folder / VECTORS_FILE) if (folder / VECTORS_FILE).is_file() else None
        except ValueError as exc:
            raise ConfigurationError(f"{path}: unreadable solved questions: {exc}") from None
        if vectors is not None and len(vectors) != len(pool):
            vectors = None  # made again from the questions
        return cls(pool, k, embed, vectors)
