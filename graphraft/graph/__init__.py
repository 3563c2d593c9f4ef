"""Graph side: stores, the embedded server, schema and loaders."""

from __future__ import annotations

import json

from graphraft.config import Settings
from graphraft.graph.embedded import EmbeddedServer
from graphraft.graph.store import GraphStore

DEFAULT_GRAPH = "demo"
_CURRENT_GRAPH_FILE = "current_graph.json"


def embedded_server(settings: Settings) -> EmbeddedServer:
    return EmbeddedServer(settings.data_dir, port=settings.embedded_port)


def current_graph(settings: Settings) -> str:
    """The graph to use: explicit setting, else the one loaded last, else the demo graph."""
    if settings.graph:
        return settings.graph
    try:
        return json.loads((settings.home / _CURRENT_GRAPH_FILE).read_text())["graph"]
    except (OSError, ValueError, KeyError):
        return DEFAULT_GRAPH


def remember_graph(settings: Settings, graph: str) -> None:
    """Make ``graph`` the default for later commands (after a load)."""
    try:
        settings.home.mkdir(parents=True, exist_ok=True)
        (settings.home / _CURRENT_GRAPH_FILE).write_text(json.dumps({"graph": graph}))
    except OSError:
        pass


def open_store(settings: Settings, graph: str | None = None, create: bool = False) -> GraphStore:
    """Connect to the configured database; with none configured, start the embedded one.

    A graph that does not exist (or was lost) is an error unless ``create`` (loading) says
    it is about to be written."""
    common = dict(
        query_timeout_ms=settings.query_timeout_ms,
        batch_size=settings.load_batch_size,
        cache_dir=settings.home / "cache",
        connect_timeout_s=settings.connect_timeout_s,
        write_timeout_ms=settings.write_timeout_ms,
    )
    if settings.uses_neo4j:
        from graphraft.graph.neo4j_store import Neo4jStore

        password = settings.neo4j_password.get_secret_value() if settings.neo4j_password else None
        return Neo4jStore(
            settings.neo4j_uri, settings.neo4j_username, password, database=settings.neo4j_database, **common
        )
    from graphraft.graph.falkor import FalkorDBStore

    name = graph or current_graph(settings)
    if settings.falkordb_port:
        store = FalkorDBStore(name, host=settings.falkordb_host, port=settings.falkordb_port, **common)
    else:
        server = embedded_server(settings)
        info, _ = server.start()
        store = FalkorDBStore(name, host=info.host, port=info.port, catalog=server.catalog, **common)
    if not create:
        try:
            store.require_graph()
        except BaseException:
            store.close()
            raise
    return store


__all__ = ["EmbeddedServer", "GraphStore", "current_graph", "open_store", "remember_graph"]
