"""Answering: the language model and its adapters, prompts, the candidate trie and exact
constrained search (decoding/), query generation (L1), retrieval, answer selection (L2) and
the GraphRAFT pipeline."""
