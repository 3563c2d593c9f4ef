"""Retrieval and answer metrics, as STaRK defines them (Hit@k, Recall@k, MRR), plus
precision / recall / F1 of the predicted answer set.

Differences from STaRK's reference code, on purpose: a question with nothing retrieved
scores 0 and is kept in the average (the reference drops it, which flatters a method that
often retrieves nothing); duplicate predictions count once, at their first position.

An empty answer set has nothing to hit: every ranking metric is 0, and the set metrics are
1 only when nothing was predicted either (perfect agreement), else 0."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import asdict, dataclass
from statistics import fmean


def deduplicate(ranked: Iterable[Hashable]) -> list:
    """The ranking with repeats removed, each kept at its first position."""
    return list(dict.fromkeys(ranked))


def hit_at_k(ranked: Sequence[Hashable], answers: Iterable[Hashable], k: int) -> float:
    """1 if any of the first k predictions is an answer."""
    gold = set(answers)
    return float(any(p in gold for p in deduplicate(ranked)[:k]))


def recall_at_k(ranked: Sequence[Hashable], answers: Iterable[Hashable], k: int) -> float:
    """The share of the answers among the first k predictions."""
    gold = set(answers)
    if not gold:
        return 0.0
    return len(gold.intersection(deduplicate(ranked)[:k])) / len(gold)


def reciprocal_rank(ranked: Sequence[Hashable], answers: Iterable[Hashable]) -> float:
    """1 / the position of the first answer (1-based); 0 when none is predicted."""
    gold = set(answers)
    for position, prediction in enumerate(deduplicate(ranked), start=1):
        if prediction in gold:
            return 1.0 / position
    return 0.0


def set_scores(predicted: Iterable[Hashable], answers: Iterable[Hashable]) -> tuple[float, float, float]:
    """Precision, recall and F1 of a predicted answer set."""
    predicted, gold = set(predicted), set(answers)
    if not gold:
        value = float(not predicted)
        return value, value, value
    if not predicted:
        return 0.0, 0.0, 0.0
    right = len(predicted & gold)
    precision, recall = right / len(predicted), right / len(gold)
    f1 = 2 * precision * recall / (precision + recall) if right else 0.0
    return precision, recall, f1


@dataclass(frozen=True)
class QuestionScores:
    hit_at_1: float
    hit_at_5: float
    recall_at_20: float
    mrr: float
    precision: float
    recall: float
    f1: float


def score_question(
    ranked: Sequence[Hashable], predicted: Iterable[Hashable], answers: Iterable[Hashable]
) -> QuestionScores:
    """All metrics for one question: ``ranked`` is the full ranking (for Hit@k, Recall@20,
    MRR), ``predicted`` the answer set the method commits to (for P/R/F1)."""
    answers = set(answers)
    precision, recall, f1 = set_scores(predicted, answers)
    return QuestionScores(
        hit_at_k(ranked, answers, 1),
        hit_at_k(ranked, answers, 5),
        recall_at_k(ranked, answers, 20),
        reciprocal_rank(ranked, answers),
        precision,
        recall,
        f1,
    )


METRIC_NAMES = tuple(QuestionScores.__dataclass_fields__)


def average(scores: Sequence[QuestionScores]) -> dict[str, float]:
    """Mean of every metric over all questions (0 for each when there are none)."""
    if not scores:
        return {name: 0.0 for name in METRIC_NAMES}
    rows = [asdict(s) for s in scores]
    return {name: fmean(row[name] for row in rows) for name in METRIC_NAMES}
