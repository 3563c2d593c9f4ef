"""``GraphRAFTLangChainRetriever``: GraphRAFT as a LangChain retriever. ``invoke(question)``
returns one ``Document`` per answer node (its name as content; id, labels, the Cypher that
found it and the evidence as metadata), best first. Needs ``pip install graphraft[langchain]``."""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict

from graphraft.integrations.documents import answer_items, answer_metadata


class GraphRAFTLangChainRetriever(BaseRetriever):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    engine: Any  # a GraphRAFT pipeline
    top_k: int | None = None  # answer nodes at most (None: all)

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        answer = self.engine.ask(query)
        shared = answer_metadata(answer)
        return [
            Document(page_content=text, metadata={**meta, "answer": shared})
            for text, meta in answer_items(answer, self.top_k)
        ]
