"""L2: choose the answers among what the queries retrieved.

L2 is trained to write the answer names, one per line, in the order the evidence lists them.
When answering, its reply is constrained to the answer sets the queries actually returned:
each query's result names are scored as L2's completion (mean token log-probability) plus
L1's log-probability of the query, and the most likely set is the answer. So L2 can only
name retrieved nodes, never a node the graph did not return, and it decides, with L1, which
of L1's queries holds the answers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from graphraft.decoding.trie import candidate_sequences
from graphraft.prompts import l2_answer_text, l2_messages, prompt_ids


@dataclass(frozen=True)
class ScoredSet:
    node_ids: tuple[str, ...]
    score: float  # mean log-probability of the names as L2's reply, plus the set's prior


class AnswerSelector:
    def __init__(self, model, tokenizer):
        self.model, self.tokenizer = model, tokenizer

    @torch.no_grad()
    def score(self, question: str, evidence: str, sets: Sequence[Sequence[dict]],
              priors: Sequence[float] | None = None) -> list[ScoredSet]:
        """Each non-empty set of retrieved nodes scored as L2's reply, best first. ``priors``
        (one per set; L1's log-probability of the query that returned it) are added: L2 reranks
        L1's queries by what they returned, and overrules a confident L1 only with a clear
        preference."""
        priors = list(priors) if priors is not None else [0.0] * len(sets)
        kept = [(list(s), p) for s, p in zip(sets, priors) if s]
        if not kept:
            return []
        sets, priors = [s for s, _ in kept], [p for _, p in kept]
        prompt = prompt_ids(self.tokenizer, l2_messages(question, evidence))
        replies = candidate_sequences(self.tokenizer, [l2_answer_text([str(n["name"]) for n in s], evidence)
                                                    for s in sets])
        width = len(prompt) + max(len(r) for r in replies)
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        # right-padded batch: the prompt is shared, positions line up without position ids
        ids = torch.full((len(sets), width), pad)
        mask = torch.zeros((len(sets), width), dtype=torch.long)
        for row, reply in enumerate(replies):
            ids[row, :len(prompt) + len(reply)] = torch.tensor(prompt + list(reply))
            mask[row, :len(prompt) + len(reply)] = 1
        logits = self.model(input_ids=ids, attention_mask=mask).logits[:, len(prompt) - 1:]
        logprobs = torch.log_softmax(logits.float(), dim=-1)  # the reply's positions only
        scored = []
        for row, (nodes, reply, prior) in enumerate(zip(sets, replies, priors)):
            positions = torch.arange(len(reply))
            tokens = torch.tensor(list(reply))
            mean = logprobs[row, positions, tokens].mean().item()
            scored.append(ScoredSet(tuple(n["id"] for n in nodes), mean + prior))
        return sorted(scored, key=lambda s: -s.score)

    def select(self, question: str, evidence: str, sets: Sequence[Sequence[dict]],
               priors: Sequence[float] | None = None) -> list[str]:
        """Ids of the most likely answer set (empty when no set has a node)."""
        scored = self.score(question, evidence, sets, priors)
        return list(scored[0].node_ids) if scored else []
