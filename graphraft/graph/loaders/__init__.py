"""Loaders turn a source (MetaQA, the shipped demo, your own CSV/JSONL) into node and
relationship records, hand them to a store, and add name embeddings."""

from __future__ import annotations

import time
from collections.abc import Iterable

from graphraft.graph.embeddings import Embedder, embed_missing_names
from graphraft.graph.records import LoadReport, NodeRecord, RelationshipRecord
from graphraft.graph.store import GraphStore
from graphraft.progress import Progress


def load_graph(
    store: GraphStore,
    nodes: Iterable[NodeRecord],
    relationships: Iterable[RelationshipRecord],
    embedder: Embedder | None = None,
    progress: Progress | None = None,
) -> LoadReport:
    """Idempotent load: MERGE nodes, then relationships, then embed names not yet embedded."""
    started = time.perf_counter()
    nodes, relationships = list(nodes), list(relationships)
    report = store.load_nodes(nodes, progress=progress)
    rel_report = store.load_relationships(relationships, progress=progress)
    report.relationships = rel_report.relationships
    report.missing_endpoints = rel_report.missing_endpoints
    report.writes += rel_report.writes
    if embedder is not None:
        report.embedded = embed_missing_names(store, embedder, progress=progress)
    store.sync()  # durable before the caller reports it done
    report.seconds = time.perf_counter() - started
    return report
