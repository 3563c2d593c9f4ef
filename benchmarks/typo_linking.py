"""Entity linking with typos: how often the question's entity is among the anchors when its name
has one character edit (`graphraft eval --typos SEED` makes the same edits), for the vector
match alone (the previous release) and for the vector match pooled with the character match at
several floors and candidate counts. Chooses the resolver's defaults (FUZZY_FLOOR,
FUZZY_CANDIDATES, CLOSE_MARGIN in graphraft/synthesis/resolution.py).

    python benchmarks/typo_linking.py [--limit 300] [--seeds 0,1,2]

MetaQA validation questions (`--limit` per hop, the same stable sample as `graphraft eval`), the
metaqa graph loaded with name embeddings. Also prints the clean (no typo) questions as a check
that nothing changes where the name is spelled right.
"""

from __future__ import annotations

import argparse
import statistics
import time

from graphraft.config import load_settings
from graphraft.graph import open_store
from graphraft.graph.embeddings import make_embedder
from graphraft.graph.loaders.question_sets import Dataset, Split, load_items, with_typo
from graphraft.synthesis.mentions import MarkedMentionExtractor
from graphraft.synthesis.resolution import EntityResolver
from graphraft.text import normalize_name

# (label, fuzzy floor or None for vector only, fuzzy candidates, margin below the best anchor
# or None for every candidate)
SETTINGS = [
    ("vector only (before)", None, 3, None),
    ("+ chars >= 0.70, 3", 0.70, 3, None),
    ("+ chars >= 0.75, 3", 0.75, 3, None),
    ("+ chars >= 0.80, 3 (previous default)", 0.80, 3, None),
    ("+ chars >= 0.85, 3", 0.85, 3, None),
    ("+ chars >= 0.80, 1", 0.80, 1, None),
    ("+ chars >= 0.80, 5", 0.80, 5, None),
    ("+ chars >= 0.75, 3, within 0.10 (default)", 0.75, 3, 0.10),
    ("+ chars >= 0.80, 3, within 0.05", 0.80, 3, 0.05),
    ("+ chars >= 0.80, 3, within 0.10", 0.80, 3, 0.10),
    ("+ chars >= 0.80, 3, within 0.15", 0.80, 3, 0.15),
    ("+ chars >= 0.80, 3, closest only", 0.80, 3, 0.0),
]


def measure(resolver, items) -> dict[str, float]:
    extractor = MarkedMentionExtractor()
    linked = first = 0
    counts, seconds = [], []
    for item in items:
        mentions = extractor.extract(item.question)
        started = time.perf_counter()
        anchors = resolver.resolve_all(mentions)
        seconds.append(time.perf_counter() - started)
        names = [normalize_name(a.name) for a in anchors]
        gold = normalize_name(item.mention)
        linked += gold in names
        first += bool(names) and names[0] == gold
        counts.append(len(anchors))
    n = len(items)
    return {
        "recall": 100 * linked / n,
        "first": 100 * first / n,
        "anchors": statistics.mean(counts),
        "ms": 1000 * statistics.median(seconds),
        "p95": 1000 * sorted(seconds)[int(0.95 * (n - 1))],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=300, help="Questions per hop.")
    parser.add_argument("--seeds", default="0,1,2")
    args = parser.parse_args()
    settings = load_settings()
    items = [i for i in load_items(Dataset.metaqa, None, None, Split.validation, None, args.limit) if i.mention]
    seeds = [int(s) for s in args.seeds.split(",")]
    typo_sets = {seed: [with_typo(item, seed) for item in items] for seed in seeds}
    changed = sum(t.question != i.question for t, i in zip(typo_sets[seeds[0]], items))
    embedder = make_embedder(settings)
    print(f"{len(items)} MetaQA validation questions; seeds {seeds}; {changed} edited by seed {seeds[0]}")
    print(
        "| resolver | typo: entity among anchors % | typo: entity first % | anchors a mention | ms p50 / p95 "
        "| clean: among anchors % |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    with open_store(settings, "metaqa") as store:
        store.name_counts()  # read once, outside the timings
        for label, floor, candidates, margin in SETTINGS:
            resolver = EntityResolver(
                store,
                lambda: embedder,
                settings.similarity_floor,
                settings.max_candidates,
                fuzzy_floor=floor,
                fuzzy_candidates=candidates,
                close_margin=margin,
            )
            runs = [measure(resolver, typo_sets[seed]) for seed in seeds]
            clean = measure(resolver, items)
            mean = {key: statistics.mean(run[key] for run in runs) for key in runs[0]}
            print(
                f"| {label} | {mean['recall']:.2f} | {mean['first']:.2f} | {mean['anchors']:.2f} | "
                f"{mean['ms']:.1f} / {mean['p95']:.1f} | {clean['recall']:.2f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
