"""`ask` latency: the previous release's path and the new one, in one process, on the same
questions, with the same model and adapters.

- before: L1 by Hugging Face beam search under the trie logits processor (one forward per
  generated token), L2 scoring every answer set in a right-padded batch;
- after: L1 by the exact top-m search over the candidate radix tree (a few wide forward calls
  with tree attention), L2 in one pass over a shared prompt;
- after-Nq: the same with `ask`'s new default, L1 writing as many queries as L2 reads (N).

Questions alternate which path runs first. Prints p50/p95 per stage, the speed-up, how often
the two agree on the top query, and Hit@1 of each; with --bfloat16 also the new path with
bfloat16 weights (and how often its top query differs from float32's). Then throughput, as
evaluation runs: the new default path asking all questions one at a time, and `ask_many`
searching --group questions together in each forward call (seconds a question, and whether
the answers are the same).

With --compare-language the two paths are instead `--language paths` and `--language full` (the
whole query language's space for each question) on the same model and adapters.

    python benchmarks/ask_latency.py --dataset demo \\
        --l1-adapter outputs/training/l1-demo/adapter --l2-adapter outputs/training/l2-demo/adapter
    python benchmarks/ask_latency.py --dataset metaqa --limit 30 \\
        --l1-adapter outputs/training/l1-metaqa/adapter --l2-adapter outputs/training/l2-metaqa/adapter
    python benchmarks/ask_latency.py --dataset metaqa --limit 30 --compare-language --no-default \\
        --l1-adapter outputs/training/l1-metaqa/adapter --l2-adapter outputs/training/l2-metaqa/adapter
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import time
from pathlib import Path

import torch

from graphraft.config import load_settings
from graphraft.evaluation.runner import outcome_from_answer
from graphraft.graph.loaders.question_sets import Dataset, Split, graph_for, load_items
from graphraft.inference.generation import ConstrainedGenerator
from graphraft.inference.pipeline import GraphRAFT
from graphraft.inference.selection import AnswerSelector

STAGES = ("anchors", "candidates", "generate", "execute", "reason", "total")


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def before(pipeline: GraphRAFT) -> GraphRAFT:
    """The previous release's path on the same model and adapters."""
    old = copy.copy(pipeline)
    old.generator = ConstrainedGenerator(
        pipeline.model, pipeline.tokenizer, method="beam", adapter=pipeline.generator.adapter
    )
    if pipeline.reasoner is not None:
        old.reasoner = AnswerSelector(pipeline.model, pipeline.tokenizer, adapter="l2", method="batch")
    return old


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", choices=["demo", "metaqa"], default="demo")
    parser.add_argument("--split", default="validation")
    parser.add_argument("--limit", type=int, help="Questions per hop (a stable sample).")
    parser.add_argument("--l1-adapter", type=Path)
    parser.add_argument("--l2-adapter", type=Path)
    parser.add_argument("--beams", type=int, default=5, help="Queries both paths write (the previous default, 5).")
    parser.add_argument(
        "--no-default", action="store_true", help="Skip the new path at its default (as many queries as L2 reads)."
    )
    parser.add_argument("--bfloat16", action="store_true", help="Also run the new path with bfloat16 weights.")
    parser.add_argument("--compare-language", action="store_true", help="Compare --language paths with full instead.")
    parser.add_argument("--group", type=int, default=8, help="Questions a forward call for the throughput run.")
    parser.add_argument("--json", type=Path, help="Write the figures and per-question rows here.")
    args = parser.parse_args()

    items = load_items(Dataset(args.dataset), None, None, Split(args.split), None, args.limit)
    settings = load_settings(l1_adapter=args.l1_adapter, l2_adapter=args.l2_adapter, dtype="float32")
    graph = graph_for(None, Dataset(args.dataset), None, settings)
    new = GraphRAFT(settings, graph=graph, beams=args.beams)
    if args.compare_language:
        full = copy.copy(new)
        full.config = new.config.model_copy(update={"language": "full"})
        paths = {"paths": new, "full": full}
    else:
        paths = {"before": before(new), "after": new}
    base, compared = list(paths)[:2]
    default = copy.copy(new)
    default.num_beams = new.default_queries()
    if not args.no_default and default.num_beams != args.beams:
        paths[f"after-{default.num_beams}q"] = default
    if args.bfloat16:
        paths["after-bf16"] = GraphRAFT(
            settings.model_copy(update={"dtype": "bfloat16"}), graph=graph, store=new.store, beams=args.beams
        )
    print(
        f"{len(items)} {args.dataset} {args.split} questions, {args.beams} queries each, "
        f"torch threads {torch.get_num_threads()}, L1 {args.l1_adapter}, L2 {args.l2_adapter}"
    )
    for pipeline in paths.values():  # warm-up (first-call costs: tokenizer, kernels), not counted
        pipeline.ask(items[0].question)

    rows = []
    for number, item in enumerate(items):
        order = list(paths) if number % 2 == 0 else list(reversed(paths))
        row = {"qid": item.qid, "hops": item.hops}
        for name in order:
            started = time.perf_counter()
            answer = paths[name].ask(item.question)
            wall = time.perf_counter() - started
            outcome = outcome_from_answer(item, name, answer, wall, use_selection=new.reasoner is not None)
            row[name] = {
                "timings": {**answer.timings, "total": wall},
                "hit1": outcome.scores.hit_at_1,
                "top": answer.queries[0].cypher if answer.queries else None,
            }
        rows.append(row)

    print(f"\n{'stage (s)':<12}" + "".join(f"{name + ' p50':>16}{name + ' p95':>16}" for name in paths))
    figures: dict = {"questions": len(items), "paths": {}}
    for stage in STAGES:
        line = f"{stage:<12}"
        for name in paths:
            values = [r[name]["timings"].get(stage, 0.0) for r in rows]
            p50, p95 = percentile(values, 50), percentile(values, 95)
            figures["paths"].setdefault(name, {})[stage] = {"p50": p50, "p95": p95}
            line += f"{p50:>16.3f}{p95:>16.3f}"
        print(line)
    speedup = figures["paths"][base]["total"]["p50"] / figures["paths"][compared]["total"]["p50"]
    l1_speedup = figures["paths"][base]["generate"]["p50"] / figures["paths"][compared]["generate"]["p50"]
    agree = sum(r[base]["top"] == r[compared]["top"] for r in rows) / len(rows)
    figures.update(speedup_total_p50=speedup, speedup_generate_p50=l1_speedup, top_query_agreement=agree)
    print(f"\n{base} / {compared}, p50 of the whole ask: {speedup:.2f}x (L1 alone: {l1_speedup:.2f}x)")
    print(f"top query the same in both: {agree * 100:.1f} % of {len(rows)} questions")
    for name in paths:
        hit = sum(r[name]["hit1"] for r in rows) / len(rows)
        figures["paths"][name]["hit_at_1"] = hit
        by_hop = {h: [r[name]["hit1"] for r in rows if r["hops"] == h] for h in sorted({r["hops"] for r in rows})}
        print(
            f"Hit@1 {name:<11} {hit * 100:5.1f} %  ("
            + ", ".join(f"{h}-hop {sum(v) / len(v) * 100:.1f} %" for h, v in by_hop.items())
            + ")"
        )
    if "after-bf16" in paths:
        differ = sum(r["after-bf16"]["top"] != r["after"]["top"] for r in rows) / len(rows)
        figures["bf16_top_query_differs"] = differ
        print(f"bfloat16: top query differs from float32 on {differ * 100:.1f} % of questions")
    last = list(paths)[-1] if "after-bf16" not in paths else "after"
    engine, questions = paths[last], [item.question for item in items]
    started = time.perf_counter()
    alone = [engine.ask(q) for q in questions]
    one_at_a_time = (time.perf_counter() - started) / len(items)
    started = time.perf_counter()
    grouped = engine.ask_many(questions, group=args.group)
    together = (time.perf_counter() - started) / len(items)
    same = sum([a.id for a in x.answers] == [a.id for a in y.answers] for x, y in zip(alone, grouped))
    figures["throughput"] = {
        "path": last,
        "one_at_a_time_s": one_at_a_time,
        "grouped_s": together,
        "group": args.group,
        "same_answers": same,
    }
    print(
        f"\nthroughput ({last}): {one_at_a_time:.3f} s a question one at a time, {together:.3f} s with "
        f"{args.group} questions a forward call ({one_at_a_time / together:.2f}x); same answers {same}/{len(items)}"
    )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"figures": figures, "rows": rows}, indent=2))
    new.close()


if __name__ == "__main__":
    main()
