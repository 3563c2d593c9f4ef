"""GraphRAFT as a retriever in LangChain and neo4j-graphrag, on the embedded database with the
tiny model under the constraint (and on Neo4j where GRAPHRAFT_TEST_NEO4J_URI names one)."""

from __future__ import annotations

import pytest

from graphraft.errors import ConfigurationError

QUESTION = "which films did [Tom Hanks] star in"


def test_langchain_retriever_returns_the_answers_as_documents(engine):
    from graphraft.integrations.langchain import GraphRAFTLangChainRetriever

    expected = engine.ask(QUESTION)
    documents = GraphRAFTLangChainRetriever(engine=engine).invoke(QUESTION)
    assert [d.metadata["id"] for d in documents] == [a.id for a in expected.answers] and documents
    assert documents[0].page_content.startswith(expected.answers[0].name)
    assert documents[0].metadata["cypher"] == [q.cypher for q in expected.queries]
    assert documents[0].metadata["evidence"].startswith("Pattern 1: (Tom Hanks:Person)")
    assert len(GraphRAFTLangChainRetriever(engine=engine, top_k=1).invoke(QUESTION)) == 1


class EchoLLM:
    """A stand-in for the chat model GraphRAG calls: it answers with the context it was given,
    so the test sees exactly what the retriever handed over."""

    def __init__(self):
        from neo4j_graphrag.llm import LLMInterface, LLMResponse

        class Echo(LLMInterface):
            def invoke(self, input, message_history=None, system_instruction=None):
                return LLMResponse(content=input)

            async def ainvoke(self, input, message_history=None, system_instruction=None):
                return LLMResponse(content=input)

        self.llm = Echo(model_name="echo")


def test_neo4j_graphrag_retriever_feeds_graphrag_the_answers(engine, request):
    """GraphRAG(retriever=GraphRAFTRetriever(engine), llm=...) end to end. Without a Neo4j server
    the base class's version check is skipped (it needs one); the retrieval is the same."""
    import neo4j
    from neo4j_graphrag.generation import GraphRAG

    from graphraft.integrations.neo4j_graphrag import GraphRAFTRetriever

    on_neo4j = request.node.callspec.params.get("store_kind") == "neo4j"
    if on_neo4j:
        retriever = GraphRAFTRetriever(engine)
    else:
        with pytest.raises(ConfigurationError, match="needs an engine on Neo4j"):
            GraphRAFTRetriever(engine)

        class Unverified(GraphRAFTRetriever):
            VERIFY_NEO4J_VERSION = False

        retriever = Unverified(engine, driver=neo4j.GraphDatabase.driver("bolt://127.0.0.1:9"))
    expected = engine.ask(QUESTION)
    result = retriever.search(query_text=QUESTION)
    assert [item.metadata["id"] for item in result.items] == [a.id for a in expected.answers]
    assert result.metadata["queries"][0]["cypher"] == expected.queries[0].cypher
    rag = GraphRAG(retriever=retriever, llm=EchoLLM().llm).search(query_text=QUESTION, return_context=True)
    assert all(a.name in rag.answer for a in expected.answers) and QUESTION in rag.answer
    assert [item.metadata["id"] for item in rag.retriever_result.items] == [a.id for a in expected.answers]
