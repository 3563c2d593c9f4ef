"""What should tell `ask` which of L1's path queries answers what the question asks for
(``AskConfig.asked_type_first``, issue 28)? Reads the queries ``benchmarks/wording_rerank.py
--dump`` wrote (each question's queries with L1's score, rows and whether the first result is
right) and scores, per hop, the first query that returns something in each order:

- L1's order (its scores);
- label: today's rule — the queries whose answer nodes have the label nearest (MiniLM) to the
  question's asked-for phrase (``query_order.asked_phrase``) first, L1's order within;
- label + relationship: each query's answer described by its label's words and the words of the
  relationship type that reaches it ("person starred actors"); the queries whose description
  reads nearest to the phrase first, among the descriptions L1's queries have;
- relationship: the relationship type's words alone, the same way;
- label, then label + relationship: today's rule, and within its first part the nearest
  description first.

    python benchmarks/wording_rerank.py --adapter ADAPTER --split train --limit 100 --weights 0 \\
        --alphas '' --dump outputs/rerank/train.jsonl
    python benchmarks/asked_type.py outputs/rerank/train.jsonl [--graph metaqa]

Pick on training questions' dumps, read once on validation's. Nothing here is used by `ask`."""

from __future__ import annotations

import argparse
import collections
import json
import re
from collections.abc import Callable
from pathlib import Path

from graphraft.config import load_settings
from graphraft.graph import open_store
from graphraft.graph.embeddings import cosine, make_embedder
from graphraft.inference.query_order import asked_phrase, nearest_label
from graphraft.synthesis.verbalise import words_of

#: a step of a rendered path: the relationship's type, then the node it reaches and its label
STEP = re.compile(r"-\[r?\d*:(\w+)\]->?\((n\d+):(\w+)\)")
RETURNED = re.compile(r"RETURN DISTINCT (n\d+)\b")


def answer_of(cypher: str) -> tuple[str, str] | None:
    """(label, relationship type reaching it) of a path query's answer node; None when not a path."""
    returned = RETURNED.search(cypher)
    if returned is None:
        return None
    for rel_type, node, label in STEP.findall(cypher):
        if node == returned.group(1):
            return label, rel_type
    return None


def words(text: str) -> str:
    return " ".join(words_of(text)).casefold() or text.casefold()


def nearest_first(queries: list[dict], key: Callable[[dict], str | None], phrase: str, vector) -> list[dict]:
    """The queries whose ``key`` reads nearest to ``phrase`` (``vector``: embed of a text) first, order kept within."""
    keys = {k for q in queries if (k := key(q)) is not None}
    if not keys:
        return queries
    asked = vector(phrase)
    best = max(sorted(keys), key=lambda k: cosine(asked, vector(k)))
    return sorted(queries, key=lambda q: 0 if key(q) == best else 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dumps", nargs="+", type=Path, help="wording_rerank.py --dump files (JSON lines).")
    parser.add_argument("--graph", default="metaqa")
    args = parser.parse_args()
    settings = load_settings(graph=args.graph)
    store = open_store(settings, args.graph)
    try:
        labels = list(store.schema().labels)
    finally:
        store.close()
    embed = make_embedder(settings).embed
    vectors: dict[str, list[float]] = {}

    def vector(text: str) -> list[float]:
        if text not in vectors:
            (vectors[text],) = embed([text])
        return vectors[text]

    label_cache: dict = {}
    orders = (
        "L1's order",
        "label (ask's rule)",
        "label + relationship",
        "relationship",
        "label, then label + relationship",
    )
    hits = {name: collections.Counter() for name in orders}
    totals: collections.Counter = collections.Counter()
    changed = {name: [] for name in orders}
    for dump in args.dumps:
        for line in dump.read_text().splitlines():
            row = json.loads(line)
            totals[row["hops"]] += 1
            queries = sorted(row["queries"], key=lambda q: -q["score"])  # L1's order (stable on ties)
            if not queries:
                continue
            for q in queries:
                q["answer"] = answer_of(q["cypher"])
            phrase = asked_phrase(row["question"], row.get("mentions", []))

            def label_of(q):
                return q["answer"][0] if q["answer"] else None

            def described(q):
                return f"{words(q['answer'][0])} {words(q['answer'][1])}" if q["answer"] else None

            def relation(q):
                return words(q["answer"][1]) if q["answer"] else None

            ordered = {"L1's order": queries}
            if phrase is None or len(queries) < 2:
                for name in orders[1:]:
                    ordered[name] = queries
            else:
                label = nearest_label(phrase, labels, embed, label_cache)
                by_label = sorted(queries, key=lambda q: 0 if label_of(q) == label else 1)
                ordered["label (ask's rule)"] = by_label
                ordered["label + relationship"] = nearest_first(queries, described, phrase, vector)
                ordered["relationship"] = nearest_first(queries, relation, phrase, vector)
                first = [q for q in by_label if label_of(q) == label]
                rest = [q for q in by_label if label_of(q) != label]
                ordered["label, then label + relationship"] = (
                    nearest_first(first, described, phrase, vector) + rest if first else by_label
                )
            for name, order in ordered.items():
                chosen = next((q for q in order if q["rows"]), order[0])
                hits[name][row["hops"]] += chosen["right"]
                base = next((q for q in ordered["label (ask's rule)"] if q["rows"]), queries[0])
                if chosen["right"] != base["right"]:
                    changed[name].append((chosen["right"], row["question"], chosen["cypher"]))
    hops = sorted(totals)
    print(f"{sum(totals.values())} questions ({', '.join(str(d) for d in args.dumps)})")
    print("| order | Hit@1 % all | " + " | ".join(f"{h}-hop" for h in hops) + " | right / wrong against ask's rule |")
    print("| --- | ---: | " + " | ".join("---:" for _ in hops) + " | ---: |")
    for name in orders:
        counts = hits[name]
        gained = sum(1 for right, *_ in changed[name] if right)
        print(
            f"| {name} | {100 * sum(counts.values()) / sum(totals.values()):.1f} | "
            + " | ".join(f"{100 * counts[h] / totals[h]:.1f}" for h in hops)
            + f" | {gained} / {len(changed[name]) - gained} |"
        )
    for name in orders[2:]:
        for right, question, cypher in changed[name][:8]:
            print(f"  {name}: {'right' if right else 'wrong'}: {question}  ->  {cypher}")


if __name__ == "__main__":
    main()
