"""L1 generation under the trie constraint: the m most likely valid queries for a question."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from graphraft.decoding.processor import TrieLogitsProcessor
from graphraft.decoding.trie import CandidateIndex
from graphraft.prompts import l1_messages, prompt_ids


@dataclass(frozen=True)
class GeneratedQuery:
    cypher: str
    score: float  # sequence log-probability (beam score), higher is better
    rank: int


def _beam_search(model, tokenizer, prompt: list[int], beams: int, max_new_tokens: int, eos_token_id: int,
                 processors=()) -> list[tuple[list[int], float]]:
    """(generated token ids, sequence score) for each returned beam, best first."""
    input_ids = torch.tensor([prompt])
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else eos_token_id
    output = model.generate(
        input_ids=input_ids, attention_mask=torch.ones_like(input_ids), logits_processor=list(processors),
        max_new_tokens=max_new_tokens, num_beams=beams, num_return_sequences=beams, do_sample=False,
        eos_token_id=eos_token_id, pad_token_id=pad, return_dict_in_generate=True, output_scores=True,
        # summed log-probs (length_penalty 0) and early_stopping False: the search goes on while a
        # running beam can still beat the worst finished one, which is exact here (the canonical
        # beam search). early_stopping=True stopped at the first num_beams finished queries, so a
        # longer, likelier query (a 3-hop one) could be cut before it finished.
        **({"length_penalty": 0.0, "early_stopping": False} if beams > 1 else {}),
    )
    scores = output.sequences_scores.tolist() if beams > 1 else [0.0]
    return list(zip(output.sequences[:, len(prompt):].tolist(), scores))


def _unique(queries) -> list[GeneratedQuery]:
    """Distinct non-empty queries in beam order, ranked from 0."""
    results, seen = [], set()
    for query, score in queries:
        if query and query not in seen:
            seen.add(query)
            results.append(GeneratedQuery(query, float(score), len(results)))
    return results


class ConstrainedGenerator:
    """Beam search (or greedy, ``num_beams=1``) that can only write candidate queries."""

    def __init__(self, model, tokenizer, schema_hint: str | None = None):
        self.model, self.tokenizer, self.schema_hint = model, tokenizer, schema_hint

    @torch.no_grad()
    def generate(self, question: str, candidates: Sequence[str], num_beams: int = 5) -> list[GeneratedQuery]:
        if not candidates:
            return []
        index = CandidateIndex(self.tokenizer, list(dict.fromkeys(candidates)))
        beams = max(1, min(num_beams, len(index)))
        prompt = prompt_ids(self.tokenizer, l1_messages(question, self.schema_hint))
        processor = TrieLogitsProcessor(index.trie, len(prompt), index.eos_token_id, num_beams=beams)
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else index.eos_token_id
        found = _beam_search(self.model, self.tokenizer, prompt, beams, index.trie.max_length,
                             index.eos_token_id, [processor])
        # fail-closed: a sequence that is not a candidate maps to None and is dropped
        return _unique((index.query_for(sequence, pad_token_id=pad), score) for sequence, score in found)


class FreeGenerator:
    """L1 without the constraint (a baseline): beam search over the whole vocabulary; the
    queries are returned as written, valid or not."""

    def __init__(self, model, tokenizer, schema_hint: str | None = None, max_new_tokens: int = 160):
        self.model, self.tokenizer, self.schema_hint = model, tokenizer, schema_hint
        self.max_new_tokens = max_new_tokens

    @torch.no_grad()
    def generate(self, question: str, candidates: Sequence[str] = (), num_beams: int = 5) -> list[GeneratedQuery]:
        prompt = prompt_ids(self.tokenizer, l1_messages(question, self.schema_hint))
        found = _beam_search(self.model, self.tokenizer, prompt, num_beams, self.max_new_tokens,
                             self.tokenizer.eos_token_id)
        return _unique((self.tokenizer.decode(sequence, skip_special_tokens=True).strip(), score)
                       for sequence, score in found)


@torch.no_grad()
def greedy_batch(model, tokenizer, questions: Sequence[str], candidate_lists: Sequence[Sequence[str]],
                 schema_hint: str | None = None) -> list[str | None]:
    """Greedy constrained decoding of several questions at once (left-padded), one trie each.

    Used for validation during training; a question with no candidates gets None."""
    indexes = [CandidateIndex(tokenizer, list(dict.fromkeys(c))) if c else None for c in candidate_lists]
    live = [i for i, index in enumerate(indexes) if index is not None]
    results: list[str | None] = [None] * len(questions)
    if not live:
        return results
    prompts = [prompt_ids(tokenizer, l1_messages(questions[i], schema_hint)) for i in live]
    width = max(len(p) for p in prompts)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    input_ids = torch.tensor([[pad] * (width - len(p)) + p for p in prompts])
    attention = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts])
    tries = [indexes[i].trie for i in live]
    processor = TrieLogitsProcessor(tries, width, tokenizer.eos_token_id, num_beams=1)
    output = model.generate(input_ids=input_ids, attention_mask=attention, logits_processor=[processor],
                            max_new_tokens=max(t.max_length for t in tries), do_sample=False,
                            eos_token_id=tokenizer.eos_token_id, pad_token_id=pad)
    for row, i in enumerate(live):
        results[i] = indexes[i].query_for(output[row, width:].tolist(), pad_token_id=pad)
    return results
