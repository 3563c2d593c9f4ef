"""What choosing among L1's queries by their results could give, from a `graphraft eval` run's
questions.jsonl (each question's queries of the language, run again whole: L1's score, whether
its rows are the gold result, a digest equal results share; ``evaluation.execution.each_query``).

Prints, for the no-l2 method: L1's top query (the eval's execution accuracy); the oracle (one of
L1's queries gives the gold result); and a vote — the result that L1's queries returning it
weigh most, each by exp(score / T), queries that returned nothing left out (execution-based
consensus: MBR-exec, Shi et al. 2022) — at a few temperatures T; and the first query `ask`'s
order tries (the list's order) among L1's first N queries (an eval with ``--beams 20`` read as
with 5 or 10) and among those within D nats of L1's best: how far the rules that reorder L1's
queries (``inference.query_order``) should reach. A reading of what the eval ran, not a method
`ask` has: nothing is run again.

    python benchmarks/query_vote.py outputs/eval/NAME/questions.jsonl [--method no-l2]
"""

from __future__ import annotations

import argparse
import json
import math
from collections import defaultdict
from pathlib import Path

TEMPERATURES = (0.5, 1.0, 2.0, 4.0)
MARGINS = (0.0, 1.0, 2.0, 3.0, 5.0, math.inf)


def voted(queries: list[dict], temperature: float) -> dict | None:
    """The heaviest result's best query (None: no query returned anything)."""
    weight: dict[str, float] = defaultdict(float)
    best: dict[str, dict] = {}
    for query in queries:
        if query["rows"] == 0:
            continue
        weight[query["digest"]] += math.exp(query["score"] / temperature)
        best.setdefault(query["digest"], query)
    return best[max(weight, key=weight.get)] if weight else None


def l1_first(queries: list[dict], first: int) -> list[dict]:
    """L1's ``first`` best queries, in the list's order (the order `ask` tried them)."""
    kept = {id(q) for q in sorted(queries, key=lambda q: -q["score"])[:first]}
    return [q for q in queries if id(q) in kept]


def within(queries: list[dict], first: int, margin: float) -> bool:
    """Whether the query `ask` tries first among L1's ``first`` that return something and score
    within ``margin`` nats of the best of them gives the gold result (the margin 0: L1's best;
    inf: `ask`'s own order, its rules reaching as far down as L1's queries go)."""
    live = [q for q in l1_first(queries, first) if q["rows"]]
    if not live:
        return False
    best = max(q["score"] for q in live)
    return next(q for q in live if q["score"] >= best - margin)["right"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("questions", type=Path)
    parser.add_argument("--method", default="no-l2")
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.questions.read_text().splitlines()]
    rows = [r for r in rows if r["method"] == args.method and r.get("execution") is not None]
    if not rows or all("queries" not in r for r in rows):
        raise SystemExit(f"{args.questions}: no {args.method} question with its queries (an eval from before 57d0712?)")
    count = len(rows)
    top = sum(r["execution"] for r in rows)
    oracle = sum(r["execution"] or any(q["right"] for q in r["queries"]) for r in rows)
    print(f"{args.questions} ({args.method}, {count} questions)")
    print(f"  L1's top query: {top} ({top / count:.1%})")
    print(f"  oracle, one of L1's queries: {oracle} ({oracle / count:.1%})")
    for temperature in TEMPERATURES:
        right = 0
        for r in rows:
            queries = r["queries"]
            first = next((q for q in queries if q["rows"]), None)
            chosen = voted(queries, temperature)
            # the top query's own result chosen: the eval's verdict on the answer (its rows)
            right += r["execution"] if chosen is None or chosen is first else chosen["right"]
        print(f"  vote, T={temperature}: {right} ({right / count:.1%})")
    # ask's order (the list's) among L1's first N queries, and among those within D nats of its best
    most = max(len(r["queries"]) for r in rows)
    for first in sorted({n for n in (5, 10, most) if n <= most}):
        cells = []
        for margin in MARGINS:
            right = sum(within(r["queries"], first, margin) for r in rows)
            cells.append(f"D={margin:g}: {right / count:.1%}")
        reach = sum(any(q["right"] for q in l1_first(r["queries"], first)) for r in rows)
        print(f"  ask's order, L1's first {first} (oracle {reach / count:.1%}): " + ", ".join(cells))


if __name__ == "__main__":
    main()
