"""Constrained decoding: the token trie and the logits processor."""
