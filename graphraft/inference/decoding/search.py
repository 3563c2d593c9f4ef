"""Exact top-m search over the candidate radix tree: the m candidates with the highest
summed log-probability (the score beam search uses), found exactly where beam search is
approximate.

Best-first: an open node's key is its path's log-probability up to the first token of its
edge. Adding tokens can only lower a log-probability, so the key bounds every candidate below
the node, and a finished candidate that reaches the top of the queue beats everything still
open: the first m taken off are the m best (A* with a zero heuristic).

Each forward call feeds many edges at once through tree attention (``TreeCache``): the open
nodes in key order, then, while the call's token budget lasts, their descendants by a guessed
key (the parent's key less the log of its number of children). On a CPU a call of 48 tokens
cost about 3 times one of a single token, not 48 times (measured), so wide calls mean few calls.
Guesses only decide what is fed early; results depend on exact scores alone.

Fail-closed: only sequences of the tree come out."""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from graphraft.inference.decoding.radix import RadixNode
from graphraft.inference.decoding.tree_attention import (
    Branch,
    FedBranch,
    Forward,
    PromptCache,
    TreeCache,
    common_prefix_length,
)

DEFAULT_TOKEN_BUDGET = 48  # tokens per call: measured best of 16-128 on a 2-core CPU


@dataclass(frozen=True)
class Scored:
    sequence: tuple[int, ...]
    score: float  # summed log-probability of the sequence after the prompt


@dataclass
class SearchStats:
    calls: int = 0
    fed_tokens: int = 0


def _cost(node: RadixNode) -> int:
    """Tokens to feed for a node: its whole edge, but a leaf's last token needs no logits."""
    return len(node.edge) - (0 if node.children else 1)


def top_m(
    model,
    prompt: Sequence[int],
    root: RadixNode,
    m: int,
    token_budget: int = DEFAULT_TOKEN_BUDGET,
    prefix: PromptCache | None = None,
    stats: SearchStats | None = None,
) -> list[Scored]:
    """The ``m`` best sequences of the tree (fewer if it has fewer), best first."""
    return top_m_many(model, [prompt], [root], m, token_budget, prefix, stats)[0]


def top_m_many(
    model,
    prompts: Sequence[Sequence[int]],
    roots: Sequence[RadixNode],
    m: int,
    token_budget: int = DEFAULT_TOKEN_BUDGET,
    prefix: PromptCache | None = None,
    stats: SearchStats | None = None,
    check: Callable[[], None] | None = None,
) -> list[list[Scored]]:
    """``top_m`` for several prompts and trees at once (a forest): every forward call feeds
    the branches of all searches still running, each within its own token budget, so a call
    is wider and the calls fewer than one question at a time. The beginning the prompts
    share is fed once; each prompt's rest is a branch below it, its tree below that. Each
    search's result is exactly what it would be alone. ``check`` runs before every forward
    call (an overall deadline raises there)."""
    stats = stats or SearchStats()
    searches = [
        _Search(root, m, token_budget) if m >= 1 and (root.children or root.sequence) else None for root in roots
    ]
    live = [i for i, search in enumerate(searches) if search is not None]
    if not live:
        return [[] for _ in roots]
    shared = _shared_length([prompts[i] for i in live])
    tree = TreeCache(model, list(prompts[live[0]][:shared]), prefix)
    for i in live:
        searches[i].remainder = tuple(prompts[i][shared:])
    first = True
    while live:
        batch, spans = [], []
        for i in live:
            own = searches[i].branches(first)
            spans.append((len(batch), len(batch) + len(own)))
            offset = len(batch)
            batch.extend(Branch(b.path, b.tokens, None if b.after is None else b.after + offset) for b in own)
        if not batch:
            break  # the guard in ``absorb`` ended every search
        if check is not None:
            check()
        forward, _, fed = tree.feed(batch)
        stats.calls += 1
        stats.fed_tokens += sum(len(b.tokens) for b in batch)
        live = [i for i, (start, end) in zip(live, spans) if not searches[i].absorb(forward, fed[start:end])]
        first = False
    return [search.found if search is not None else [] for search in searches]


def _shared_length(prompts: Sequence[Sequence[int]]) -> int:
    """The prompts' common beginning, leaving each at least one token of its own (its last
    token's logits are the first distribution of its search)."""
    return common_prefix_length(prompts, min(len(p) for p in prompts) - 1)


