"""Would self-training's wording check keep righter labels if it compared the question with every
reading of a query, not only its first? A diagnostic over a labels file that kept every query L1
wrote (``source.queries``, written since 162c9b1), scored after the fact against MetaQA's answers
(training never reads an answer; like ``self_train_labels.py`` this script is the only reader).

For each question L1 labelled, each of its queries is put in the schema's words — its first
reading, and the best of its first ``--readings`` readings (the verbaliser's phrases) — and compared
with the question by MiniLM. The policies, per hop: how many labels each keeps and how many of
those return a right answer:

- ``labelled``: the file's own outcome (its label: L1's top query, or relabel's choice);
- ``margin``: the top query where it runs and beats the second by the margin, no wording check;
- ``first`` / ``readings``: ``margin``, dropping a label another query reads closer to by more than
  the slack (first reading: what the labeller does; best reading);
- ``closest``: among the queries that run and return something, the one whose best reading is
  closest to the question (no margin);
- ``longer``: ``margin``, but the ``closest`` query instead where it is longer than the top one and
  reads closer (L1 is biased to short queries), sure or not;
- ``longer+slack``: ``longer``, only where the closest reads closer by more than the slack;
- ``switch+slack``: ``margin``, but the ``closest`` query instead (of any length) where it reads closer
  by more than the slack: what the wording check drops, taken instead;
- ``longer-unsure``: ``longer``, only where the top query is not sure (by the margin);
- ``as-long`` (``relabel: closest``): ``longer``, the closest also where it is as long as the top one
  (another choice of types); ``as-long-unsure``: only where not sure; ``as-long+longer-unsure``: the
  closest where it is as long, sure or not, and where it is longer only where not sure;
- with ``--candidates``, over every candidate around the anchors (as `ask` enumerates them), not only
  L1's queries: ``closest-all``, the closest-reading candidate that returns something; ``longer-all``
  (``-unsure``), ``margin``, but that candidate where it is longer than L1's top query and reads closer.

    python benchmarks/label_wording.py outputs/cold_start-w2/l1-self-train-reshape-even-hops/round-2/labels.jsonl

``--phrases-only`` compares the readings without the schema words appended to them (the labels,
types and keys the query names: "… movie directed by person").
"""

from __future__ import annotations

import argparse
import collections
import json
from pathlib import Path

from graphraft.config import load_settings
from graphraft.graph import open_store
from graphraft.graph.embeddings import make_embedder
from graphraft.graph.loaders.question_sets import Dataset, Split, load_items
from graphraft.inference.config import AskConfig
from graphraft.synthesis.enumeration import PatternEnumerator
from graphraft.synthesis.patterns import AnchorRef, Pattern, executable, render
from graphraft.text import normalize_name
from graphraft.training.self_training import closest_readings, cosine, query_wordings

POLICIES = (
    "labelled",
    "margin",
    "first",
    "readings",
    "closest",
    "longer",
    "longer+slack",
    "switch+slack",
    "longer-unsure",
    "as-long",
    "as-long-unsure",
    "as-long+longer-unsure",
    "closest-all",
    "longer-all",
    "longer-all-unsure",
)


