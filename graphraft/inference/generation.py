"""L1 generation under the trie constraint: the m most likely valid queries for a question.

The default is the exact top-m search over the candidate tree (``decoding/search.py``): the
same score as beam search (summed log-probabilities), exact where beam search is not, and a
handful of wide forward calls instead of one call per generated token. Hugging Face beam
search with the trie logits processor stays as the reference (``method="beam"``)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from graphraft.errors import ConfigurationError
from graphraft.inference.adapters import adapter_active
from graphraft.inference.decoding.processor import TrieLogitsProcessor
from graphraft.inference.decoding.query_space import QuerySpace
from graphraft.inference.decoding.search import DEFAULT_TOKEN_BUDGET, SearchStats, top_m_many
from graphraft.inference.decoding.tree_attention import PromptCache
from graphraft.inference.decoding.trie import CandidateIndex
from graphraft.inference.exemplars import Exemplars
from graphraft.inference.prompts import l1_messages, prompt_ids
from graphraft.models import pad_token_id
from graphraft.synthesis.language import Query, render_query

METHODS = ("exact", "beam")


@dataclass(frozen=True)
class GeneratedQuery:
    cypher: str
    score: float  # sequence log-probability (summed token log-probabilities), higher is better
    rank: int
    query: Query | None = None  # the query of the language it is, when it came from a QuerySpace


def _beam_search(
    model, tokenizer, prompt: list[int], beams: int, max_new_tokens: int, eos_token_id: int, processors=()
) -> list[tuple[list[int], float]]:
    """(generated token ids, sequence score) for each returned beam, best first."""
    device = next(model.parameters()).device
    input_ids = torch.tensor([prompt], device=device)
    pad = pad_token_id(tokenizer)
    output = model.generate(
        input_ids=input_ids,
        attention_mask=torch.ones_like(input_ids),
        logits_processor=list(processors),
        max_new_tokens=max_new_tokens,
        num_beams=beams,
        num_return_sequences=beams,
        do_sample=False,
        eos_token_id=eos_token_id,
        pad_token_id=pad,
        return_dict_in_generate=True,
        output_scores=True,
        # summed log-probs (length_penalty 0) and early_stopping False: the search goes on while a
        # running beam can still beat the worst finished one, which is exact here (the canonical
        # beam search). early_stopping=True stopped at the first num_beams finished queries, so a
        # longer, likelier query (a 3-hop one) could be cut before it finished.
        **({"length_penalty": 0.0, "early_stopping": False} if beams > 1 else {}),
    )
    scores = output.sequences_scores.tolist() if beams > 1 else [0.0]
    return list(zip(output.sequences[:, len(prompt) :].tolist(), scores))


def _unique(queries) -> list[GeneratedQuery]:
    """Distinct non-empty queries in score order, ranked from 0: (text, score) pairs, or
    (text, score, Query) for a query of the language."""
    results, seen = [], set()
    for text, score, *language in queries:
        if text and text not in seen:
            seen.add(text)
            results.append(GeneratedQuery(text, float(score), len(results), *language))
    return results


class QueryGenerator(ABC):
    """Writes queries for questions (L1). ``candidate_lists`` are each question's enumerated
    queries; a generator may ignore them (the free baseline). ``check`` runs between model calls
    (an overall deadline raises there)."""

    model: Any
    tokenizer: Any
    schema_hint: str | None = None
    exemplars: Exemplars | None = None  # solved questions shown before the question, as L1 was trained

    @abstractmethod
    def generate_many(
        self,
        questions: Sequence[str],
        candidate_lists: Sequence[Sequence[str]],
        num_beams: int = 5,
        group: int = 8,
        check: Callable[[], None] | None = None,
    ) -> list[list[GeneratedQuery]]: ...

    def prompt(self, question: str) -> list[int]:
        """The tokens L1 reads for a question: its prompt in the chat template, with the schema
        line and the nearest solved questions when the generator has them (as its adapter was
        trained)."""
        return self.prompts_of([question])[0]

    def prompts_of(self, questions: Sequence[str]) -> list[list[int]]:
        """``prompt`` of each question (the solved questions found for all of them at once)."""
        shown = self.exemplars.nearest(questions) if self.exemplars is not None else [()] * len(questions)
        return [prompt_ids(self.tokenizer, l1_messages(q, self.schema_hint, s)) for q, s in zip(questions, shown)]

    def generate(self, question: str, candidates: Sequence[str], num_beams: int = 5) -> list[GeneratedQuery]:
        return self.generate_many([question], [candidates], num_beams)[0]


class ConstrainedGenerator(QueryGenerator):
    """L1 that can only write candidate queries: the ``num_beams`` most likely ones.

    ``adapter`` names the adapter to run on a multi-adapter model (``adapters.BASE``: none);
    None runs the model as it is. The prompt's KV is reused across questions, so the model's
    weights must not change while a generator is in use (make a new one after training)."""

    def __init__(
        self,
        model,
        tokenizer,
        schema_hint: str | None = None,
        method: str = "exact",
        adapter: str | None = None,
        token_budget: int = DEFAULT_TOKEN_BUDGET,
        exemplars: Exemplars | None = None,
    ):
        if method not in METHODS:
            raise ValueError(f"unknown decoding method {method!r}: choose {' or '.join(METHODS)}")
        self.model, self.tokenizer, self.schema_hint = model, tokenizer, schema_hint
        self.exemplars = exemplars
        self.method, self.adapter, self.token_budget = method, adapter, token_budget
        self.prompts = PromptCache()
        self.stats = SearchStats()  # forward calls and tokens fed by the exact search, summed
        self._pieces_checked = False

    @torch.no_grad()
    def generate(self, question: str, candidates: Sequence[str], num_beams: int = 5) -> list[GeneratedQuery]:
        if self.method == "exact":
            return self.generate_many([question], [candidates], num_beams)[0]
        if isinstance(candidates, QuerySpace):
            raise ConfigurationError(
                "beam search runs over listed candidates: the query language needs the exact search"
            )
        if not candidates:
            return []
        index = CandidateIndex(self.tokenizer, list(dict.fromkeys(candidates)))
        prompt = self.prompt(question)
        with adapter_active(self.model, self.adapter):
            found = self._beam(prompt, index, max(1, min(num_beams, len(index))))
        return self._queries(index, found)

    def _index(self, candidates: Sequence[str] | QuerySpace) -> CandidateIndex | QuerySpace:
        """The structure to search: a question's listed candidates as a trie, or its query space
        (checked once per generator: its pieces must tokenise as the whole queries do)."""
        if not isinstance(candidates, QuerySpace):
            return CandidateIndex(self.tokenizer, list(dict.fromkeys(candidates)))
        if not self._pieces_checked:
            if not candidates.tokenisation_holds():
                raise ConfigurationError(
                    "this model's tokenizer merges text across the places where query pieces meet, "
                    "so it cannot decode the full query language: ask with the path language instead"
                )
            self._pieces_checked = True
        return candidates

    def _queries(self, index: CandidateIndex | QuerySpace, found) -> list[GeneratedQuery]:
        """(sequence, score) pairs as queries; fail-closed: a sequence that is not a candidate
        maps to None and is dropped."""
        if isinstance(index, QuerySpace):
            queries = ((index.query_for(sequence), score) for sequence, score in found)
            return _unique((render_query(q), score, q) for q, score in queries if q is not None)
        pad = pad_token_id(self.tokenizer)
        return _unique((index.query_for(sequence, pad_token_id=pad), score) for sequence, score in found)

    @torch.no_grad()
    def generate_many(
        self,
        questions: Sequence[str],
        candidate_lists: Sequence[Sequence[str]],
        num_beams: int = 5,
        group: int = 8,
        check: Callable[[], None] | None = None,
    ) -> list[list[GeneratedQuery]]:
        """``generate`` for many questions, ``group`` of them searched together in each forward
        call (a forest; the same results as one at a time). For throughput: evaluation,
        training's validation and L2's evidence building. ``check`` runs before each forward
        call of the exact search (each question's search for beam search): a deadline."""
        check = check or (lambda: None)
        if self.method != "exact":
            return _one_by_one(lambda q, c: self.generate(q, c, num_beams), questions, candidate_lists, check)
        results: list[list[GeneratedQuery]] = [[] for _ in questions]
        work = [i for i, candidates in enumerate(candidate_lists) if len(candidates)]
        group = max(1, group)
        for start in range(0, len(work), group):
            chunk = work[start : start + group]
            indexes = [self._index(candidate_lists[i]) for i in chunk]
            prompts = self.prompts_of([questions[i] for i in chunk])
            with adapter_active(self.model, self.adapter):
                found = top_m_many(
                    self.model,
                    prompts,
                    [index.radix() for index in indexes],
                    max(1, num_beams),
                    self.token_budget,
                    self.prompts,
                    self.stats,
                    check,
                )
            for i, index, scored in zip(chunk, indexes, found):
                results[i] = self._queries(index, [(r.sequence, r.score) for r in scored])
        return results

    def _beam(self, prompt: list[int], index: CandidateIndex, beams: int) -> list[tuple[list[int], float]]:
        processor = TrieLogitsProcessor(index.trie, len(prompt), index.eos_token_id, num_beams=beams)
        found = _beam_search(
            self.model, self.tokenizer, prompt, beams, index.trie.max_length, index.eos_token_id, [processor]
        )
        if beams == 1:  # greedy returns no score: the summed log-probability, teacher-forced
            found = [(sequence, _sequence_logprob(self.model, prompt, sequence)) for sequence, _ in found]
        return found


def _sequence_logprob(model, prompt: list[int], sequence: list[int]) -> float:
    device = next(model.parameters()).device
    ids = torch.tensor([prompt + list(sequence)], device=device)
    logprobs = torch.log_softmax(model(input_ids=ids).logits[0, len(prompt) - 1 : -1].float(), dim=-1)
    return logprobs[torch.arange(len(sequence)), torch.tensor(sequence)].sum().item()


class FreeGenerator(QueryGenerator):
    """L1 without the constraint (a baseline): beam search over the whole vocabulary; the
    queries are returned as written, valid or not."""

    def __init__(
        self,
        model,
        tokenizer,
        schema_hint: str | None = None,
        max_new_tokens: int = 160,
        adapter: str | None = None,
        exemplars: Exemplars | None = None,
    ):
        self.model, self.tokenizer, self.schema_hint = model, tokenizer, schema_hint
        self.max_new_tokens, self.adapter, self.exemplars = max_new_tokens, adapter, exemplars

    @torch.no_grad()
    def generate(self, question: str, candidates: Sequence[str] = (), num_beams: int = 5) -> list[GeneratedQuery]:
        prompt = self.prompt(question)
        with adapter_active(self.model, self.adapter):
            found = _beam_search(
                self.model, self.tokenizer, prompt, num_beams, self.max_new_tokens, self.tokenizer.eos_token_id
            )
        return _unique(
            (self.tokenizer.decode(sequence, skip_special_tokens=True).strip(), score) for sequence, score in found
        )

    def generate_many(
        self,
        questions: Sequence[str],
        candidate_lists: Sequence[Sequence[str]],
        num_beams: int = 5,
        group: int = 8,
        check: Callable[[], None] | None = None,
    ) -> list[list[GeneratedQuery]]:
        return _one_by_one(
            lambda q, _: self.generate(q, (), num_beams), questions, [()] * len(questions), check or (lambda: None)
        )


def _one_by_one(generate, questions, candidate_lists, check) -> list[list[GeneratedQuery]]:
    results = []
    for question, candidates in zip(questions, candidate_lists):
        check()
        results.append(generate(question, candidates))
    return results


@torch.no_grad()
def top_queries(
    model,
    tokenizer,
    questions: Sequence[str],
    candidate_lists: Sequence[Sequence[str]],
    schema_hint: str | None = None,
    adapter: str | None = None,
    group: int = 8,
    exemplars: Exemplars | None = None,
) -> list[str | None]:
    """L1's most likely candidate query for each question (exact search, m = 1, ``group``
    questions a forward call); None for a question with no candidates. Used for validation
    during training and for L2's evidence."""
    generator = ConstrainedGenerator(model, tokenizer, schema_hint, adapter=adapter, exemplars=exemplars)
    found = generator.generate_many(questions, candidate_lists, num_beams=1, group=group)
    return [queries[0].cypher if queries else None for queries in found]
