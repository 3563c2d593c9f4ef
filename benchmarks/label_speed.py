"""Self-training's labelling, before and after it ran L1's top query only: seconds a question,
and whether the labels are the same (they must be: the margin and the wording read the other
queries' scores and texts, never their rows). Both ways label the same MetaQA training questions,
batch by batch, alternating which goes first, in one run.

    python benchmarks/label_speed.py [--adapter outputs/cold_start/l1-generated-only/adapter] [--questions 96]

Before: every query L1 wrote ran, and every node they returned was fetched (node budget 1,000,000).
After: the top query runs (its rows decide whether a label is kept), the others are listed.
Without ``--adapter`` the base model labels (slower to agree with itself, the same work to time).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from graphraft.config import load_settings
from graphraft.graph.loaders.question_sets import Dataset, Split, load_items
from graphraft.inference.config import AskConfig
from graphraft.inference.pipeline import GraphRAFT
from graphraft.sampling import stable_hash
from graphraft.training.config import TrainConfig
from graphraft.training.self_training import Labeller, _embedder

#: (run_queries, node_budget): how self-training's pipeline was made, and how it is now
WAYS = {
    "all queries run (before)": (None, 1_000_000),
    "top query runs (now)": (1, AskConfig().node_budget),
}


def label(pipeline: GraphRAFT, labeller: Labeller, batch, way: tuple[int | None, int]):
    run_queries, node_budget = way
    pipeline.config = pipeline.config.model_copy(update={"run_queries": run_queries, "node_budget": node_budget})
    pipeline.node_budget = node_budget
    started = time.perf_counter()
    rows = list(labeller.label(batch, round_=1, batch=len(batch)))
    return time.perf_counter() - started, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--adapter", type=Path, help="The L1 adapter that labels (default: the base model).")
    parser.add_argument("--questions", type=int, default=96, help="MetaQA training questions labelled each way.")
    parser.add_argument("--batch", type=int, default=16, help="Questions L1 searches together.")
    args = parser.parse_args()

    settings = load_settings(graph="metaqa", l1_adapter=args.adapter)
    config = TrainConfig.from_yaml(Path("training/l1_cpu.yaml"), graph="metaqa")
    items = load_items(Dataset.metaqa, None, None, Split.train, None, None)
    items = sorted(items, key=lambda item: stable_hash(item.question))[: args.questions]
    questions = [(f"q{i}", item.question) for i, item in enumerate(items)]
    pipeline = GraphRAFT(settings, graph="metaqa", language=config.self_train.language)
    labeller = Labeller(pipeline, config, _embedder(settings, config)())
    seconds = {name: [] for name in WAYS}
    labels = {name: [] for name in WAYS}
    try:
        label(pipeline, labeller, questions[:2], WAYS["top query runs (now)"])  # warm: the model, the store's caches
        for number, start in enumerate(range(0, len(questions), args.batch)):
            batch = questions[start : start + args.batch]
            order = list(WAYS) if number % 2 == 0 else list(reversed(WAYS))
            for name in order:
                took, rows = label(pipeline, labeller, batch, WAYS[name])
                seconds[name].append(took / len(batch))
                labels[name] += rows
    finally:
        pipeline.close()
    print(f"{len(questions)} MetaQA training questions, batches of {args.batch}, L1: {args.adapter or 'base model'}")
    for name in WAYS:
        kept = sum(row.usable for row in labels[name])
        print(
            f"{name:26s} {sum(seconds[name]) / len(seconds[name]):6.2f} s a question "
            f"(batches: median {statistics.median(seconds[name]):.2f}, max {max(seconds[name]):.2f}); {kept} kept"
        )
    before, now = (labels[name] for name in WAYS)
    same = sum(
        (a.status, a.cypher, a.reason, a.hits) == (b.status, b.cypher, b.reason, b.hits) for a, b in zip(before, now)
    )
    print(f"same label, reason and row count: {same} of {len(now)}")


if __name__ == "__main__":
    main()
