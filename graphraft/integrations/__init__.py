"""GraphRAFT inside the GraphRAG frameworks Neo4j users already use (optional extras):
``neo4j_graphrag.GraphRAFTRetriever`` (pip install graphraft[neo4j-graphrag]) and
``langchain.GraphRAFTLangChainRetriever`` (pip install graphraft[langchain])."""
