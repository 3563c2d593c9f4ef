"""Neo4j 5 backend (official ``neo4j`` driver). Only what differs from FalkorDB lives here."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import neo4j
from neo4j.exceptions import AuthError, ClientError, Neo4jError, ServiceUnavailable
from neo4j.graph import Node, Relationship
from neo4j.graph import Path as GraphPath

from graphraft.errors import DatabaseUnavailableError, QueryError, QueryTimeoutError, ReadOnlyViolationError
from graphraft.graph.cypher_text import label_expression, quote_identifier
from graphraft.graph.records import EMBEDDING_PROPERTY, ENTITY_LABEL, WriteStats
from graphraft.graph.store import GraphStore, Row

VECTOR_INDEX = "graphraft_entity_embedding"
# CALL ... IN TRANSACTIONS needs an auto-commit transaction, hence session.run in clear()
CLEAR_QUERY = "MATCH (n) CALL { WITH n DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS"


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
        database: str | None = None,
        connect_timeout_s: float = 5.0,
        write_timeout_ms: int = 300_000,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.database = database
        self.write_timeout_ms = write_timeout_ms
        self.description = f"Neo4j at {uri}" + (f", database '{database}'" if database else "")
        self.identity = self.description
        try:
            self._driver = neo4j.GraphDatabase.driver(
                uri,
                auth=(username, password or ""),
                connection_timeout=connect_timeout_s,
                connection_acquisition_timeout=connect_timeout_s * 2,
                connection_write_timeout=max(30.0, connect_timeout_s),
            )
            self._driver.verify_connectivity()
        except AuthError as exc:
            raise DatabaseUnavailableError(f"{self.description} refused the credentials: {exc.message}") from None
        except (ServiceUnavailable, OSError, ValueError, Neo4jError) as exc:
            raise DatabaseUnavailableError(f"cannot reach {self.description}: {exc}") from None

    def _translate(self, exc: Neo4jError, timeout_ms: int | None) -> Exception:
        code = exc.code or ""
        if "TransactionTimedOut" in code or "Timeout" in code:
            return QueryTimeoutError(f"query exceeded its {timeout_ms} ms limit on {self.description}")
        if "AccessMode" in code or "ForbiddenOnReadOnlyDatabase" in code:
            return ReadOnlyViolationError(f"refused a write on the read-only path of {self.description}")
        return QueryError(f"{self.description} rejected the query: {exc.message}")

    def read(self, query: str, params: dict | None = None, timeout_ms: int | None = None) -> list[Row]:
        timeout_ms = timeout_ms or self.query_timeout_ms

        @neo4j.unit_of_work(timeout=timeout_ms / 1000)
        def work(tx):
            return [{k: _plain(v) for k, v in record.items()} for record in tx.run(query, params or {})]

        try:
            # READ access mode: the server refuses any write in this transaction.
            with self._driver.session(database=self.database, default_access_mode=neo4j.READ_ACCESS) as session:
                return session.execute_read(work)
        except ClientError as exc:
            raise self._translate(exc, timeout_ms) from None
        except ServiceUnavailable as exc:
            raise DatabaseUnavailableError(f"lost connection to {self.description}: {exc}") from None
        except Neo4jError as exc:
            raise self._translate(exc, timeout_ms) from None

    def write(self, query: str, params: dict | None = None) -> tuple[list[Row], WriteStats]:
        @neo4j.unit_of_work(timeout=self.write_timeout_ms / 1000)
        def work(tx):
            result = tx.run(query, params or {})
            records = [{k: _plain(v) for k, v in r.items()} for r in result]
            return records, result.consume().counters

        try:
            with self._driver.session(database=self.database) as session:
                records, c = session.execute_write(work)
        except ServiceUnavailable as exc:
            raise DatabaseUnavailableError(f"lost connection to {self.description}: {exc}") from None
        except Neo4jError as exc:
            raise self._translate(exc, self.write_timeout_ms) from None
        stats = WriteStats(
            nodes_created=c.nodes_created,
            relationships_created=c.relationships_created,
            properties_set=c.properties_set,
            labels_added=c.labels_added,
        )
        return records, stats

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

    def _create_index(self, label: str, prop: str) -> None:
        if label == ENTITY_LABEL and prop == "id":
            # Unique ids are an invariant; the constraint also provides the index.
            self.write(
                f"CREATE CONSTRAINT graphraft_entity_id IF NOT EXISTS FOR (n{label_expression((label,))}) "
                "REQUIRE n.id IS UNIQUE"
            )
            return
        self.write(f"CREATE INDEX IF NOT EXISTS FOR (n:{quote_identifier(label)}) ON (n.{quote_identifier(prop)})")

    def _ensure_vector_index(self, dimension: int) -> None:
        self.write(
            f"CREATE VECTOR INDEX {VECTOR_INDEX} IF NOT EXISTS FOR (n{label_expression((ENTITY_LABEL,))}) "
            f"ON (n.{EMBEDDING_PROPERTY}) OPTIONS {{indexConfig: {{`vector.dimensions`: {int(dimension)}, "
            "`vector.similarity_function`: 'cosine'}}"
        )
        self.write("CALL db.awaitIndexes(300)")

    def has_vector_index(self) -> bool:
        return bool(
            self.read(
                "SHOW INDEXES YIELD name, state WHERE name = $name AND state = 'ONLINE' RETURN name",
                {"name": VECTOR_INDEX},
            )
        )

    def _set_embeddings_query(self) -> str:
        return (
            f"UNWIND $rows AS row MATCH (n{label_expression((ENTITY_LABEL,))} {{id: row.id}}) "
            f"CALL db.create.setNodeVectorProperty(n, '{EMBEDDING_PROPERTY}', row.vector)"
        )

    def _vector_search(self, vector: Sequence[float], k: int) -> list[Row]:
        return self.read(
            f"CALL db.index.vector.queryNodes('{VECTOR_INDEX}', $k, $v) YIELD node, score "
            "RETURN node.id AS id, node.name AS name, labels(node) AS labels, score",
            {"k": int(k), "v": [float(x) for x in vector]},
        )

    @staticmethod
    def _cosine(score: float) -> float:
        return 2.0 * score - 1.0  # Neo4j reports (1 + cosine) / 2

    def clear(self) -> None:
        query = neo4j.Query(CLEAR_QUERY, timeout=self.write_timeout_ms / 1000)
        try:
            with self._driver.session(database=self.database) as session:
                session.run(query).consume()
        except ServiceUnavailable as exc:
            raise DatabaseUnavailableError(f"lost connection to {self.description}: {exc}") from None
        except Neo4jError as exc:
            raise self._translate(exc, self.write_timeout_ms) from None
        self.invalidate_schema()

    def close(self) -> None:
        self._driver.close()
