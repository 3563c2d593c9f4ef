"""Is the question's likeness to each candidate's words worth using when no real pair exists
(issue 28, item 4)? L1 (trained on generated questions) writes its ``--beams`` best queries for
MetaQA questions; each is put in the schema's words (``query_wordings``, as self-training's
wording check does) and compared with the question (MiniLM cosine similarity, the bundled
embedder). The chosen query is the one with the best L1 score + ``weight`` x similarity, for
each weight (0: L1 alone; a large one: the wording alone); a hit is the chosen query's first
result among the gold answers, per hop (stricter than `graphraft eval`'s Hit@1, which orders the
results its own way: compare weights with each other, not with eval's figures).

    python benchmarks/wording_rerank.py --adapter outputs/cold_start/l1-generated-only/adapter \
        [--split validation] [--limit 100] [--beams 5] [--weights 0,1,2,5,10,20,50,1000] [--alphas 0.5,1]

``--alphas`` also reranks by length alone, GNMT's length penalty: the score divided by
((5 + tokens) / 6) ** alpha (summed log-probabilities favour short queries; does a longer query
L1 ranks a little lower deserve the top?). The last row, "any", is the share of questions where
one of the queries is right (what any reranking can reach). "longer" is self-training's relabel choice
(``longer_query``): the query that reads closest of those that return something where it is longer
than L1's top one and reads closer; "longer where unsure" only where L1's margin is under ``--margin``.
Each query's similarity is its closest of ``WORDING_READINGS`` readings (as the labeller's).
``--centers LABELS`` (a self-training label file decided with ``--self-train-wording-center``, whose
rows keep each query's similarity) also ranks by each query's similarity less its shape's mean over
those rows' queries (``Labeller.centers``): the closest so (of those that return something), and the
same only where L1 is unsure; ``--phrases-only`` compares the phrases alone (as such a file was decided).
"ask's order" is the first query that returns something in the order `ask` tries them (with its
rules: ``AskConfig.asked_type_first``): the query `ask` answers with.
``--dump FILE`` writes each question's queries (text, L1's score, hops, similarity, rows, right; in
ask's order) and the entities it names as JSON lines, to study what tells the right one apart
(``benchmarks/asked_type.py`` reads it).

L1's scores are summed log-probabilities (nats); the similarity lies in [-1, 1], so a weight of
10 lets a 0.1 better wording outweigh a 1-nat worse score. Pick a weight on ``--split train``
(MetaQA's training questions) and read it on validation; nothing here is used by `ask`."""

from __future__ import annotations

import argparse
import collections
import json
import time
from pathlib import Path

from graphraft.config import load_settings
from graphraft.deadline import Deadline
from graphraft.graph.embeddings import make_embedder
from graphraft.graph.loaders.question_sets import Dataset, Split, load_items
from graphraft.inference.pipeline import GraphRAFT
from graphraft.synthesis.rows import read_rows
from graphraft.text import normalize_name
from graphraft.training.self_training import (
    WORDING_READINGS,
    closest_readings,
    hops_of,
    less_shape_means,
    longer_query,
    query_wordings,
    shape_means,
)


