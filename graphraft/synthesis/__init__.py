"""Synthesis: from question/answer pairs to (question, Cypher) training pairs. Mentions (L0),
resolution to anchor nodes, the pattern renderer, enumeration in the database, ranking,
and the synthesizer that ties them together."""
