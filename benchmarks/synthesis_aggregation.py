"""In-query aggregation vs fetching every path row and counting in Python, on the same
MetaQA questions and the same enumeration templates. Prints the time of each and the ratio
(aggregation / fetch), per hop, measured in one run; also checks both give the same counts.

    python benchmarks/synthesis_aggregation.py [--per-hop 100] [--graph metaqa]
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict

from graphraft.config import load_settings
from graphraft.graph import open_store
from graphraft.graph.loaders.metaqa import default_metaqa_dir, read_questions
from graphraft.synthesis.enumeration import HOP_TEMPLATES
from graphraft.synthesis.resolution import EntityResolver
from graphraft.synthesis.templates import template


def fetch_variant(name: str, hops: int) -> str:
    """The same template, returning one row per path instead of one per pattern."""
    body = template(name).split("\nRETURN")[0]
    keys = ", ".join(f"type{i}, out{i}, labels{i}" for i in range(1, hops + 1))
    return f"{body}\nRETURN {keys}, t.id AS tid, t.name AS tname"


def count_in_python(rows, hops: int, answers: set[str]) -> dict:
    targets, hits = defaultdict(set), defaultdict(set)
    for row in rows:
        key = tuple((row[f"type{i}"], row[f"out{i}"], tuple(row[f"labels{i}"])) for i in range(1, hops + 1))
        targets[key].add(row["tid"])
        if row["tname"] in answers:
            hits[key].add(row["tname"])
    return {key: (len(t), len(hits[key])) for key, t in targets.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-hop", type=int, default=100)
    parser.add_argument("--graph", default="metaqa")
    parser.add_argument("--cap", type=int, default=500)
    args = parser.parse_args()
    settings = load_settings()
    with open_store(settings, args.graph) as store:
        resolver = EntityResolver(store)
        for hops in (1, 2, 3):
            questions = list(read_questions(default_metaqa_dir(), hops=(hops,)))[::97][: args.per_hop]
            aggregated = fetched = 0.0
            rows_fetched = 0
            for question in questions:
                anchors = resolver.resolve(question.mention)
                if not anchors:
                    continue
                params = {
                    "anchor": anchors[0].id,
                    "answer_ids": [],
                    "answer_names": list(question.answers),
                    "cap": args.cap,
                }
                started = time.perf_counter()
                in_db = store.read(template(HOP_TEMPLATES[hops]), params, timeout_ms=60_000)
                aggregated += time.perf_counter() - started
                started = time.perf_counter()
                rows = store.read(fetch_variant(HOP_TEMPLATES[hops], hops), params, timeout_ms=60_000)
                in_python = count_in_python(rows, hops, set(question.answers))
                fetched += time.perf_counter() - started
                rows_fetched += len(rows)
                expected = {
                    tuple((r[f"type{i}"], r[f"out{i}"], tuple(r[f"labels{i}"])) for i in range(1, hops + 1)): (
                        r["total"],
                        r["hits"],
                    )
                    for r in in_db
                }
                assert expected == in_python, f"counts differ for {question.question!r}"
            n = len(questions)
            print(
                f"{hops}-hop, {n} questions: in-query aggregation {aggregated / n * 1000:7.2f} ms/question, "
                f"fetch {rows_fetched / n:9.0f} rows and count in Python {fetched / n * 1000:8.2f} ms/question, "
                f"ratio aggregation/fetch = {aggregated / fetched:.3f}"
            )


if __name__ == "__main__":
    main()
