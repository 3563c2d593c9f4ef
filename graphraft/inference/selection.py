"""L2: choose the answers among what the queries retrieved.

L2 is trained to write the answer names, one per line, in the order the evidence lists them.
When answering, its reply is constrained to the answer sets the queries actually returned:
each query's result names are scored as L2's completion (mean token log-probability) plus
L1's log-probability of the query, and the most likely set is the answer. So L2 can only
name retrieved nodes, never a node the graph did not return, and it decides, with L1, which
of L1's queries holds the answers.

For queries of the language, whose results are rows of values (a count, a property, an
aggregate) as well as nodes, L2 chooses a query by its result (`choose`): each query's reply
is its rows as the evidence writes them (or its nodes' names), scored the same way."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from graphraft.inference.adapters import adapter_active
from graphraft.inference.decoding.tree_attention import Branch, PromptCache, TreeCache
from graphraft.inference.decoding.trie import candidate_sequences
from graphraft.inference.prompts import VALUE_ROWS, l2_answer_text, l2_messages, l2_values_text, prompt_ids
from graphraft.inference.retrieval import QueryRun, Retrieval, returns_values, value_row_text
from graphraft.models import pad_token_id


@dataclass(frozen=True)
class ScoredSet:
    node_ids: tuple[str, ...]
    # mean log-probability of the names as L2's reply, plus the set's prior (the prior alone
    # when there was only one distinct set to choose from)
    score: float


class AnswerSelector:
    """L2 over the answer sets the queries returned. ``adapter`` names the adapter to run on a
    multi-adapter model (None: the model as it is). The prompt's KV is reused across
    questions, so the weights must not change while a selector is in use."""

    def __init__(self, model, tokenizer, adapter: str | None = None, method: str = "tree"):
        if method not in ("tree", "batch"):
            raise ValueError(f"unknown L2 scoring method {method!r}: choose tree or batch")
        self.model, self.tokenizer, self.adapter, self.method = model, tokenizer, adapter, method
        self.prompts = PromptCache()

    @torch.no_grad()
    def score(
        self, question: str, evidence: str, sets: Sequence[Sequence[dict]], priors: Sequence[float] | None = None
    ) -> list[ScoredSet]:
        """Each non-empty set of retrieved nodes scored as L2's reply, best first. ``priors``
        (one per set; L1's log-probability of the query that returned it) are added: L2 reranks
        L1's queries by what they returned, and overrules a confident L1 only with a clear
        preference.

        One forward call: the question and evidence are encoded once and every reply sits on
        top of them as a branch of a token tree (tree attention), with logits only at the
        reply's positions."""
        priors = list(priors) if priors is not None else [0.0] * len(sets)
        # the same nodes make the same reply, so of equal sets only the best prior can win
        distinct: dict[frozenset, tuple[list[dict], float]] = {}
        for nodes, prior in zip(sets, priors):
            key = frozenset(n["id"] for n in nodes)
            if nodes and (key not in distinct or prior > distinct[key][1]):
                distinct[key] = (list(nodes), prior)
        if not distinct:
            return []
        sets, priors = [s for s, _ in distinct.values()], [p for _, p in distinct.values()]
        if len(sets) == 1:  # nothing to choose between: no need to run the model
            return [ScoredSet(tuple(n["id"] for n in sets[0]), priors[0])]
        means = self._means(question, evidence, [l2_answer_text([str(n["name"]) for n in s], evidence) for s in sets])
        scored = [
            ScoredSet(tuple(n["id"] for n in nodes), mean + prior) for nodes, mean, prior in zip(sets, means, priors)
        ]
        return sorted(scored, key=lambda s: -s.score)

    @torch.no_grad()
    def choose(
        self, question: str, evidence: str, replies: Sequence[str | None], priors: Sequence[float] | None = None
    ) -> int | None:
        """The index of the most likely reply (``run_reply``: one per query the evidence shows;
        None for a query that returned nothing), its mean log-probability as L2's reply plus its
        prior (L1's log-probability of the query); equal replies are one, with the best prior.
        None when no query returned anything."""
        return self.choice(question, evidence, replies, priors)[0]

    def choice(
        self, question: str, evidence: str, replies: Sequence[str | None], priors: Sequence[float] | None = None
    ) -> tuple[int | None, list[float | None]]:
        """``choose``'s index, and L2's score of each reply (its mean log-probability; equal
        replies share one; None for an empty reply, and for every reply where there was only
        one distinct reply to choose, when no model runs)."""
        priors = list(priors) if priors is not None else [0.0] * len(replies)
        best: dict[str, int] = {}
        for index, reply in enumerate(replies):
            if reply and (reply not in best or priors[index] > priors[best[reply]]):
                best[reply] = index
        if len(best) <= 1:  # nothing to choose between: no need to run the model
            return next(iter(best.values()), None), [None] * len(replies)
        texts = list(best)
        means = dict(zip(texts, self._means(question, evidence, texts)))
        totals = [means[text] + priors[best[text]] for text in texts]
        pick = best[texts[max(range(len(texts)), key=totals.__getitem__)]]
        return pick, [means[reply] if reply else None for reply in replies]

    def _means(self, question: str, evidence: str, texts: list[str]) -> list[float]:
        """Each text's mean token log-probability as L2's reply to the question and evidence."""
        prompt = prompt_ids(self.tokenizer, l2_messages(question, evidence))
        replies = candidate_sequences(self.tokenizer, texts)
        with adapter_active(self.model, self.adapter):
            return self._tree(prompt, replies) if self.method == "tree" else self._batch(prompt, replies)

    def _tree(self, prompt: list[int], replies: list[tuple[int, ...]]) -> list[float]:
        tree = TreeCache(self.model, prompt, self.prompts)
        # a reply's last token needs no logits after it
        forward, prompt_row, fed = tree.feed([Branch((), tuple(reply[:-1])) for reply in replies])
        rows, tokens = [], []
        for reply, where in zip(replies, fed):
            rows += [prompt_row, *where.rows]
            tokens += list(reply)
        values = forward.logprobs(rows, tokens).tolist()
        means, start = [], 0
        for reply in replies:
            means.append(sum(values[start : start + len(reply)]) / len(reply))
            start += len(reply)
        return means

    def _batch(self, prompt: list[int], replies: list[tuple[int, ...]]) -> list[float]:
        """The reference: prompt + reply for every set in one right-padded batch (the prompt
        encoded once per set)."""
        width = len(prompt) + max(len(r) for r in replies)
        pad = pad_token_id(self.tokenizer)
        ids = torch.full((len(replies), width), pad)
        mask = torch.zeros((len(replies), width), dtype=torch.long)
        for row, reply in enumerate(replies):
            ids[row, : len(prompt) + len(reply)] = torch.tensor(prompt + list(reply))
            mask[row, : len(prompt) + len(reply)] = 1
        logits = self.model(input_ids=ids, attention_mask=mask).logits[:, len(prompt) - 1 :]
        logprobs = torch.log_softmax(logits.float(), dim=-1)
        return [
            logprobs[row, torch.arange(len(reply)), torch.tensor(list(reply))].mean().item()
            for row, reply in enumerate(replies)
        ]

    def select(
        self, question: str, evidence: str, sets: Sequence[Sequence[dict]], priors: Sequence[float] | None = None
    ) -> list[str]:
        """Ids of the most likely answer set (empty when no set has a node)."""
        scored = self.score(question, evidence, sets, priors)
        return list(scored[0].node_ids) if scored else []


def run_reply(run: QueryRun, retrieval: Retrieval, evidence: str) -> str | None:
    """L2's reply for one query's result: its rows of values (``l2_values_text``) or its nodes'
    names (``l2_answer_text``); None when it returned nothing. Training writes it for the right
    query; answering scores it for each."""
    if returns_values(run):
        # only the rows the reply keeps are written (a query may return thousands)
        return l2_values_text([value_row_text(row, retrieval.nodes) for row in run.rows[:VALUE_ROWS]])
    names = [str(retrieval.nodes[i]["name"]) for i in dict.fromkeys(run.node_ids) if i in retrieval.nodes]
    return l2_answer_text(names, evidence) if names else None
