"""FalkorDB backend (official ``falkordb`` client): the embedded default and any FalkorDB server."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from falkordb import FalkorDB
from falkordb.edge import Edge
from falkordb.node import Node
from falkordb.path import Path as GraphPath
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError, ResponseError, TimeoutError as RedisTimeoutError

from graphraft.cypher_text import label_expression, quote_identifier
from graphraft.errors import (DatabaseUnavailableError, GraphNotFoundError, QueryError, QueryTimeoutError,
                              ReadOnlyViolationError)
from graphraft.graph.records import EMBEDDING_PROPERTY, ENTITY_LABEL, WriteStats
from graphraft.graph.store import GraphStore, Row


def _plain(value: Any) -> Any:
    """FalkorDB result values as plain Python data."""
    if isinstance(value, Node):
        return {"labels": list(value.labels or []), **{k: v for k, v in value.properties.items()
                                                        if k != EMBEDDING_PROPERTY}}
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
    def __init__(self, graph: str, host: str = "127.0.0.1", port: int = 6379, **kwargs):
        super().__init__(**kwargs)
        self.graph_name = graph
        self.host, self.port = host, port
        self.description = f"FalkorDB at {host}:{port}, graph '{graph}'"
        local = host in ("127.0.0.1", "localhost", "::1")
        self.identity = f"FalkorDB graph '{graph}'" if local else self.description
        try:
            self._db = FalkorDB(host=host, port=port)
            self._db.connection.ping()
        except RedisError as exc:
            raise DatabaseUnavailableError(f"cannot reach {self.description}: {exc}") from None
        self._graph = self._db.select_graph(graph)

    # ------------------------------------------------------------------ execution
    def _run(self, method, query: str, params: dict | None, timeout_ms: int | None):
        try:
            return method(query, params, timeout=timeout_ms)
        except ResponseError as exc:
            message = str(exc)
            if "timed out" in message.lower():
                raise QueryTimeoutError(
                    f"query exceeded its {timeout_ms} ms limit on {self.description}"
                ) from None
            if "empty key" in message.lower():
                raise GraphNotFoundError(
                    f"graph '{self.graph_name}' does not exist on FalkorDB at {self.host}:{self.port} "
                    "(load one with `graphraft load demo|metaqa|files`)"
                ) from None
            if "unique constraint violation" in message.lower():
                raise QueryError(
                    f"a node id is already in {self.description} with other labels; ids must be unique "
                    "(reload with --replace to start over)"
                ) from None
            if "read-only" in message.lower() or "RO_QUERY" in message:
                raise ReadOnlyViolationError(
                    f"refused a write on the read-only path of {self.description}"
                ) from None
            raise QueryError(f"{self.description} rejected the query: {message}") from None
        except RedisTimeoutError:
            raise QueryTimeoutError(f"no answer from {self.description} in time") from None
        except RedisConnectionError as exc:
            raise DatabaseUnavailableError(f"lost connection to {self.description}: {exc}") from None

    @staticmethod
    def _rows(result) -> list[Row]:
        names = [column[1] for column in result.header]
        return [dict(zip(names, map(_plain, row))) for row in result.result_set]

    def read(self, query: str, params: dict | None = None, timeout_ms: int | None = None) -> list[Row]:
        timeout_ms = timeout_ms or self.query_timeout_ms
        return self._rows(self._run(self._graph.ro_query, query, params, timeout_ms))

    def write(self, query: str, params: dict | None = None) -> tuple[list[Row], WriteStats]:
        result = self._run(self._graph.query, query, params, None)
        stats = WriteStats(
            nodes_created=int(result.nodes_created), relationships_created=int(result.relationships_created),
            properties_set=int(result.properties_set), labels_added=int(result.labels_added),
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
            self._db.connection.execute_command(
                "GRAPH.CONSTRAINT", "CREATE", self.graph_name, "UNIQUE", "NODE", ENTITY_LABEL, "PROPERTIES", "1", "id")
        except ResponseError as exc:
            if "already exists" not in str(exc).lower():
                raise QueryError(f"cannot create the unique id constraint on {self.description}: {exc}") from None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            rows = self.read("CALL db.constraints() YIELD label, properties, status RETURN label, properties, status")
            states = [r["status"] for r in rows if r["label"] == ENTITY_LABEL and r["properties"] == ["id"]]
            if states and states[0] == "OPERATIONAL":
                return
            if states and states[0] == "FAILED":
                raise QueryError(f"node ids are not unique in {self.description}; cannot add the id constraint")
            time.sleep(0.05)

    def _ensure_vector_index(self, dimension: int) -> None:
        rows = self.read("CALL db.indexes() YIELD label, properties, types RETURN label, properties, types")
        for row in rows:
            if row["label"] == ENTITY_LABEL and "VECTOR" in (row["types"].get(EMBEDDING_PROPERTY) or []):
                return
        self.write(
            f"CREATE VECTOR INDEX FOR (n{label_expression((ENTITY_LABEL,))}) ON (n.{EMBEDDING_PROPERTY}) "
            f"OPTIONS {{dimension: {int(dimension)}, similarityFunction: 'cosine'}}"
        )

    def _set_embeddings_query(self) -> str:
        return (f"UNWIND $rows AS row MATCH (n{label_expression((ENTITY_LABEL,))} {{id: row.id}}) "
                f"SET n.{EMBEDDING_PROPERTY} = vecf32(row.vector)")

    def _vector_search(self, vector: Sequence[float], k: int) -> list[tuple[Row, float]]:
        rows = self.read(
            f"CALL db.idx.vector.queryNodes('{ENTITY_LABEL}', '{EMBEDDING_PROPERTY}', $k, vecf32($v)) "
            "YIELD node, score RETURN node.id AS id, node.name AS name, labels(node) AS labels, score",
            {"k": int(k), "v": [float(x) for x in vector]},
        )
        # FalkorDB reports cosine *distance*; callers get similarity.
        return [({"id": r["id"], "name": r["name"],
                  "labels": [lab for lab in r["labels"] if lab != ENTITY_LABEL]}, 1.0 - float(r["score"]))
                for r in rows]

    # ------------------------------------------------------------------ admin
    def _graph_exists(self) -> bool:
        return self.graph_name in self._db.list_graphs()

    def clear(self) -> None:
        if self._graph_exists():
            self._graph.delete()
        self.invalidate_schema()

    def count_nodes(self) -> int:
        return 0 if not self._graph_exists() else super().count_nodes()

    def count_relationships(self) -> int:
        return 0 if not self._graph_exists() else super().count_relationships()

    def schema(self, refresh: bool = False):
        if not self._graph_exists():
            from graphraft.graph.schema import GraphSchema
            return GraphSchema(labels={}, relationship_types={}, patterns=[])
        return super().schema(refresh)

    def close(self) -> None:
        try:
            self._db.connection.close()
        except RedisError:
            pass
