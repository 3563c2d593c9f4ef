"""Enumerate the patterns around anchor nodes, aggregated inside the database.

Each template in queries/ returns one row per distinct pattern with the number of
distinct targets and, when answers are given, how many of them are answers. Synthesis
ranks these; inference renders them all as the candidates the model may write."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from graphraft.config import QUERY_TIMEOUT_MS
from graphraft.errors import DeadlineExceededError, QueryTimeoutError
from graphraft.graph.records import domain_labels
from graphraft.graph.store import GraphStore
from graphraft.synthesis.patterns import AnchorRef, Pattern, Step, render
from graphraft.synthesis.templates import template

HOP_TEMPLATES = {1: "enumerate_1hop", 2: "enumerate_2hop", 3: "enumerate_3hop"}


@dataclass(frozen=True)
class PatternStats:
    pattern: Pattern
    total: int  # distinct targets the rendered query returns
    hits: int = 0  # how many of them are answers

    @property
    def cypher(self) -> str:
        return render(self.pattern)


@dataclass
class Enumeration:
    patterns: list[PatternStats] = field(default_factory=list)
    timeouts: list[str] = field(default_factory=list)  # "anchor id / template" that ran out of time
    hubs_skipped: int = 0  # anchor neighbours with more than `fanout_cap` relationships
    queries: int = 0
    seconds: float = 0.0

    @property
    def candidates(self) -> dict[str, Pattern]:
        """The candidate queries: canonical text -> pattern, each once, in enumeration order
        (what L1 may write, what retrieval runs, what training's targets are among)."""
        found: dict[str, Pattern] = {}
        for stats in self.patterns:
            found.setdefault(stats.cypher, stats.pattern)
        return found

    def extend(self, other: Enumeration) -> None:
        self.patterns += other.patterns
        self.timeouts += other.timeouts
        self.hubs_skipped += other.hubs_skipped
        self.queries += other.queries
        self.seconds += other.seconds


class PatternEnumerator:
    """Runs the enumeration templates with a per-query timeout and a hub fan-out cap."""

    def __init__(self, store: GraphStore, fanout_cap: int = 500, timeout_ms: int = QUERY_TIMEOUT_MS):
        self.store = store
        self.fanout_cap = fanout_cap
        self.timeout_ms = timeout_ms

    def _run(self, name: str, params: dict, result: Enumeration, where: str) -> list[dict]:
        result.queries += 1
        try:
            return self.store.read(self.store.scoped(template(name)), params, timeout_ms=self.timeout_ms)
        except DeadlineExceededError:
            raise  # the whole request's time is up: not one template's
        except QueryTimeoutError:
            result.timeouts.append(f"{where} / {name}")
            return []

    def around(
        self, anchor: AnchorRef, hops: int, answer_ids: Sequence[str] = (), answer_names: Sequence[str] = ()
    ) -> Enumeration:
        """Patterns of exactly ``hops`` steps from one anchor (``hops`` in 1..3)."""
        started = time.perf_counter()
        result = Enumeration()
        params = {
            "anchor": anchor.id,
            "answer_ids": list(answer_ids),
            "answer_names": list(answer_names),
            "cap": self.fanout_cap,
        }
        for row in self._run(HOP_TEMPLATES[hops], params, result, anchor.id):
            steps = tuple(
                Step(row[f"type{i}"], bool(row[f"out{i}"]), domain_labels(row[f"labels{i}"]))
                for i in range(1, hops + 1)
            )
            result.patterns.append(
                PatternStats(Pattern(anchor, steps, target=hops), int(row["total"]), int(row["hits"]))
            )
        if hops > 1:
            rows = self._run("hubs_skipped", {"anchor": anchor.id, "cap": self.fanout_cap}, result, anchor.id)
            result.hubs_skipped = int(rows[0]["hubs"]) if rows else 0
        result.seconds = time.perf_counter() - started
        return result

    def between(
        self, first: AnchorRef, second: AnchorRef, answer_ids: Sequence[str] = (), answer_names: Sequence[str] = ()
    ) -> Enumeration:
        """Length-2 paths joining two anchors; the middle node is the target. Rooted at
        ``first``: callers pass anchors in the order the question mentions them, so the text
        L1 writes follows the question (ordered by id, one wording rendered either way round
        by its names' alphabetical order, and training targets split between the two)."""
        started = time.perf_counter()
        result = Enumeration()
        params = {
            "anchor": first.id,
            "other": second.id,
            "answer_ids": list(answer_ids),
            "answer_names": list(answer_names),
        }
        for row in self._run("enumerate_bridge", params, result, f"{first.id} + {second.id}"):
            steps = (
                Step(row["type1"], bool(row["out1"]), domain_labels(row["labels1"])),
                Step(row["type2"], bool(row["out2"]), domain_labels(row["labels2"])),
            )
            pattern = Pattern(first, steps, target=1, end_anchor=second)
            result.patterns.append(PatternStats(pattern, int(row["total"]), int(row["hits"])))
        result.seconds = time.perf_counter() - started
        return result

    def all_patterns(
        self,
        anchors: Sequence[AnchorRef],
        max_hops: int = 3,
        bridges: bool = True,
        answer_ids: Sequence[str] = (),
        answer_names: Sequence[str] = (),
    ) -> Enumeration:
        """A question's candidates — every pattern of 1..max_hops around each anchor, and the
        bridges between anchor pairs — the one way from anchors to candidates that asking,
        evaluation, training and generation share (`Enumeration.candidates`). With answers,
        each pattern also counts its hits."""
        result = Enumeration()
        for anchor in anchors:
            for hops in range(1, max_hops + 1):
                result.extend(self.around(anchor, hops, answer_ids, answer_names))
        if bridges:
            for i, first in enumerate(anchors):
                for second in anchors[i + 1 :]:
                    if first.id != second.id:
                        result.extend(self.between(first, second, answer_ids, answer_names))
        return result
