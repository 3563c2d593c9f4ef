"""Synthesis's aggregates per group (``reproduce._group_aggregates``), before and after it
stopped building the set of distinct targets for aggregates other than count, on the same
bindings in one run: every aggregate projection of every label root and 1-step path of a graph
(the groups a search works out for a question with two numbers), each worked out from scratch,
timed in turns (before, after, before, ...), with a check that both give the same rows.

    python benchmarks/reproduce_aggregates.py [--graph northwind] [--repeats 3]
"""

from __future__ import annotations

import argparse
import time

from graphraft.config import load_settings
from graphraft.graph import open_store
from graphraft.synthesis import reproduce
from graphraft.synthesis.clauses import ClauseSpace
from graphraft.synthesis.language import Query
from graphraft.synthesis.literals import question_literals
from graphraft.synthesis.patterns import label_roots

QUESTION = "which have more than 3 and fewer than 20"  # two numbers: groups kept by their aggregate too


def before(query: Query, bindings: list[dict[str, dict]], memo: dict) -> list[tuple]:
    """``_group_aggregates`` as it was at 565b083: the distinct targets built for every aggregate."""
    pattern, projection = query.pattern, query.projection
    target = pattern.variable(pattern.target)
    owner = target if projection.step is None else f"r{projection.step}"
    groups = reproduce.groups_of(query, bindings, memo)  # the same groups before and after

    def aggregate(function, values, count_ids, numeric):
        if function == "count":
            return len(count_ids or ())
        return reproduce._aggregate(function, values, numeric)

    return [
        (
            key,
            aggregate(
                projection.aggregate,
                [m[owner].get(projection.key) for m in members] if projection.key else [],
                [m[target].get("id") for m in members] if projection.every else {m[target].get("id") for m in members},
                projection.numeric,
            ),
        )
        for key, members in groups.items()
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graph", default="northwind")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with open_store(load_settings(), args.graph) as store:
        schema = store.schema()
        clauses = ClauseSpace(schema, question_literals(QUESTION), QUESTION)
        roots = label_roots(schema)
        paths = [p for p in roots if len(p.steps) <= 1]
        work = []
        for pattern in paths:
            keys = reproduce._keys_of(clauses, pattern)
            rows = store.read(reproduce.bindings_text(pattern, keys, store.graph_label) + " LIMIT 20001")
            if not rows or len(rows) > 20_000:
                continue
            bindings = reproduce._bindings(keys, rows, {})
            queries = [Query(pattern, (), p) for p, _ in clauses.projections(pattern) if p.aggregate is not None]
            work.append((pattern, bindings, queries))
        for _, bindings, queries in work:
            memo_a: dict = {}
            memo_b: dict = {}
            for query in queries:
                assert before(query, bindings, memo_a) == reproduce._group_aggregates(query, bindings, memo_b), query
        print(
            f"{args.graph}: {len(work)} paths, {sum(len(q) for _, _, q in work):,} aggregate projections, "
            f"{sum(len(b) * len(q) for _, b, q in work):,} bindings gone through; both give the same rows"
        )
        times = {"before": [], "after": []}
        for _ in range(args.repeats):
            for name, function in (("before", before), ("after", reproduce._group_aggregates)):
                started = time.perf_counter()
                for _, bindings, queries in work:
                    memo: dict = {}  # the groups made once a path, as a search makes them
                    for query in queries:
                        function(query, bindings, memo)
                times[name].append(time.perf_counter() - started)
        old, new = min(times["before"]), min(times["after"])
        print(f"before {old:.2f} s, after {new:.2f} s (best of {args.repeats}): {old / new:.2f}x")


if __name__ == "__main__":
    main()
