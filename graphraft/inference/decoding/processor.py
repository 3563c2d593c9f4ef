"""A transformers ``LogitsProcessor`` that lets each row write only a candidate query.

Stateless under beam reordering: a row's allowed tokens come from the tokens that row has
generated since the prompt (memoised by prefix). Fail-closed: a row with no continuation may
only emit eos; the mask is never lifted."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from transformers import LogitsProcessor

from graphraft.inference.decoding.trie import TokenTrie


class TrieLogitsProcessor(LogitsProcessor):
    def __init__(
        self, tries: TokenTrie | Sequence[TokenTrie], prompt_length: int, eos_token_id: int, num_beams: int = 1
    ):
        """``tries``: one per batch item (or one for all); rows are ``item * num_beams + beam``."""
        self.tries = [tries] if isinstance(tries, TokenTrie) else list(tries)
        self.prompt_length = prompt_length
        self.eos_token_id = eos_token_id
        self.num_beams = num_beams
        self._memo: list[dict[tuple[int, ...], list[int]]] = [{} for _ in self.tries]

    def allowed(self, item: int, prefix: tuple[int, ...]) -> list[int]:
        memo = self._memo[item]
        tokens = memo.get(prefix)
        if tokens is None:
            tokens = self.tries[item].next_tokens(prefix) or [self.eos_token_id]
            memo[prefix] = tokens
        return tokens

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        generated = input_ids[:, self.prompt_length :].tolist()
        rows, cols = [], []
        for row, prefix in enumerate(generated):
            item = 0 if len(self.tries) == 1 else row // self.num_beams
            tokens = self.allowed(item, tuple(prefix))
            rows.extend([row] * len(tokens))
            cols.extend(tokens)
        mask = torch.full_like(scores, float("-inf"))
        mask[rows, cols] = 0.0
        return scores + mask
