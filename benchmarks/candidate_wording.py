"""Which of a question's candidate queries reads closest to it — over all of them, not only the
five L1 writes? A label-free choice (TARGA reranks execution-checked candidates around the
entities, with no labels): would it label MetaQA's questions better than L1 trained on generated
questions does, at 3 hops above all, where L1's five mostly hold no right query?

Each MetaQA question's anchors are found as `ask` finds them; every candidate of 1 to 3 hops
around them is enumerated (`all_patterns`, as `ask`), put in the schema's words (its closest of
``--readings`` readings, ``query_wordings`` as self-training's labeller) and compared with the
question (MiniLM cosine similarity, the bundled embedder). The closest candidates are run in
that order and the first that returns something is the choice; it is scored against the gold
answers — a diagnostic: nothing here is used by training or by `ask`. Per hop: how often the
choice returns a right answer, how often its length is the question's, and how often the
closest candidate of the question's length is right (what a known hop count would give).

    python benchmarks/candidate_wording.py [--split train] [--limit 100] [--readings 8]
"""

from __future__ import annotations

import argparse
import collections
import time

from graphraft.config import load_settings
from graphraft.graph import open_store
from graphraft.graph.embeddings import make_embedder
from graphraft.graph.loaders.question_sets import Dataset, Split, load_items
from graphraft.inference.config import AskConfig
from graphraft.synthesis.enumeration import PatternEnumerator
from graphraft.synthesis.mentions import make_extractor
from graphraft.synthesis.patterns import executable, render
from graphraft.synthesis.resolution import resolver_for
from graphraft.text import normalize_name
from graphraft.training.self_training import closest_readings, query_wordings


def right(store, pattern, gold: set[str]) -> bool | None:
    """Whether the pattern returns a right answer (None: it returns nothing)."""
    ids = [row["id"] for row in store.read(executable(pattern, store))]
    if not ids:
        return None
    return bool({normalize_name(str(n["name"])) for n in store.nodes_by_id(ids)} & gold)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("train", "validation"), default="train")
    parser.add_argument("--limit", type=int, default=100, help="Questions a hop.")
    parser.add_argument("--readings", type=int, default=8, help="Readings of each candidate compared.")
    args = parser.parse_args()
    settings = load_settings(graph="metaqa")
    store = open_store(settings, "metaqa")
    embed = make_embedder(settings).embed
    extractor = make_extractor(settings.extractor, store, settings)
    resolver = resolver_for(store, settings)
    enumerator = PatternEnumerator(store, AskConfig().fanout_cap, settings.query_timeout_ms)
    items = load_items(Dataset.metaqa, None, None, Split(args.split), None, args.limit)
    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    sizes: list[int] = []
    started = time.perf_counter()
    try:
        for number, item in enumerate(items, 1):
            counts["questions"][item.hops] += 1
            anchors = resolver.resolve_all(extractor.extract(item.question))
            if not anchors:
                continue
            candidates = list(enumerator.all_patterns([a.ref for a in anchors], 3).candidates.values())
            sizes.append(len(candidates))
            names = {a.id: a.mention for a in anchors}
            texts = [query_wordings(p, render(p), names, args.readings) for p in candidates]
            similarity = closest_readings(embed, item.question, texts)
            gold = {normalize_name(a) for a in item.answers}

            order = sorted(range(len(candidates)), key=lambda i: -similarity[i])
            chosen = next(((i, hit) for i in order if (hit := right(store, candidates[i], gold)) is not None), None)
            if chosen is not None:
                counts["right"][item.hops] += chosen[1]
                counts["length"][item.hops] += len(candidates[chosen[0]].steps) == item.hops
            same = [i for i in order if len(candidates[i].steps) == item.hops]
            known = next((hit for i in same if (hit := right(store, candidates[i], gold)) is not None), None)
            counts["known hops"][item.hops] += bool(known)
            if number % 50 == 0:
                print(f"{number}/{len(items)} questions, {time.perf_counter() - started:.0f}s", flush=True)
    finally:
        store.close()
    hops = sorted(counts["questions"])
    print(
        f"\n{args.split}, {sum(counts['questions'].values())} questions, candidates a question: median "
        f"{sorted(sizes)[len(sizes) // 2] if sizes else 0}, most {max(sizes, default=0)}; "
        f"{time.perf_counter() - started:.0f}s"
    )
    print("| the closest candidate that returns something | all | " + " | ".join(f"{h}-hop" for h in hops) + " |")
    print("| --- | ---: | " + " | ".join("---:" for _ in hops) + " |")
    rows = [
        ("returns a right answer", "right"),
        ("has the question's length", "length"),
        ("of the question's length: right", "known hops"),
    ]
    for name, key in rows:
        total = sum(counts["questions"].values())
        per = [100 * counts[key][h] / counts["questions"][h] for h in hops]
        cells = " | ".join(f"{p:.1f} %" for p in per)
        print(f"| {name} | {100 * sum(counts[key].values()) / total:.1f} % | {cells} |")


if __name__ == "__main__":
    main()
