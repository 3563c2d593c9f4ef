"""Asking in the whole query language: the question's space holds its entities' properties,
counts and label roots, and a value query's rows reach the answer and its evidence."""

from __future__ import annotations

import pytest
from facts_graph import ACTED_IN, MOVIES, load

from graphraft.config import load_settings
from graphraft.inference.generation import GeneratedQuery, QueryGenerator
from graphraft.synthesis.language import render_query


class Choosing(QueryGenerator):
    """L1 that writes the first query of the question's space whose text is wanted (a stand-in
    that knows the answer's query, so that what follows L1 is what is tested)."""

    def __init__(self, model, tokenizer, wanted: str):
        self.model, self.tokenizer, self.wanted = model, tokenizer, wanted

    def generate_many(self, questions, candidate_lists, num_beams=5, group=8, check=None):
        out = []
        for space in candidate_lists:
            found = [q for _, q in space.leaves() if render_query(q) == self.wanted]
            out.append([GeneratedQuery(self.wanted, 0.0, 0, found[0])] if found else [])
        return out


@pytest.fixture
def asker(store, tiny, graphraft_home):
    from graphraft.inference.pipeline import GraphRAFT
    from graphraft.synthesis.mentions import MarkedMentionExtractor

    load(store)
    model, tokenizer = tiny
    settings = load_settings(home=graphraft_home, embedder="none")

    def make(wanted: str):
        engine = GraphRAFT(
            settings,
            store=store,
            model=model,
            tokenizer=tokenizer,
            extractor=MarkedMentionExtractor(),
            language="full",
            max_hops=1,
        )
        return engine.with_parts(Choosing(model, tokenizer, wanted))

    return make


def test_a_count_is_answered_with_its_value(asker):
    wanted = 'MATCH (a:Person {id: "p:keanu"})-[r1:ACTED_IN]->(n1:Movie) RETURN count(DISTINCT n1) AS count'
    answer = asker(wanted).ask("how many movies did [Keanu Reeves] act in")
    assert answer.queries[0].cypher == wanted
    assert answer.values == [{"count": sum(p == "p:keanu" for p, _ in ACTED_IN)}]
    assert "count: 3" in answer.evidence


def test_a_label_root_needs_no_entity(asker):
    wanted = "MATCH (n0:Movie) WHERE n0.released = 1999 RETURN DISTINCT n0.id AS id, n0.title AS title"
    answer = asker(wanted).ask("which movies came out in 1999")
    expected = [{"id": m, "title": p["title"]} for m, p in MOVIES.items() if p["released"] == 1999]
    assert answer.values == expected and [a.id for a in answer.answers] == [row["id"] for row in expected]


def test_the_retrievers_hand_over_value_rows(asker):
    """A value answer reaches a LangChain document per row (its text the row, the row in its
    metadata), not the nodes of a lower query."""
    from graphraft.integrations.langchain import GraphRAFTLangChainRetriever

    wanted = 'MATCH (a:Person {id: "p:keanu"})-[r1:ACTED_IN]->(n1:Movie) RETURN count(DISTINCT n1) AS count'
    documents = GraphRAFTLangChainRetriever(engine=asker(wanted)).invoke("how many movies did [Keanu Reeves] act in")
    count = sum(p == "p:keanu" for p, _ in ACTED_IN)
    assert [d.page_content for d in documents] == [f"count: {count}"]
    assert documents[0].metadata["row"] == {"count": count} and documents[0].metadata["cypher"] == [wanted]