def first_per_hop(rows: list[dict], items: dict, count: int) -> list[dict]:
    """The first ``count`` rows of each hop length (the questions')."""
    seen: collections.Counter = collections.Counter()
    kept = []
    for row in rows:
        hop = items[row["question"]].hops
        seen[hop] += 1
        if seen[hop] <= count:
            kept.append(row)
    return kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("labels", type=Path)
    parser.add_argument("--readings", type=int, default=8, help="Readings of each query compared.")
    parser.add_argument(
        "--phrases-only",
        action="store_true",
        help="Readings without the schema words of the labels, types and keys the query names.",
    )
    parser.add_argument(
        "--per-hop", type=int, default=None, help="The file's first N questions of each hop (default: all)."
    )
    parser.add_argument("--margin", type=float, default=1.0)
    parser.add_argument("--slack", type=float, default=0.1)
    parser.add_argument(
        "--candidates", action="store_true", help="Also the *-all policies, over every candidate (slower)."
    )
    args = parser.parse_args()

    rows = [json.loads(line) for line in args.labels.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if (r.get("source") or {}).get("queries")]
    items = {i.question: i for i in load_items(Dataset.metaqa, None, None, Split.train, None, None)}
    if args.per_hop is not None:
        rows = first_per_hop(rows, items, args.per_hop)
    settings = load_settings(graph="metaqa")
    store = open_store(settings, "metaqa")
    embed = make_embedder(settings).embed
    enumerator = PatternEnumerator(store, AskConfig().fanout_cap, settings.query_timeout_ms)
    tally: dict[tuple[str, int], list[int]] = collections.defaultdict(lambda: [0, 0])
    try:
        for row in rows:
            item = items[row["question"]]
            gold = {normalize_name(a) for a in item.answers}
            names = {a["id"]: a["mention"] for a in row["anchors"]}
            queries = [q for q in row["source"]["queries"] if q.get("pattern")]
            if not queries:
                continue
            right, returns, first, best, hops = [], [], [], [], []
            texts = []
            for q in queries:
                pattern = Pattern.from_dict(q["pattern"])
                hops.append(len(pattern.steps))
                ids = [r["id"] for r in store.read(executable(pattern, store))]
                found = {normalize_name(str(n["name"])) for n in store.nodes_by_id(ids)} if ids else set()
                right.append(bool(found & gold))
                returns.append(bool(ids))
                texts.append(query_wordings(pattern, q["cypher"], names, args.readings, not args.phrases_only))
            vectors = embed([row["question"], *(t for ts in texts for t in ts)])
            question, rest = vectors[0], iter(vectors[1:])
            for ts in texts:
                sims = [cosine(question, next(rest)) for _ in ts]
                first.append(sims[0])
                best.append(max(sims))
            margin = row["source"].get("margin")
            sure = returns[0] and (margin is None or margin >= args.margin)
            closest = max((i for i in range(len(queries)) if returns[i]), key=best.__getitem__, default=None)
            longer = closest is not None and hops[closest] > hops[0] and best[closest] > best[0]
            ahead = closest is not None and best[closest] - best[0] > args.slack
            as_long = closest is not None and hops[closest] >= hops[0] and best[closest] > best[0]
            chosen = {
                # the row's own label: L1's top query, or the one relabel chose
                "labelled": next((i for i, q in enumerate(queries) if q["cypher"] == row["cypher"]), None)
                if row["status"] == "ok"
                else None,
                "margin": 0 if sure else None,
                "first": 0 if sure and max(first[1:], default=-1) - first[0] <= args.slack else None,
                "readings": 0 if sure and max(best[1:], default=-1) - best[0] <= args.slack else None,
                "closest": closest,
                "longer": closest if longer else (0 if sure else None),
                "longer+slack": closest if longer and ahead else (0 if sure else None),
                "switch+slack": closest if ahead else (0 if sure else None),
                "longer-unsure": closest if longer and not sure else (0 if sure else None),
                "as-long": closest if as_long else (0 if sure else None),
                "as-long-unsure": closest if as_long and not sure else (0 if sure else None),
                "as-long+longer-unsure": closest
                if (as_long and not longer) or (longer and not sure)
                else (0 if sure else None),
            }
            if args.candidates:
                # over every candidate around the anchors, not only L1's five (candidate_wording.py)
                refs = [AnchorRef(a["id"], tuple(a["labels"])) for a in row["anchors"]]
                candidates = list(enumerator.all_patterns(refs, 3).candidates.values())
                ctexts = [query_wordings(c, render(c), names, args.readings, not args.phrases_only) for c in candidates]
                csims = closest_readings(embed, row["question"], ctexts)
                index = len(right)
                for c in sorted(range(len(candidates)), key=lambda c: -csims[c]):
                    ids = [r["id"] for r in store.read(executable(candidates[c], store))]
                    if ids:
                        found = {normalize_name(str(n["name"])) for n in store.nodes_by_id(ids)}
                        right.append(bool(found & gold))
                        farther = len(candidates[c].steps) > hops[0] and csims[c] > best[0]
                        chosen["closest-all"] = index
                        chosen["longer-all"] = index if farther else (0 if sure else None)
                        chosen["longer-all-unsure"] = index if farther and not sure else (0 if sure else None)
                        break
            for policy, index in chosen.items():
                if index is not None:
                    tally[(policy, item.hops)][0] += right[index]
                    tally[(policy, item.hops)][1] += 1
    finally:
        store.close()
    print(f"{len(rows)} questions with L1's queries kept; kept labels and the share of them right, per hop")
    print("| policy | " + " | ".join(f"{h}-hop kept | right" for h in (1, 2, 3)) + " |")
    print("| --- |" + " ---: | ---: |" * 3)
    for policy in POLICIES:
        if policy.endswith(("-all", "-all-unsure")) and not args.candidates:
            continue
        cells = []
        for hop in (1, 2, 3):
            hit, n = tally[(policy, hop)]
            cells += [str(n), f"{100 * hit / n:.1f} %" if n else "-"]
        print(f"| {policy} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
