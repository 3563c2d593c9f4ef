"""``GraphStore``: the one interface to a graph database.

Everything that is plain openCypher (bulk load, schema introspection, lookups) lives here
once; a backend supplies only what differs between Neo4j and FalkorDB: how a read runs on
the read-only path, how a write runs, index DDL, and vector storage/search.
"""

from __future__ import annotations

import hashlib
import itertools
import time
from abc import ABC, abstractmethod
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from graphraft.config import LOAD_BATCH_SIZE, MAINTENANCE_TIMEOUT_MS, QUERY_TIMEOUT_MS
from graphraft.deadline import current as current_deadline
from graphraft.errors import (
    DeadlineExceededError,
    GraphDataLostError,
    GraphNotFoundError,
    GraphRAFTError,
    QueryError,
    QueryTimeoutError,
    ReadOnlyViolationError,
)
from graphraft.graph.cypher_text import label_expression, quote_identifier
from graphraft.graph.naming import NamingRule
from graphraft.graph.records import (
    EMBEDDING_PROPERTY,
    ENTITY_LABEL,
    NAME_KEY_PROPERTY,
    NAME_TEXT_PROPERTY,
    OWN_PROPERTIES,
    LoadReport,
    NodeRecord,
    RelationshipRecord,
    WriteStats,
    domain_labels,
    is_reserved_label,
    name_expression,
)
from graphraft.graph.schema import (
    FEW_VALUES,
    NAMED_VALUES,
    GraphSchema,
    PropertyInfo,
    SchemaPattern,
    date_text,
    numeric_text,
)
from graphraft.progress import Progress, SilentProgress
from graphraft.text import normalize_name

Row = dict[str, Any]
#: nodes (relationships) of each label (type) whose properties the schema profiles
PROFILE_SAMPLE = 1000

#: Plan operators free text may not contain (lower-case letters only, as both databases name them)
UNTRUSTED_REFUSED = {"loadcsv": "LOAD CSV", "procedurecall": "a procedure call"}


def batched(items: Iterable, size: int) -> Iterator[list]:
    iterator = iter(items)
    while batch := list(itertools.islice(iterator, size)):
        yield batch


