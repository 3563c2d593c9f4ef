"""The paper's ranking rule: most answers hit first, then fewest results.

Ties are broken by fewer hops, then by the rendered query, so the choice is deterministic."""

from __future__ import annotations

from dataclasses import dataclass

from graphraft.synthesis.enumeration import PatternStats


@dataclass(frozen=True)
class Ranked:
    stats: PatternStats
    recall: float
    precision: float

    @property
    def perfect(self) -> bool:
        return self.recall == 1.0 and self.precision == 1.0

    def to_dict(self) -> dict:
        return {
            "cypher": self.stats.cypher,
            "pattern": self.stats.pattern.to_dict(),
            "hops": self.stats.pattern.hops,
            "hits": self.stats.hits,
            "total": self.stats.total,
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
        }


def rank(patterns: list[PatternStats], n_answers: int) -> list[Ranked]:
    unique = {p.cypher: p for p in patterns}  # the same pattern found twice counts once
    ordered = sorted(unique.values(), key=lambda p: (-p.hits, p.total, p.pattern.hops, p.cypher))
    return [Ranked(p, p.hits / n_answers if n_answers else 0.0, p.hits / p.total if p.total else 0.0) for p in ordered]


def select(
    ranked: list[Ranked], min_recall: float = 1.0, min_precision: float = 0.0, alternatives: int = 3
) -> tuple[Ranked | None, list[Ranked]]:
    """The best pattern passing the filters, and the next few that also pass."""
    passing = [r for r in ranked if r.recall >= min_recall and r.precision >= min_precision and r.stats.hits > 0]
    if not passing:
        return None, []
    return passing[0], passing[1 : 1 + alternatives]