class _Search:
    """One question's best-first search; ``top_m_many`` feeds its branches and hands it back
    what the forward call computed."""

    def __init__(self, root: RadixNode, m: int, budget: int):
        self.root, self.m, self.budget = root, m, max(1, budget)
        self.remainder: tuple[int, ...] = ()  # prompt tokens to feed before the root, on the first call
        self.tick = itertools.count()
        self.queue: list = []  # (-value, tick, node, done); done: value is a finished candidate's score
        # open nodes (parent scored, node not fed): id -> (upper bound, node, parent)
        self.open_nodes: dict[int, tuple[float, RadixNode, RadixNode]] = {}
        self.score: dict[int, float] = {}  # fed nodes: exact log-probability of the path
        self.path: dict[int, tuple[int, ...]] = {}  # fed nodes: cache slots of the path
        self.best: list[float] = []  # min-heap of the m best finished scores seen (for pruning)
        self.found: list[Scored] = []
        self.selected: list[tuple[RadixNode, RadixNode]] = []
        self.first = True

    # -- queue ------------------------------------------------------------------------------
    def bar(self) -> float:
        return self.best[0] if len(self.best) >= self.m else -math.inf

    def finish(self, node: RadixNode, value: float) -> None:
        heapq.heappush(self.queue, (-value, next(self.tick), node, True))
        heapq.heappush(self.best, value)
        if len(self.best) > self.m:
            heapq.heappop(self.best)

    def open(self, node: RadixNode, parent: RadixNode, bound: float) -> None:
        if bound < self.bar():
            return  # m finished candidates already beat everything below it
        if _cost(node) == 0:  # a one-token leaf: its key is its exact score
            self.finish(node, bound)
            return
        self.open_nodes[id(node)] = (bound, node, parent)
        heapq.heappush(self.queue, (-bound, next(self.tick), node, False))

    def emit(self) -> bool:
        """Take finished candidates off the top of the queue; True when the search is over."""
        while self.queue:
            negative, _, node, done = self.queue[0]
            if not done:
                if id(node) in self.open_nodes:
                    return False
                heapq.heappop(self.queue)  # fed since it was queued
                continue
            heapq.heappop(self.queue)
            self.found.append(Scored(node.sequence, -negative))
            if len(self.found) == self.m:
                return True
        return True  # nothing left: fewer candidates than m

    # -- calls ------------------------------------------------------------------------------
    def select(self, first: bool) -> list[tuple[RadixNode, RadixNode]]:
        """(node, parent) pairs to feed next, parents first: open nodes by key, then their
        descendants by a guessed key, within the token budget (at least one node)."""
        heap: list = []
        if first:
            share = math.log(max(1, len(self.root.children)))
            for child in self.root.children:
                heap.append((share, next(self.tick), child, self.root))
        else:
            bar = self.bar()
            for bound, node, parent in self.open_nodes.values():
                if bound >= bar:
                    heap.append((-bound, next(self.tick), node, parent))
        heapq.heapify(heap)
        chosen, used = [], 0
        while heap:
            negative, _, node, parent = heapq.heappop(heap)
            cost = _cost(node)
            if cost == 0:
                continue  # scored for free once its parent is
            if chosen and used + cost > self.budget:
                continue
            chosen.append((node, parent))
            used += cost
            share = math.log(max(1, len(node.children)))
            for child in node.children:
                heapq.heappush(heap, (negative + share, next(self.tick), child, node))
        return chosen

    def branches(self, first: bool) -> list[Branch]:
        """What to feed in the next call (``after`` counts within this list)."""
        self.first = first
        self.selected = self.select(first)
        lead = 1 if first else 0  # the prompt's rest opens the first call; the root hangs below it
        index = {id(node): lead + i for i, (node, _) in enumerate(self.selected)}
        if first:
            index[id(self.root)] = 0
        out = [Branch((), self.remainder)] if first else []
        out += [
            Branch(self.path.get(id(parent), ()), node.edge[: _cost(node)], index.get(id(parent)))
            for node, parent in self.selected
        ]
        return out

    def absorb(self, forward: Forward, fed: list[FedBranch]) -> bool:
        """Take in a call's results; True when the search is over."""
        if not self.first and not self.selected:
            # unreachable while the bounds hold (m finished candidates above the bar are
            # emitted before a pruned node reaches the top); a guard against looping
            return True
        self.step(self.selected, self.first, forward, fed)
        return self.emit() or not self.open_nodes

    def step(
        self, selected: list[tuple[RadixNode, RadixNode]], first: bool, forward: Forward, fed: list[FedBranch]
    ) -> None:
        last_row = {}
        if first:  # the prompt's rest: the root's distribution is its last token's
            self.path[id(self.root)] = fed[0].path
            last_row[id(self.root)] = fed[0].rows[-1]
            fed = fed[1:]
        rows, tokens, bounds = [], [], [0]
        for (node, _), where in zip(selected, fed):
            self.path[id(node)] = where.path
            last_row[id(node)] = where.rows[-1] if len(where.rows) else None
            for i in range(1, len(node.edge)):  # edge token i given the ones before it
                rows.append(where.rows[i - 1])
                tokens.append(node.edge[i])
            bounds.append(len(rows))
        values = forward.logprobs(rows, tokens).tolist() if rows else []
        edge_sum = {id(node): math.fsum(values[bounds[i] : bounds[i + 1]]) for i, (node, _) in enumerate(selected)}

        # exact scores: open nodes fed now have their key; the root starts at 0
        level = []
        if first:
            self.score[id(self.root)] = 0.0
            level.append(self.root)
        for node, _ in selected:
            if id(node) in self.open_nodes:
                self.score[id(node)] = self.open_nodes.pop(id(node))[0] + edge_sum[id(node)]
                level.append(node)
        # then down the fed part of the tree, one gather per level
        while level:
            for node in level:
                if node.sequence is not None and node is not self.root:
                    self.finish(node, self.score[id(node)])
            pairs = [(node, child) for node in level for child in node.children]
            firsts = (
                forward.logprobs(
                    [last_row[id(node)] for node, _ in pairs], [child.edge[0] for _, child in pairs]
                ).tolist()
                if pairs
                else []
            )
            level = []
            for (node, child), value in zip(pairs, firsts):
                bound = self.score[id(node)] + value
                if id(child) in edge_sum:  # fed in this call too
                    self.score[id(child)] = bound + edge_sum[id(child)]
                    level.append(child)
                else:
                    self.open(child, node, bound)
