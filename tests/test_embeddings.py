"""Name embedders: the bundled local model and an OpenAI-compatible endpoint."""

from __future__ import annotations

import math

import pytest

from graphraft.config import load_settings
from graphraft.errors import ConfigurationError, EmbeddingError
from graphraft.graph.embeddings import OpenAIEmbedder, embed_missing_names, make_embedder

from local_endpoint import json_endpoint
from movie_graph import load


def _vector(text: str) -> list[float]:
    """A deterministic 8-dimensional embedding: letter counts folded into 8 buckets."""
    vec = [0.0] * 8
    for ch in text.lower():
        if ch.isalpha():
            vec[ord(ch) % 8] += 1.0
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


def embeddings_reply(path, body):
    """Just enough of the embeddings API; the data comes back in reverse order, as it may."""
    if body["model"] == "broken":
        return 500, None
    inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
    data = [{"object": "embedding", "index": i, "embedding": _vector(text)} for i, text in enumerate(inputs)]
    return 200, {
        "object": "list",
        "data": data[::-1],
        "model": body["model"],
        "usage": {"prompt_tokens": 1, "total_tokens": 1},
    }


@pytest.fixture
def endpoint():
    with json_endpoint(embeddings_reply) as (url, calls):
        yield url, calls


def test_openai_embedder_is_selected_by_configuration_and_fills_the_vector_index(endpoint, store, graphraft_home):
    url, calls = endpoint
    settings = load_settings(home=graphraft_home, embedder="openai", embedding_model="tiny-embed", openai_base_url=url)
    embedder = make_embedder(settings)
    assert isinstance(embedder, OpenAIEmbedder) and embedder.dimension == 8
    load(store)
    assert embed_missing_names(store, embedder) == 11
    # replies may come in any order; vectors are matched back by index
    best, score = store.nearest_names(_vector("Penny Marshall"), k=1)[0]
    assert best["id"] == "p2" and score == pytest.approx(1.0, abs=1e-4)
    assert all(call["path"] == "/v1/embeddings" and call["body"]["model"] == "tiny-embed" for call in calls)


def test_openai_embedder_needs_a_model_and_reports_failures(endpoint, graphraft_home):
    url, _ = endpoint
    with pytest.raises(ConfigurationError, match="GRAPHRAFT_EMBEDDING_MODEL"):
        make_embedder(load_settings(home=graphraft_home, embedder="openai", openai_base_url=url))
    with pytest.raises(EmbeddingError, match="embedding endpoint failed \\(broken\\)"):
        OpenAIEmbedder("broken", url, None)


def test_bundled_embedder_normalises_and_ranks_similar_names(embedder):
    vectors = embedder.embed(["Tom Hanks", "tom hank", "Science Fiction"])
    assert embedder.dimension == 384 and all(len(v) == 384 for v in vectors)
    assert all(abs(sum(x * x for x in v) - 1.0) < 1e-4 for v in vectors)
    same = sum(a * b for a, b in zip(vectors[0], vectors[1]))
    other = sum(a * b for a, b in zip(vectors[0], vectors[2]))
    assert same > 0.8 > other
