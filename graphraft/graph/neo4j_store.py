"""Neo4j 5 backend (official ``neo4j`` driver). Only what differs from FalkorDB lives here.

**Graphs in one database.** Neo4j Community has one user database, so a graph is a
namespace inside it: every node of graph ``G`` carries the label ``__Graph_G__`` (in place of
FalkorDB's ``__Entity__``; the graph is FalkorDB's key). The unique-id constraint, the name
indexes and the vector index are per graph label, so ids are unique within a graph, two graphs
may share ids, and a name lookup or vector search sees one graph. Relationships never join two
graphs (they are loaded between nodes of one graph), so a rendered query is confined to its graph
by the label on its root node, which the executed form adds (``GraphStore.graph_label``).
``clear()`` deletes that label's nodes and drops its indexes; the other graphs are untouched.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import re
from collections.abc import Sequence
from typing import Any

import neo4j
from neo4j.exceptions import AuthError, ClientError, Neo4jError, ServiceUnavailable, SessionExpired
from neo4j.graph import Node, Relationship
from neo4j.graph import Path as GraphPath

from graphraft.config import WRITE_TIMEOUT_MS
from graphraft.errors import (
    DatabaseUnavailableError,
    QueryError,
    QueryTimeoutError,
    ReadOnlyViolationError,
)
from graphraft.graph.cypher_text import label_expression, quote_identifier
from graphraft.graph.embedded import GraphCatalog
from graphraft.graph.records import EMBEDDING_PROPERTY, WriteStats, graph_label, name_expression
from graphraft.graph.store import GraphStore, Row

GRAPH_LABEL = re.compile(r"^__Graph_(.+)__$")
# How long past a call's own limit the client waits before calling the server stalled. The
# server ends a transaction past its timeout when its monitor next looks: every 2 s by default
# (`db.transaction.monitor.check.interval`; the server `graphraft neo4j start` runs looks every
# 100 ms), so the server's clear "exceeded its limit" comes first whenever the server is alive.
SERVER_GRACE_S = 2.5


def _timed_out(exc: BaseException) -> bool:
    """Whether the driver gave up waiting on the socket (a stalled server), not a refusal."""
    seen = exc
    while seen is not None:
        if isinstance(seen, TimeoutError) or "handshake" in str(seen) or "timed out" in str(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def clear_query(label: str) -> str:
    """Delete one graph's nodes and relationships in batches (CALL ... IN TRANSACTIONS needs an
    auto-commit transaction, hence session.run in clear())."""
    return f"MATCH (n{label_expression((label,))}) CALL (n) {{ DETACH DELETE n }} IN TRANSACTIONS OF 10000 ROWS"


def index_name(kind: str, graph: str) -> str:
    """A stable, plain index name for one graph (graph names may hold any character)."""
    slug = re.sub(r"[^A-Za-z0-9]+", "_", graph).strip("_")[:40] or "graph"
    return f"graphraft_{kind}_{slug}_{hashlib.sha1(graph.encode()).hexdigest()[:8]}"


def _plain(value: Any) -> Any:
    if isinstance(value, Node):
        return {"labels": sorted(value.labels), **{k: v for k, v in value.items() if k != EMBEDDING_PROPERTY}}
    if isinstance(value, Relationship):
        return {"type": value.type, **dict(value.items())}
    if isinstance(value, GraphPath):
        return {"nodes": [_plain(n) for n in value.nodes], "edges": [_plain(r) for r in value.relationships]}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


class Neo4jStore(GraphStore):
    """A Neo4j 5 database. Limits: reads and writes run in transactions with a server-side
    timeout; the driver's connect, pool-acquisition and send limits are set; waiting for a
    reply is limited by the server's ``connection.recv_timeout_seconds`` hint."""

    def __init__(
        self,
        uri: str,
        username: str,
        password: str | None,
        graph: str = "demo",
        database: str | None = None,
        connect_timeout_s: float = 5.0,
        write_timeout_ms: int = WRITE_TIMEOUT_MS,
        catalog: GraphCatalog | None = None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.graph_name = graph
        self.entity_label = self.graph_label = graph_label(graph)
        self.vector_index = index_name("vector", graph)
        self.database = database
        self.write_timeout_ms = write_timeout_ms
        self.catalog = catalog
        self._calls = concurrent.futures.ThreadPoolExecutor(16, thread_name_prefix="graphraft-neo4j")
        self.server = f"Neo4j at {uri}" + (f", database '{database}'" if database else "")
        self.description = f"{self.server}, graph '{graph}'"
        self.identity = self.description
        try:
            self._driver = neo4j.GraphDatabase.driver(
                uri,
                auth=(username, password or ""),
                connection_timeout=connect_timeout_s,
                connection_acquisition_timeout=connect_timeout_s * 2,
                connection_write_timeout=max(30.0, connect_timeout_s),
                # a managed transaction is retried for at most this long (writes; reads are not retried)
                max_transaction_retry_time=connect_timeout_s * 2,
                # the server's hints (a label not in use yet, a deprecation) are not the user's to act on
                notifications_min_severity="OFF",
            )
            self._driver.verify_connectivity()
        except AuthError as exc:
            raise DatabaseUnavailableError(f"{self.description} refused the credentials: {exc.message}") from None
        except (ServiceUnavailable, OSError, ValueError, Neo4jError) as exc:
            if _timed_out(exc):
                raise DatabaseUnavailableError(
                    f"{self.server} did not answer within {connect_timeout_s:g}s (is the server stalled?)"
                ) from None
            raise DatabaseUnavailableError(f"cannot reach {self.description}: {exc}") from None

    def _bounded(self, work, limit_s: float):
        """``work()`` on a worker thread, waited for at most ``limit_s``: the client-side limit.
        The driver waits for a reply as long as the server's keep-alive hint says (2 min by
        default), so a stalled server would hold the caller that long; here the caller gets its
        error in time and the worker gives up when the socket does."""
        future = self._calls.submit(work)
        try:
            return future.result(timeout=limit_s)
        except concurrent.futures.TimeoutError:
            raise DatabaseUnavailableError(
                f"no answer from {self.server} within {limit_s:.0f}s (is the server stalled?)"
            ) from None

    def _unavailable(self, exc: Exception) -> DatabaseUnavailableError:
        if _timed_out(exc):
            return DatabaseUnavailableError(f"no answer from {self.server} in time (is the server stalled?)")
        return DatabaseUnavailableError(f"lost connection to {self.description}: {exc}")

    def _translate(self, exc: Neo4jError, timeout_ms: int | None) -> Exception:
        code = exc.code or ""
        if "TransactionTimedOut" in code or "Timeout" in code:
            return QueryTimeoutError(f"query exceeded its {timeout_ms} ms limit on {self.description}")
        if "ConstraintValidationFailed" in code:
            return QueryError(
                f"a node id is already in {self.description} with other labels; ids must be unique "
                "(load it again, replacing the graph, to start over)"
            )
        if "AccessMode" in code or "ForbiddenOnReadOnlyDatabase" in code:
            return ReadOnlyViolationError(f"refused a write on the read-only path of {self.description}")
        return QueryError(f"{self.description} rejected the query: {exc.message}")

    def _read(self, query: str, params: dict | None, timeout_ms: int) -> list[Row]:
        def work():
            # READ access mode: the server refuses any write in this transaction. An explicit
            # transaction, not execute_read: the driver would retry a failed read for up to
            # 30 s, past the caller's limit.
            with (
                self._driver.session(database=self.database, default_access_mode=neo4j.READ_ACCESS) as session,
                session.begin_transaction(timeout=timeout_ms / 1000) as tx,
            ):
                rows = [{k: _plain(v) for k, v in record.items()} for record in tx.run(query, params or {})]
                tx.commit()
                return rows

        try:
            # the server's limit first (a clear message), the client's after its grace (a stall)
            return self._bounded(work, timeout_ms / 1000 + SERVER_GRACE_S)
        except ClientError as exc:
            raise self._translate(exc, timeout_ms) from None
        except (ServiceUnavailable, SessionExpired) as exc:
            raise self._unavailable(exc) from None
        except Neo4jError as exc:
            raise self._translate(exc, timeout_ms) from None

    def _plan_operators(self, query: str, params: dict | None = None) -> list[str]:
        def work():
            with (
                self._driver.session(database=self.database, default_access_mode=neo4j.READ_ACCESS) as session,
                session.begin_transaction(timeout=self.query_timeout_ms / 1000) as tx,
            ):
                return tx.run("EXPLAIN " + query, params or {}).consume().plan or {}

        try:
            plan = self._bounded(work, self.query_timeout_ms / 1000 + SERVER_GRACE_S)
        except (ServiceUnavailable, SessionExpired) as exc:
            raise self._unavailable(exc) from None
        except Neo4jError as exc:
            raise self._translate(exc, self.query_timeout_ms) from None
        names, stack = [], [plan]
        while stack:
            node = stack.pop()
            names.append(str(node.get("operatorType", "")))
            stack.extend(node.get("children", []))
        return names

    def write(self, query: str, params: dict | None = None) -> tuple[list[Row], WriteStats]:
        @neo4j.unit_of_work(timeout=self.write_timeout_ms / 1000)
        def work(tx):
            result = tx.run(query, params or {})
            records = [{k: _plain(v) for k, v in r.items()} for r in result]
            return records, result.consume().counters

        def run():
            with self._driver.session(database=self.database) as session:
                return session.execute_write(work)

        try:
            records, c = self._bounded(run, self.write_timeout_ms / 1000 + SERVER_GRACE_S)
        except (ServiceUnavailable, SessionExpired) as exc:
            raise self._unavailable(exc) from None
        except Neo4jError as exc:
            raise self._translate(exc, self.write_timeout_ms) from None
        stats = WriteStats(
            nodes_created=c.nodes_created,
            relationships_created=c.relationships_created,
            properties_set=c.properties_set,
            labels_added=c.labels_added,
        )
        return records, stats

    # ------------------------------------------------------------------ this graph
    def graphs(self) -> list[str]:
        """The graphs in this database: the names of the graph labels that have nodes."""
        rows = self.read("CALL db.labels() YIELD label RETURN label")
        return sorted(m.group(1) for r in rows if (m := GRAPH_LABEL.match(r["label"])))

    def _graph_exists(self) -> bool:
        return bool(self.read(f"MATCH (n{self._entity}) RETURN 1 AS found LIMIT 1"))

    def _lost_hint(self) -> str:
        return " (or was deleted by hand)"

    def sync(self) -> None:
        """Commits are durable in Neo4j; record the graph's counts for lost-graph messages."""
        if self.catalog is not None:
            self.catalog.record(self.graph_name, self.count_nodes(), self.count_relationships())

    # ------------------------------------------------------------------ indexes
    def _existing_indexes(self) -> set[tuple[str, str]]:
        rows = self.read(
            "SHOW INDEXES YIELD type, labelsOrTypes, properties, entityType "
            "WHERE entityType = 'NODE' RETURN type, labelsOrTypes, properties"
        )
        return {
            (row["labelsOrTypes"][0], row["properties"][0])
            for row in rows
            if row["labelsOrTypes"] and row["properties"] and row["type"] == "RANGE"
        }

    def ensure_indexes(self, labels=()) -> None:
        super().ensure_indexes(labels)
        self.write("CALL db.awaitIndexes(300)")  # a query planned before an index is online scans

    def _create_index(self, label: str, prop: str) -> None:
        if label == self.entity_label and prop == "id":
            # Unique ids (within the graph) are an invariant; the constraint also provides the index.
            try:
                self.write(
                    f"CREATE CONSTRAINT {index_name('id', self.graph_name)} IF NOT EXISTS "
                    f"FOR (n{self._entity}) REQUIRE n.id IS UNIQUE"
                )
            except QueryError as exc:
                if "Unable to create Constraint" not in str(exc):
                    raise
                raise self._ids_not_unique() from None
            return
        self.write(f"CREATE INDEX IF NOT EXISTS FOR (n:{quote_identifier(label)}) ON (n.{quote_identifier(prop)})")

    def _ensure_vector_index(self, dimension: int) -> None:
        self.write(
            f"CREATE VECTOR INDEX {self.vector_index} IF NOT EXISTS FOR (n{self._entity}) "
            f"ON (n.{EMBEDDING_PROPERTY}) OPTIONS {{indexConfig: {{`vector.dimensions`: {int(dimension)}, "
            "`vector.similarity_function`: 'cosine'}}"
        )
        self.write("CALL db.awaitIndexes(300)")

    def has_vector_index(self) -> bool:
        return bool(
            self.read(
                "SHOW INDEXES YIELD name, state WHERE name = $name AND state = 'ONLINE' RETURN name",
                {"name": self.vector_index},
            )
        )

    def _set_embeddings_query(self) -> str:
        return (
            f"UNWIND $rows AS row MATCH (n{self._entity} {{id: row.id}}) "
            f"CALL db.create.setNodeVectorProperty(n, '{EMBEDDING_PROPERTY}', row.vector) "
            "RETURN count(n) AS matched"
        )

    def _vector_search(self, vector: Sequence[float], k: int) -> list[Row]:
        return self.read(
            f"CALL db.index.vector.queryNodes('{self.vector_index}', $k, $v) YIELD node, score "
            f"RETURN node.id AS id, {name_expression('node')} AS name, labels(node) AS labels, score",
            {"k": int(k), "v": [float(x) for x in vector]},
        )

    @staticmethod
    def _cosine(score: float) -> float:
        return 2.0 * score - 1.0  # Neo4j reports (1 + cosine) / 2

    def clear(self) -> None:
        """Delete this graph: its nodes, their relationships, its own indexes and constraint;
        nothing of the other graphs in the database."""
        query = neo4j.Query(clear_query(self.entity_label), timeout=self.write_timeout_ms / 1000)

        def work():
            with self._driver.session(database=self.database) as session:
                session.run(query).consume()

        try:
            self._bounded(work, self.write_timeout_ms / 1000 + SERVER_GRACE_S)
        except (ServiceUnavailable, SessionExpired) as exc:
            raise self._unavailable(exc) from None
        except Neo4jError as exc:
            raise self._translate(exc, self.write_timeout_ms) from None
        for kind, listing in (("CONSTRAINT", "CONSTRAINTS"), ("INDEX", "INDEXES")):
            rows = self.read(
                f"SHOW {listing} YIELD name, labelsOrTypes WHERE $label IN labelsOrTypes RETURN name",
                {"label": self.entity_label},
            )
            for row in rows:
                self.write(f"DROP {kind} {quote_identifier(row['name'])} IF EXISTS")
        if self.catalog is not None:
            self.catalog.forget(self.graph_name)
        self.invalidate_schema()

    def close(self) -> None:
        self._calls.shutdown(wait=False, cancel_futures=True)
        self._driver.close()