def centers_of(path: Path) -> dict[str, float]:
    """The shape means of a label file decided with ``wording_center`` (its rows keep each query's similarity)."""
    means = shape_means(read_rows(path))
    if not means:
        raise SystemExit(f"{path}: no query keeps its similarity (decide it with --self-train-wording-center)")
    return means


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--adapter", type=Path, required=True, help="An L1 adapter.")
    parser.add_argument("--split", choices=("train", "validation"), default="validation")
    parser.add_argument("--limit", type=int, default=100, help="Questions a hop.")
    parser.add_argument("--beams", type=int, default=5, help="Queries L1 writes per question.")
    parser.add_argument("--weights", default="0,1,2,5,10,20,50,1000")
    parser.add_argument("--alphas", default="0.5,1,2", help="Length penalties to rerank by (none: '').")
    parser.add_argument("--margin", type=float, default=1.0, help="L1 sure of its top query (nats), for 'unsure'.")
    parser.add_argument("--dump", type=Path, help="Write each question's queries here (JSON lines).")
    parser.add_argument("--centers", type=Path, help="A label file decided with wording_center: its shape means.")
    parser.add_argument("--phrases-only", action="store_true", help="Readings without the schema words.")
    args = parser.parse_args()
    dump = args.dump.open("w", encoding="utf-8") if args.dump else None
    weights = [float(w) for w in args.weights.split(",")]
    alphas = [float(a) for a in args.alphas.split(",") if a]
    settings = load_settings(graph="metaqa", l1_adapter=args.adapter, l2_adapter=None)
    embed = make_embedder(settings).embed
    items = load_items(Dataset.metaqa, None, None, Split(args.split), None, args.limit)
    pipeline = GraphRAFT(settings, graph="metaqa", node_budget=1_000_000)
    hits: dict[float, collections.Counter] = {w: collections.Counter() for w in weights}
    by_length: dict[float, collections.Counter] = {a: collections.Counter() for a in alphas}
    anywhere: collections.Counter = collections.Counter()
    longer_hits: collections.Counter = collections.Counter()
    unsure_hits: collections.Counter = collections.Counter()
    asked_hits: collections.Counter = collections.Counter()
    totals: collections.Counter = collections.Counter()
    centered_hits: collections.Counter = collections.Counter()
    centered_unsure_hits: collections.Counter = collections.Counter()
    means = centers_of(args.centers) if args.centers else None
    started = time.perf_counter()
    try:
        for start in range(0, len(items), 16):
            part = items[start : start + 16]
            deadlines = [Deadline(settings.ask_timeout_s, "asking") for _ in part]
            answers = pipeline.ask_each([i.question for i in part], deadlines, beams=args.beams)
            for item, answer in zip(part, answers):
                totals[item.hops] += 1
                if isinstance(answer, Exception) or not answer.queries:
                    continue
                names = {a["id"]: a["mention"] for a in answer.anchors}
                queries = answer.queries
                structures = [answer.structure_of(q.cypher) for q in queries]
                words = not args.phrases_only
                texts = [
                    query_wordings(s, q.cypher, names, WORDING_READINGS, words) for q, s in zip(queries, structures)
                ]
                similarity = closest_readings(embed, item.question, texts)
                gold = {normalize_name(a) for a in item.answers}
                firsts = [q.ids[0] if q.ids else None for q in queries]
                found = {n["id"]: n["name"] for n in pipeline.store.nodes_by_id([f for f in firsts if f])}
                right = [f is not None and normalize_name(str(found.get(f, ""))) in gold for f in firsts]
                for w in weights:
                    best = max(range(len(queries)), key=lambda k: queries[k].score + w * similarity[k])
                    hits[w][item.hops] += right[best]
                tokens = [len(pipeline.tokenizer(q.cypher, add_special_tokens=False)["input_ids"]) for q in queries]
                for a in alphas:
                    best = max(range(len(queries)), key=lambda k: queries[k].score / ((5 + tokens[k]) / 6) ** a)
                    by_length[a][item.hops] += right[best]
                # relabel's choice (self_training.longer_query): a longer query that reads closer
                hops = [hops_of(s) for s in structures]
                longer = longer_query(similarity, hops, [bool(q.ids) for q in queries].__getitem__)
                sure = len(queries) < 2 or queries[0].score - queries[1].score >= args.margin
                longer_hits[item.hops] += right[0 if longer is None else longer]
                unsure_hits[item.hops] += right[0 if longer is None or sure else longer]
                anywhere[item.hops] += any(right)
                # ask's own order (the paths answering what is asked first: AskConfig.asked_type_first)
                asked_hits[item.hops] += right[next((k for k, q in enumerate(queries) if q.ids), 0)]
                if means is not None:
                    returning = [k for k, q in enumerate(queries) if q.ids] or [0]
                    centered = less_shape_means(similarity, structures, means)
                    closest = max(returning, key=centered.__getitem__)
                    centered_hits[item.hops] += right[closest]
                    centered_unsure_hits[item.hops] += right[0 if sure else closest]
                if dump:
                    queries_out = [
                        {
                            "cypher": q.cypher,
                            "score": float(q.score),
                            "hops": h,
                            "similarity": float(sim),
                            "rows": len(q.ids),
                            "right": r,
                        }
                        for q, h, sim, r in zip(queries, hops, similarity, right)
                    ]
                    dump.write(
                        json.dumps(
                            {
                                "question": item.question,
                                "hops": item.hops,
                                "mentions": list(answer.mentions),
                                "queries": queries_out,
                            }
                        )
                        + "\n"
                    )
            print(f"{start + len(part)}/{len(items)} questions, {time.perf_counter() - started:.0f}s", flush=True)
    finally:
        pipeline.close()
        if dump:
            dump.close()
    hops = sorted(totals)
    print(f"\n{args.split}, {sum(totals.values())} questions, L1 {args.adapter}, {args.beams} queries each")
    print("| rerank | Hit@1 % all | " + " | ".join(f"{h}-hop" for h in hops) + " |")
    print("| --- | ---: | " + " | ".join("---:" for _ in hops) + " |")
    rows = [(f"wording weight {w:g}", hits[w]) for w in weights]
    rows += [(f"length penalty {a:g}", by_length[a]) for a in alphas]
    rows += [("longer (relabel's choice)", longer_hits), (f"longer where unsure (margin {args.margin:g})", unsure_hits)]
    if means is not None:
        rows += [("less the shape's mean: closest", centered_hits)]
        rows += [(f"less the shape's mean: closest where unsure (margin {args.margin:g})", centered_unsure_hits)]
    rows += [("ask's order (the first query tried that returns something)", asked_hits), ("any", anywhere)]
    for name, counts in rows:
        per = [100 * counts[h] / totals[h] for h in hops]
        print(
            f"| {name} | {100 * sum(counts.values()) / sum(totals.values()):.1f} | "
            + " | ".join(f"{p:.1f}" for p in per)
            + " |"
        )


if __name__ == "__main__":
    main()