class GraphStore(ABC):
    """A knowledge graph in a database. Subclasses: ``FalkorDBStore``, ``Neo4jStore``."""

    #: Short name for messages ("FalkorDB at 127.0.0.1:6379, graph 'demo'").
    description: str = "graph store"
    #: Which graph this is, the same after a restart (the embedded server's port is not):
    #: what synthesis files and caches are keyed on.
    identity: str = "graph store"
    #: The label every node of this graph carries: what loading, lookups and the enumeration
    #: templates (written with ``__Entity__``) match on.
    entity_label: str = ENTITY_LABEL
    #: A label the executed form of a rendered query adds to its root node, where the database
    #: holds other graphs too (Neo4j); None where the graph is the database's unit (FalkorDB).
    graph_label: str | None = None

    def __init__(
        self,
        query_timeout_ms: int = QUERY_TIMEOUT_MS,
        batch_size: int = LOAD_BATCH_SIZE,
        cache_dir: Path | None = None,
        naming: NamingRule | None = None,
    ):
        #: which property names a node of each label (graph/naming.py)
        self.naming = naming or NamingRule()
        self.query_timeout_ms = query_timeout_ms
        self.batch_size = batch_size
        self.cache_dir = cache_dir
        self._schema: GraphSchema | None = None
        self._name_counts: dict[str, int] | None = None

    # ----------------------------------------------------------------- backend hooks
    def read(self, query: str, params: dict | None = None, timeout_ms: int | None = None) -> list[Row]:
        """Run a query on the read-only path with a time limit (``timeout_ms``, default the
        store's), cut to what is left of the deadline in force (``deadline.within``); rows as dicts.

        Raises ReadOnlyViolationError for a write, QueryTimeoutError past the limit,
        DeadlineExceededError when it was the deadline's cut that ran out."""
        timeout_ms = timeout_ms or self.query_timeout_ms
        deadline = current_deadline()
        if deadline is None:
            return self._read(query, params, timeout_ms)
        limit_ms = deadline.limit_ms(timeout_ms, deadline.stage)
        try:
            return self._read(query, params, limit_ms)
        except DeadlineExceededError:
            raise
        except QueryTimeoutError:
            if limit_ms < timeout_ms:
                raise deadline.exceeded() from None
            raise

    @abstractmethod
    def _read(self, query: str, params: dict | None, timeout_ms: int) -> list[Row]:
        """Run a query on the read-only path within ``timeout_ms``; rows as dicts.

        Raises ReadOnlyViolationError for a write, QueryTimeoutError past the limit."""

    @abstractmethod
    def _plan_operators(self, query: str, params: dict | None = None) -> list[str]:
        """The names of the operators in the database's plan for ``query`` (not run)."""

    def read_untrusted(self, query: str, params: dict | None = None, timeout_ms: int | None = None) -> list[Row]:
        """Run text that GraphRAFT did not render (a user's `graphraft query`, a model's free
        query) on the read-only path, after the database's own plan shows it only reads the
        graph: the read-only modes refuse writes but not LOAD CSV (a file or URL read) or
        procedure calls, so a plan with either is refused here."""
        for operator in self._plan_operators(query, params):
            key = "".join(ch for ch in operator.split("@")[0].lower() if ch.isalpha())
            if key in UNTRUSTED_REFUSED:
                raise ReadOnlyViolationError(
                    f"refused {UNTRUSTED_REFUSED[key]} on the read path of {self.description}: "
                    "a free query may only read the graph"
                )
        return self.read(query, params, timeout_ms)

    @abstractmethod
    def write(self, query: str, params: dict | None = None) -> tuple[list[Row], WriteStats]:
        """Run an admin or load query (values as parameters only)."""

    @abstractmethod
    def _existing_indexes(self) -> set[tuple[str, str]]:
        """(label, property) pairs that already have a range index."""

    @abstractmethod
    def _create_index(self, label: str, prop: str) -> None: ...

    @abstractmethod
    def _ensure_vector_index(self, dimension: int) -> None: ...

    @abstractmethod
    def _set_embeddings_query(self) -> str:
        """Cypher that sets ``embedding`` from ``$rows`` of {id, vector}."""

    @abstractmethod
    def _vector_search(self, vector: Sequence[float], k: int) -> list[Row]:
        """k nearest nodes by name embedding: rows of id, name, labels and the index's score."""

    @staticmethod
    @abstractmethod
    def _cosine(score: float) -> float:
        """The vector index's score as cosine similarity."""

    @abstractmethod
    def has_vector_index(self) -> bool:
        """Whether names were embedded (the vector index exists): else ``nearest_names`` cannot run."""

    @abstractmethod
    def clear(self) -> None:
        """Delete the whole graph (tests and `graphraft load --replace`)."""

    def sync(self) -> None:  # noqa: B027 - a hook: nothing to do unless a backend says so
        """Make every write so far durable before a load reports it done (a backend whose
        commits are durable, like Neo4j, has nothing to do)."""

    # ----------------------------------------------------------------- which graph
    #: the graph's name, and the database it lives in ("FalkorDB at HOST:PORT", "Neo4j at URI")
    graph_name: str = ""
    server: str = "the database"
    #: the graphs loaded there with their counts (an ``embedded.GraphCatalog``), when known
    catalog = None

    def graphs(self) -> list[str]:
        """The graphs in this database."""
        return []

    def _graph_exists(self) -> bool:
        return True

    def _lost_hint(self) -> str:
        """Where to look when a loaded graph is gone (a server log, say)."""
        return ""

    def _loaded_counts(self) -> tuple[int, int]:
        """Nodes and relationships of a graph known to exist."""
        return self.count_nodes(), self.count_relationships()

    def _ids_not_unique(self) -> QueryError:
        """The unique-id constraint cannot be built: two nodes of the graph share an id."""
        return QueryError(f"node ids are not unique in {self.description}; cannot add the id constraint")

    def _not_found(self) -> GraphRAFTError:
        """The graph is missing: never loaded (say which exist) or lost (say when it was loaded)."""
        known = (self.catalog.graphs() if self.catalog is not None else {}).get(self.graph_name)
        if known:
            return GraphDataLostError(
                f"graph '{self.graph_name}' was loaded on {known.get('loaded_at', '?')} "
                f"({known.get('nodes', 0):,} nodes) but {self.server} no longer has it: "
                f"its data was lost{self._lost_hint()}; load it again"
            )
        others = sorted(self.graphs())
        listed = f"graphs there: {', '.join(others)}" if others else "no graph is loaded there"
        return GraphNotFoundError(
            f"graph '{self.graph_name}' does not exist on {self.server} ({listed}); "
            "load one with `graphraft load demo|metaqa|files`"
        )

    def require_graph(self) -> None:
        """Raise GraphNotFoundError, or GraphDataLostError when the graph is gone or has fewer
        nodes or relationships than were last loaded."""
        if not self._graph_exists():
            raise self._not_found()
        known = (self.catalog.graphs() if self.catalog is not None else {}).get(self.graph_name)
        if known:
            nodes, rels = self._loaded_counts()
            if nodes < known.get("nodes", 0) or rels < known.get("relationships", 0):
                raise GraphDataLostError(
                    f"graph '{self.graph_name}' has {nodes:,} nodes and {rels:,} relationships, but "
                    f"{known['nodes']:,} and {known['relationships']:,} were loaded on {known.get('loaded_at', '?')}: "
                    "part of it was lost; load it again"
                )

    def close(self) -> None:  # noqa: B027 - a hook, as above
        pass

    def __enter__(self) -> GraphStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def _entity(self) -> str:
        return label_expression((self.entity_label,))

    def scoped(self, query: str) -> str:
        """One of GraphRAFT's own query templates (``queries/*.cypher``, written with the
        ``:__Entity__`` label) for this graph: the label swapped for this graph's."""
        if self.entity_label == ENTITY_LABEL:
            return query
        return query.replace(":" + ENTITY_LABEL, self._entity)

    # ----------------------------------------------------------------- loading
    def ensure_indexes(self, labels: Iterable[str] = ()) -> None:
        """Range indexes on ``id`` and ``name`` for the entity label and for each label given."""
        entity = self.entity_label
        wanted = [(entity, "id"), (entity, "name"), (entity, NAME_KEY_PROPERTY)]
        for label in sorted(set(labels) - {entity}):
            wanted += [(label, "id"), (label, "name")]
        existing = self._existing_indexes()
        for label, prop in wanted:
            if (label, prop) not in existing:
                self._create_index(label, prop)

    def load_nodes(
        self, nodes: Iterable[NodeRecord], progress: Progress | None = None, total: int | None = None
    ) -> LoadReport:
        """MERGE nodes by id (idempotent); adds the entity label and ``name_norm``."""
        progress = progress or SilentProgress()
        report = LoadReport()
        by_labels: dict[tuple[str, ...], list[Row]] = defaultdict(list)
        for node in nodes:
            props = dict(node.properties)
            name = self.naming.name_of(domain_labels(node.labels), props)
            if name is not None:
                props[NAME_TEXT_PROPERTY] = name
                props[NAME_KEY_PROPERTY] = normalize_name(name)
            by_labels[domain_labels(node.labels)].append({"id": node.id, "props": props})
            report.nodes += 1
        self.ensure_indexes(label for labels in by_labels for label in labels)
        with progress.task("nodes", total or report.nodes) as task:
            for labels, rows in sorted(by_labels.items()):
                # Labels go into the MERGE (several times faster than SET n:Label afterwards);
                # the unique constraint on id refuses an id reloaded under other labels.
                # Only rows that change something are SET: a SET rewrites the node's index
                # entries (the vector index too), which made a no-op reload 40x slower.
                # A renamed node loses its name embedding so that it is embedded again.
                query = (
                    f"UNWIND $rows AS row MERGE (n{label_expression((self.entity_label, *labels))} {{id: row.id}}) "
                    "WITH n, row WHERE any(k IN keys(row.props) WHERE n[k] IS NULL OR n[k] <> row.props[k]) "
                    f"SET n.{EMBEDDING_PROPERTY} = CASE WHEN {name_expression('n')} = row.props.{NAME_TEXT_PROPERTY} "
                    f"THEN n.{EMBEDDING_PROPERTY} ELSE null END "
                    "SET n += row.props"
                )
                for batch in batched(rows, self.batch_size):
                    _, stats = self.write(query, {"rows": batch})
                    report.writes += stats
                    task.advance(len(batch))
        self.invalidate_schema()
        return report

    def load_relationships(
        self, relationships: Iterable[RelationshipRecord], progress: Progress | None = None, total: int | None = None
    ) -> LoadReport:
        """MERGE relationships between nodes found by id (idempotent).

        Rows whose source or target is not in the graph are counted in ``missing_endpoints``."""
        progress = progress or SilentProgress()
        report = LoadReport()
        by_type: dict[str, list[Row]] = defaultdict(list)
        for rel in relationships:
            by_type[rel.type].append({"s": rel.source, "t": rel.target, "props": rel.properties})
            report.relationships += 1
        entity = self._entity
        with progress.task("relationships", total or report.relationships) as task:
            for rel_type, rows in sorted(by_type.items()):
                query = (
                    f"UNWIND $rows AS row MATCH (a{entity} {{id: row.s}}) MATCH (b{entity} {{id: row.t}}) "
                    f"MERGE (a)-[r:{quote_identifier(rel_type)}]->(b) "
                    # only what changes is set: Neo4j counts a property set to its own value
                    "SET r += CASE WHEN any(k IN keys(row.props) WHERE r[k] IS NULL OR r[k] <> row.props[k]) "
                    "THEN row.props ELSE {} END "
                    "RETURN count(*) AS matched"
                )
                for batch in batched(rows, self.batch_size):
                    result, stats = self.write(query, {"rows": batch})
                    report.writes += stats
                    report.missing_endpoints += len(batch) - (result[0]["matched"] if result else 0)
                    task.advance(len(batch))
        self.invalidate_schema()
        return report

    def prepare_names(self) -> int:
        """Give every node the name its labels' naming rule gives it (``name_text``) and the key
        exact matching uses (``name_norm``), and create the indexes: for a graph loaded outside
        GraphRAFT (only its label and ``id`` set by the user), or by an older version, or after
        the per-label naming properties changed. A node whose name changes loses its name
        embedding, so that it is embedded again. Returns how many nodes changed."""
        limit = max(self.query_timeout_ms, MAINTENANCE_TIMEOUT_MS)
        rows = self.read(
            f"MATCH (n{self._entity}) "
            f"RETURN n.id AS id, labels(n) AS labels, {name_expression('n')} AS current, "
            f"n.{NAME_KEY_PROPERTY} AS key, "
            # only the keys that can name a node: what the rule looks at
            "[k IN keys(n) WHERE toLower(k) ENDS WITH 'name' OR k = 'title' OR k IN $named | [k, n[k]]] AS props",
            {"named": sorted(set(self.naming.overrides.values()))},
            timeout_ms=limit,
        )
        self.ensure_indexes(self._label_counts(limit))
        changed = []
        for row in rows:
            name = self.naming.name_of(domain_labels(row["labels"]), dict(row["props"]))
            key = normalize_name(name) if name is not None else None
            if name != row["current"] or key != row["key"]:
                changed.append({"id": row["id"], "text": name, "key": key})
        for batch in batched(changed, self.batch_size):
            self.write(
                f"UNWIND $rows AS row MATCH (n{self._entity} {{id: row.id}}) "
                f"SET n.{EMBEDDING_PROPERTY} = CASE WHEN {name_expression('n')} = row.text "
                f"THEN n.{EMBEDDING_PROPERTY} ELSE null END "
                f"SET n.{NAME_TEXT_PROPERTY} = row.text, n.{NAME_KEY_PROPERTY} = row.key",
                {"rows": batch},
            )
        if changed:
            self.invalidate_schema()
        return len(changed)

    # ----------------------------------------------------------------- embeddings
    def nodes_without_embedding(self) -> list[tuple[str, str]]:
        """(id, name) of named entity nodes that have no name embedding yet."""
        rows = self.read(
            f"MATCH (n{self._entity}) "
            f"WITH n, {name_expression('n')} AS name WHERE n.{EMBEDDING_PROPERTY} IS NULL AND name IS NOT NULL "
            "RETURN n.id AS id, toString(name) AS name",
            timeout_ms=max(self.query_timeout_ms, MAINTENANCE_TIMEOUT_MS),
        )
        return [(row["id"], row["name"]) for row in rows]

    def set_embeddings(self, rows: Sequence[tuple[str, Sequence[float]]]) -> None:
        """Set the name embedding of each (id, vector); every id must be a node of the graph."""
        if not rows:
            return
        self._ensure_vector_index(len(rows[0][1]))
        # Six decimals keep float32 cosine exact enough and halve the parameter text to send.
        vectors = np.round(np.asarray([vec for _, vec in rows], dtype=np.float64), 6).tolist()
        params = {"rows": [{"id": node_id, "vector": vec} for (node_id, _), vec in zip(rows, vectors)]}
        # The write says how many nodes it matched. Once in a CI run a FalkorDB write left names
        # without embeddings and reported no error (the cause was not found); the write is
        # idempotent, so a short count is sent once more, and a second short count is an error
        # rather than names left without embeddings.
        for _attempt in range(2):
            result, _ = self.write(self._set_embeddings_query(), params)
            matched = result[0]["matched"] if result else 0
            if matched == len(rows):
                return
        raise QueryError(
            f"{self.description} set the name embeddings of {matched} of {len(rows)} nodes; "
            "nodes were deleted while names were embedded? Run the embedding again."
        )

    def nearest_names(self, vector: Sequence[float], k: int = 5) -> list[tuple[Row, float]]:
        """Nodes whose name embedding is closest to ``vector``: ({id, name, labels}, cosine)."""
        return [
            (
                {"id": r["id"], "name": r["name"], "labels": list(domain_labels(r["labels"]))},
                self._cosine(float(r["score"])),
            )
            for r in self._vector_search(vector, k)
        ]

    # ----------------------------------------------------------------- lookups
    def nodes_by_name(self, name: str, limit: int = 25) -> list[Row]:
        """Nodes whose normalised name equals the normalised ``name`` (index-backed)."""
        return _own_labels(
            self.read(
                f"MATCH (n{self._entity} {{{NAME_KEY_PROPERTY}: $key}}) "
                f"RETURN n.id AS id, {name_expression('n')} AS name, labels(n) AS labels ORDER BY id LIMIT $limit",
                {"key": normalize_name(name), "limit": limit},
            )
        )

    def names_containing(self, words: Sequence[str], limit: int = 25) -> list[Row]:
        """Nodes whose normalised name contains every one of ``words`` (normalised): the text
        match used when there is no vector index. A scan, bounded by the read time limit."""
        words = [normalize_name(word) for word in words if normalize_name(word)]
        if not words:
            return []
        return _own_labels(
            self.read(
                f"MATCH (n{self._entity}) "
                f"WHERE all(w IN $words WHERE n.{NAME_KEY_PROPERTY} CONTAINS w) "
                f"RETURN n.id AS id, {name_expression('n')} AS name, labels(n) AS labels ORDER BY id LIMIT $limit",
                {"words": words, "limit": int(limit)},
            )
        )

    def name_counts(self) -> dict[str, int]:
        """Every normalised name and how many nodes carry it: the dictionary the lexical
        extractor and the fuzzy resolver search. Read once (one scan), then kept until a load."""
        if self._name_counts is None:
            rows = self.read(
                f"MATCH (n{self._entity}) WHERE n.{NAME_KEY_PROPERTY} IS NOT NULL "
                f"RETURN n.{NAME_KEY_PROPERTY} AS key, count(*) AS c",
                timeout_ms=MAINTENANCE_TIMEOUT_MS,
            )
            # in name order: what searches it (and breaks ties by order) sees the same on every store
            self._name_counts = {row["key"]: row["c"] for row in sorted(rows, key=lambda row: row["key"])}
        return self._name_counts

    def nodes_by_id(self, ids: Sequence[str], timeout_ms: int | None = None) -> list[Row]:
        rows = self.read(
            f"UNWIND $ids AS i MATCH (n{self._entity} {{id: i}}) "
            f"RETURN n.id AS id, labels(n) AS labels, properties(n) AS properties, {name_expression('n')} AS name",
            {"ids": list(ids)},
            timeout_ms=timeout_ms,
        )
        for row in rows:
            row["labels"] = list(domain_labels(row["labels"]))
            row["properties"].pop(EMBEDDING_PROPERTY, None)
        return rows

    def count_nodes(self) -> int:
        """This graph's nodes (a count-store lookup in both databases)."""
        return self.read(f"MATCH (n{self._entity}) RETURN count(n) AS c")[0]["c"]

    def count_relationships(self) -> int:
        """This graph's relationships (a count-store lookup in both databases)."""
        return self.read(f"MATCH (n{self._entity})-[r]->() RETURN count(r) AS c")[0]["c"]

    # ----------------------------------------------------------------- schema
    def invalidate_schema(self) -> None:
        self._schema = None
        self._name_counts = None

    def schema(self, refresh: bool = False) -> GraphSchema:
        """Labels, relationship types and (label)-[type]->(label) patterns with counts.

        Counts per label and per type are single count-store lookups; the label pairs of
        each type come from one aggregation per type, run once and then cached."""
        if self._schema is not None and not refresh:
            return self._schema
        started = time.perf_counter()
        # O(1) in both databases; a changed graph changes the fingerprint and the cache key.
        fingerprint = f"{self.count_nodes()}-{self.count_relationships()}"
        cache_file = self._schema_cache_file(fingerprint)
        if cache_file is not None and cache_file.exists() and not refresh:
            try:
                self._schema = GraphSchema.model_validate_json(cache_file.read_text())
                self._schema.names = self._names(self._schema)
                return self._schema
            except ValueError:
                cache_file.unlink(missing_ok=True)
        long = max(self.query_timeout_ms, MAINTENANCE_TIMEOUT_MS)
        label_counts = self._label_counts(long)
        type_counts = self._type_counts(long)
        patterns = []
        for t in sorted(type_counts):
            rows = self.read(
                f"MATCH (a{self._entity})-[:{quote_identifier(t)}]->(b) "
                "RETURN labels(a) AS source, labels(b) AS target, count(*) AS c",
                timeout_ms=long,
            )
            for row in rows:
                patterns.append(
                    SchemaPattern(
                        source=_primary_label(row["source"]),
                        type=t,
                        target=_primary_label(row["target"]),
                        count=row["c"],
                    )
                )
        patterns.sort(key=lambda p: (p.type, p.source, p.target))
        properties = {
            label: self._profile(f"(x{label_expression((self.entity_label, label))})", long) for label in label_counts
        }
        relationship_properties = {
            t: self._profile(f"(n{self._entity})-[x:{quote_identifier(t)}]->()", long) for t in type_counts
        }
        self._schema = GraphSchema(
            labels=label_counts,
            relationship_types=type_counts,
            patterns=patterns,
            properties={label: found for label, found in properties.items() if found},
            relationship_properties={t: found for t, found in relationship_properties.items() if found},
            seconds=time.perf_counter() - started,
        )
        self._schema.names = self._names(self._schema)
        if cache_file is not None:
            try:
                cache_file.parent.mkdir(parents=True, exist_ok=True)
                cache_file.write_text(self._schema.model_dump_json())
            except OSError:
                pass  # a cache that cannot be written only costs time
        return self._schema

    def _label_counts(self, timeout_ms: int) -> dict[str, int]:
        """This graph's own labels and their node counts (one scan of its nodes)."""
        rows = self.read(
            f"MATCH (n{self._entity}) UNWIND labels(n) AS label RETURN label, count(*) AS c", timeout_ms=timeout_ms
        )
        return {r["label"]: r["c"] for r in sorted(rows, key=lambda r: r["label"]) if not is_reserved_label(r["label"])}

    def _names(self, schema: GraphSchema) -> dict[str, str | None]:
        """Each label's naming property by this store's rule (not cached: the rule's choices may change)."""
        return self.naming.labels_named({label: schema.properties.get(label, {}) for label in schema.labels})

    def _profile(self, match: str, timeout_ms: int) -> dict[str, PropertyInfo]:
        """The properties of what ``match`` binds to ``x`` (a label's nodes, a type's
        relationships): type and frequency from a sample of PROFILE_SAMPLE, and every value of
        those with few (checked over all of them, not only the sample)."""
        rows = self.read(
            f"MATCH {match} WITH x LIMIT {PROFILE_SAMPLE} UNWIND keys(x) AS key "
            "WITH key, x[key] AS value WHERE NOT key IN $own RETURN key, value",
            {"own": sorted(OWN_PROPERTIES)},
            timeout_ms=timeout_ms,
        )
        seen: dict[str, list] = defaultdict(list)
        for row in rows:
            seen[row["key"]].append(row["value"])
        found = {}
        for key, values in sorted(seen.items()):
            types = {_value_type(v) for v in values}
            kind = types.pop() if len(types) == 1 else "mixed"
            text = kind == "string"
            info = PropertyInfo(
                type=kind,
                sampled=len(values),
                numeric=text and numeric_text(values),
                dates=text and date_text(values),
            )
            most = NAMED_VALUES if info.type == "string" else FEW_VALUES
            if info.type in {"string", "integer", "float", "boolean"} and len({repr(v) for v in values}) <= most:
                every = self.read(
                    f"MATCH {match} WHERE x[$key] IS NOT NULL RETURN DISTINCT x[$key] AS value LIMIT {most + 1}",
                    {"key": key},
                    timeout_ms=timeout_ms,
                )
                if len(every) <= most:
                    info.values = sorted((row["value"] for row in every), key=lambda v: (str(type(v)), v))
            if text and len({repr(v) for v in values}) == len(values):  # distinct in the sample: over all?
                whole = self.read(
                    f"MATCH {match} WHERE x[$key] IS NOT NULL "
                    "RETURN count(x) AS carriers, count(DISTINCT x[$key]) AS distinct_values",
                    {"key": key},
                    timeout_ms=timeout_ms,
                )
                info.unique = bool(whole) and whole[0]["carriers"] == whole[0]["distinct_values"]
            found[key] = info
        return found

    def _type_counts(self, timeout_ms: int) -> dict[str, int]:
        """This graph's relationship types and their counts (one scan of its relationships)."""
        rows = self.read(
            f"MATCH (n{self._entity})-[r]->() RETURN type(r) AS type, count(*) AS c", timeout_ms=timeout_ms
        )
        return {r["type"]: r["c"] for r in sorted(rows, key=lambda r: r["type"])}

    def _schema_cache_file(self, fingerprint: str) -> Path | None:
        if self.cache_dir is None:
            return None
        # "2": the schema records each label's and type's properties; "3": a text's values up to
        # NAMED_VALUES; "5": whether a text holds numbers, or dates; "6": whether a text is unique
        digest = hashlib.sha256(f"6|{self.identity}|{fingerprint}".encode()).hexdigest()[:24]
        return self.cache_dir / "schema" / f"{digest}.json"


def _value_type(value: Any) -> str:
    """A property value's type, as the schema names it."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    return type(value).__name__.lower()  # the drivers' temporal and spatial types: date, datetime, point...


def _own_labels(rows: list[Row]) -> list[Row]:
    """Rows whose ``labels`` are the nodes' own (GraphRAFT's entity or graph label left out)."""
    for row in rows:
        row["labels"] = list(domain_labels(row["labels"]))
    return rows


def _primary_label(labels: list[str]) -> str:
    """The label a pattern names a node by: its first label other than the entity label."""
    domain = domain_labels(labels)
    return "|".join(domain) if domain else "(none)"
