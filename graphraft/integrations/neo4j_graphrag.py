"""``GraphRAFTRetriever``: GraphRAFT as a neo4j-graphrag retriever, so that
``GraphRAG(retriever=GraphRAFTRetriever(engine), llm=...)`` answers with GraphRAFT's grounded
queries. Each result item is an answer node (its name as content; id, labels, the Cypher and
the evidence as metadata); the result's metadata holds the queries, anchors and timings.

Needs ``pip install graphraft[neo4j-graphrag]`` and an engine on Neo4j: neo4j-graphrag's base
class checks the Neo4j version through the driver."""

from __future__ import annotations

import neo4j
from neo4j_graphrag.retrievers.base import Retriever
from neo4j_graphrag.types import RawSearchResult, RetrieverResultItem

from graphraft.errors import ConfigurationError
from graphraft.inference.pipeline import GraphRAFT
from graphraft.integrations.documents import answer_items, answer_metadata


class GraphRAFTRetriever(Retriever):
    def __init__(self, engine: GraphRAFT, driver: neo4j.Driver | None = None, neo4j_database: str | None = None):
        driver = driver or getattr(engine.store, "_driver", None)
        if driver is None:
            raise ConfigurationError("GraphRAFTRetriever needs an engine on Neo4j (NEO4J_URI) or a neo4j driver")
        super().__init__(driver, neo4j_database or getattr(engine.store, "database", None))
        self.engine = engine

    def get_search_results(self, query_text: str, top_k: int | None = None) -> RawSearchResult:
        """Answer ``query_text`` with GraphRAFT; ``top_k`` answer nodes at most (default: all)."""
        answer = self.engine.ask(query_text)
        records = [neo4j.Record({"content": text, "metadata": meta}) for text, meta in answer_items(answer, top_k)]
        return RawSearchResult(records=records, metadata=answer_metadata(answer))

    def default_record_formatter(self, record: neo4j.Record) -> RetrieverResultItem:
        return RetrieverResultItem(content=record["content"], metadata=record["metadata"])
