"""Graph side: stores, the embedded server, schema and loaders."""

from __future__ import annotations

import hashlib
import json

from graphraft.config import Settings
from graphraft.graph.embedded import EmbeddedServer, GraphCatalog, ServerInfo
from graphraft.graph.naming import NamingRule
from graphraft.graph.store import GraphStore

DEFAULT_GRAPH = "demo"
_CURRENT_GRAPH_FILE = "current_graph.json"


def embedded_server(settings: Settings) -> EmbeddedServer:
    return EmbeddedServer(settings.data_dir, port=settings.embedded_port)


def embedded_store(server: EmbeddedServer, graph: str, info: ServerInfo | None = None, **kwargs) -> GraphStore:
    """A store on ``graph`` of the running embedded server (``info`` from its start or status)."""
    from graphraft.errors import DatabaseUnavailableError
    from graphraft.graph.falkor import FalkorDBStore

    info = info or server.status()
    if info is None:
        raise DatabaseUnavailableError(f"the embedded FalkorDB is not running in {server.data_dir}: graphraft db start")
    return FalkorDBStore(
        graph, host=info.host, port=info.port, password=server.password(), catalog=server.catalog, **kwargs
    )


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


def managed_neo4j(settings: Settings):
    """The Neo4j server `graphraft neo4j start` runs for these settings (its data folder)."""
    from graphraft.graph.neo4j_server import Neo4jServer

    return Neo4jServer(
        settings.neo4j_dir,
        settings.neo4j_jars or settings.home / "cache" / "neo4j",
        port=settings.neo4j_port,
        heap=settings.neo4j_heap,
        pagecache=settings.neo4j_pagecache,
    )


def neo4j_catalog(settings: Settings) -> GraphCatalog:
    """Where the graphs loaded into one Neo4j database are recorded (for lost-graph messages)."""
    key = f"{settings.neo4j_uri}|{settings.neo4j_database or ''}"
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return GraphCatalog(settings.home / "neo4j-catalogs" / f"{digest}.json")


def connect_neo4j(settings: Settings, graph: str, **common) -> GraphStore:
    from graphraft.graph.neo4j_store import Neo4jStore

    return Neo4jStore(
        settings.neo4j_uri,
        settings.neo4j_username,
        settings.neo4j_secret(),
        graph=graph,
        database=settings.neo4j_database,
        catalog=neo4j_catalog(settings),
        **common,
    )


def open_store(settings: Settings, graph: str | None = None, create: bool = False) -> GraphStore:
    """Connect to the configured database; with none configured, start the embedded one.

    A graph that does not exist (or was lost) is an error unless ``create`` (loading) says
    it is about to be written."""
    common = dict(
        naming=NamingRule(settings.name_properties),
        query_timeout_ms=settings.query_timeout_ms,
        batch_size=settings.load_batch_size,
        cache_dir=settings.home / "cache",
        connect_timeout_s=settings.connect_timeout_s,
        write_timeout_ms=settings.write_timeout_ms,
    )
    from graphraft.graph.falkor import FalkorDBStore

    name = graph or current_graph(settings)
    if settings.uses_neo4j:
        store = connect_neo4j(settings, name, **common)
    elif settings.falkordb_port:
        where = dict(host=settings.falkordb_host, port=settings.falkordb_port, password=settings.falkordb_secret())
        store = FalkorDBStore(name, **where, **common)
    else:
        server = embedded_server(settings)
        info, _ = server.start()
        store = embedded_store(server, name, info, **common)
    if not create:
        try:
            store.require_graph()
        except BaseException:
            store.close()
            raise
    return store


__all__ = ["EmbeddedServer", "GraphStore", "current_graph", "embedded_store", "open_store", "remember_graph"]
