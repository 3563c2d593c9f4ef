"""Would self-training keep righter labels if each query's similarity to the question counted less
its shape's mean over the round (``--self-train-wording-center``)? A diagnostic over a labels file
whose rows keep every query L1 wrote, scored after the fact against MetaQA's answers (training never
reads an answer; like ``self_train_labels.py`` this script is the only reader).

Each query is put in the schema's words (its closest of 8 readings, with the schema words and with the
phrases alone) and compared with the question by MiniLM; a shape's mean is over every query of that
shape (``shape_of``) L1 wrote for the file's questions. For each way of comparing, wording slack and
margin: how many labels L1's top query keeps (it runs and returns something, beats the second by the
margin, and no other query reads closer by more than the slack) and the share of them right, per hop.

    python benchmarks/label_centering.py \
        outputs/cold_start-w2/l1-self-train-reshape-even-hops-longer/round-4/labels.jsonl
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
from graphraft.synthesis.patterns import Pattern, executable
from graphraft.text import normalize_name
from graphraft.training.self_training import WORDING_READINGS, closest_readings, query_wordings, shape_of


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("labels", type=Path)
    parser.add_argument("--slacks", default="0,0.02,0.05,0.1")
    parser.add_argument("--margins", default="0,1")
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.labels.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if len((r.get("source") or {}).get("queries") or []) > 1]
    items = {i.question: i for i in load_items(Dataset.metaqa, None, None, Split.train, None, None)}
    settings = load_settings(graph="metaqa")
    store = open_store(settings, "metaqa")
    embed = make_embedder(settings).embed
    questions = []  # (hops, [(shape, score, returns, right, similarity by words)])
    try:
        for row in rows:
            item = items[row["question"]]
            gold = {normalize_name(a) for a in item.answers}
            names = {a["id"]: a["mention"] for a in row["anchors"]}
            patterns = [Pattern.from_dict(q["pattern"]) if q.get("pattern") else None for q in row["source"]["queries"]]
            queries = []
            for written, pattern in zip(row["source"]["queries"], patterns):
                ids = [r["id"] for r in store.read(executable(pattern, store))] if pattern else []
                found = {normalize_name(str(n["name"])) for n in store.nodes_by_id(ids)} if ids else set()
                queries.append((shape_of(pattern), written["score"], bool(ids), bool(found & gold)))
            sims = {
                words: closest_readings(
                    embed,
                    row["question"],
                    [
                        query_wordings(p, q["cypher"], names, WORDING_READINGS, words)
                        for p, q in zip(patterns, row["source"]["queries"])
                    ],
                )
                for words in (True, False)
            }
            questions.append((item.hops, queries, sims))
    finally:
        store.close()
    print(f"{len(questions)} questions; kept labels (L1's top query) and the share right, per hop")
    print("| compared | slack | margin | 1-hop | 2-hop | 3-hop | kept, right |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for words in (True, False):
        by_shape = collections.defaultdict(list)
        for _, queries, sims in questions:
            for (shape, *_), value in zip(queries, sims[words]):
                by_shape[shape].append(value)
        means = {shape: sum(v) / len(v) for shape, v in by_shape.items()}
        for centered in (False, True):
            for slack in [float(s) for s in args.slacks.split(",")]:
                for margin in [float(m) for m in args.margins.split(",")]:
                    tally = collections.defaultdict(lambda: [0, 0])
                    for hops, queries, sims in questions:
                        if not queries[0][2] or queries[0][1] - queries[1][1] < margin:
                            continue
                        values = [v - (means[q[0]] if centered else 0.0) for q, v in zip(queries, sims[words])]
                        if max(values[1:]) - values[0] > slack:
                            continue
                        tally[hops][0] += queries[0][3]
                        tally[hops][1] += 1
                    cells = [f"{tally[h][1]}, {100 * tally[h][0] / max(1, tally[h][1]):.1f} %" for h in (1, 2, 3)]
                    right, kept = sum(t[0] for t in tally.values()), sum(t[1] for t in tally.values())
                    how = ("schema words" if words else "phrases alone") + (
                        ", less the shape's mean" if centered else ""
                    )
                    print(f"| {how} | {slack:g} | {margin:g} | " + " | ".join(cells) + f" | {kept}, {right} |")


if __name__ == "__main__":
    main()
