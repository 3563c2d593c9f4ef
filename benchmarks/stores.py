"""The same work on the embedded FalkorDB and on a Neo4j started the way `graphraft neo4j start`
starts it, in one run: loading a graph with its name embeddings, anchoring and enumerating the
candidates of validation questions per hop, and synthesis (the best query per question). The
results must be identical on both stores; any difference is printed and fails the run. The
enumeration is timed after one untimed pass over the same questions (a fresh server's warm-up).

    python benchmarks/stores.py [--dataset demo|metaqa] [--per-hop 100] [--json outputs/benchmarks/stores.json]
        [--l1-adapter DIR --l2-adapter DIR [--asks 30]]

With trained adapters it also asks: the median time of one `ask` (questions asked one at a time,
after one untimed question) and `graphraft eval`'s GraphRAFT and no-L2 methods on the same
questions, whose every outcome (top query, failure, scores) must be the same on both stores.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from graphraft.config import load_settings
from graphraft.graph import embedded_store
from graphraft.graph.embedded import EmbeddedServer
from graphraft.graph.embeddings import embed_missing_names, make_embedder
from graphraft.graph.neo4j_server import USERNAME, Neo4jServer
from graphraft.graph.neo4j_store import Neo4jStore
from graphraft.sampling import stable_groups
from graphraft.synthesis.enumeration import PatternEnumerator
from graphraft.synthesis.mentions import MarkedMentionExtractor
from graphraft.synthesis.resolution import EntityResolver
from graphraft.synthesis.synthesizer import SynthesisConfig, Synthesizer

EVAL_METHODS = ("graphraft", "no-l2")


def graph_and_questions(dataset: str):
    if dataset == "demo":
        from graphraft.graph.loaders.demo import demo_files
        from graphraft.graph.loaders.files import read_nodes, read_relationships
        from graphraft.graph.loaders.questions import read_question_file

        nodes_file, rels_file, questions_file = demo_files()
        items = [q for q in read_question_file(questions_file) if q.split == "validation"]
        return list(read_nodes(nodes_file)), list(read_relationships(rels_file)), items
    from graphraft.graph.loaders.metaqa import default_metaqa_dir, read_kb, read_questions

    folder = default_metaqa_dir()
    if folder is None:
        raise SystemExit("MetaQA not found (../shared/datasets/metaqa)")
    nodes, rels = read_kb(folder / "kb.txt")
    items = list(read_questions(folder, split="validation"))
    return nodes, rels, items


def measure(store, nodes, rels, items, embedder) -> dict:
    figures: dict = {}
    started = time.perf_counter()
    store.clear()
    store.load_nodes(nodes)
    store.load_relationships(rels)
    figures["load_s"] = round(time.perf_counter() - started, 1)
    started = time.perf_counter()
    embed_missing_names(store, embedder)
    store.sync()
    figures["embed_s"] = round(time.perf_counter() - started, 1)
    resolver = EntityResolver(store, lambda: embedder)
    extractor = MarkedMentionExtractor()
    enumerator = PatternEnumerator(store)
    anchored = [resolver.resolve_all(extractor.extract(item.question)) for item in items]
    for item, anchors in zip(items, anchored):  # warm-up: a fresh server compiles its first queries
        enumerator.all_patterns([a.ref for a in anchors], max_hops=item.hops)
    candidates, per_hop = {}, {}
    for item in items:
        anchors = resolver.resolve_all(extractor.extract(item.question))
        started = time.perf_counter()
        found = enumerator.all_patterns([a.ref for a in anchors], max_hops=item.hops)
        per_hop.setdefault(item.hops, []).append(time.perf_counter() - started)
        candidates[item.question] = sorted({p.cypher for p in found.patterns})
    figures["enumeration_ms"] = {h: round(1000 * statistics.mean(t), 1) for h, t in sorted(per_hop.items())}
    synthesizer = Synthesizer(extractor, resolver, enumerator, SynthesisConfig())
    started = time.perf_counter()
    best = {}
    for item in items:
        row = synthesizer.row_for(item)
        best[item.question] = row.cypher
    seconds = time.perf_counter() - started
    figures["synthesis_q_per_s"] = round(len(items) / seconds, 2)
    return {"figures": figures, "candidates": candidates, "best": best}


def ask_and_evaluate(store, graph: str, items, settings, asks: int, report_dir: Path) -> dict:
    """`ask` latency and `graphraft eval` (GraphRAFT, no-L2) with the settings' adapters on ``store``."""
    from graphraft.evaluation.runner import evaluate, write_report
    from graphraft.inference.pipeline import GraphRAFT

    pipeline = GraphRAFT(settings, graph=graph, store=store)
    sample = items[:: max(1, len(items) // asks)][:asks]
    pipeline.ask(sample[0].question)  # warm-up
    seconds = []
    for item in sample:
        started = time.perf_counter()
        pipeline.ask(item.question)
        seconds.append(time.perf_counter() - started)
    started = time.perf_counter()
    report = evaluate(items, pipeline, EVAL_METHODS, title=f"{graph} on {type(store).__name__}")
    eval_s = time.perf_counter() - started
    write_report(report, report_dir)
    outcomes = {f"{o.method} {o.qid}": [o.top_query, o.failure, *vars(o.scores).values()] for o in report.outcomes}
    hop_lengths = sorted({item.hops for item in items})
    hit = {
        method: {hops: round(100 * report.table(hops)[method]["hit_at_1"], 1) for hops in hop_lengths}
        for method in EVAL_METHODS
    }
    figures = {"ask_p50_s": round(statistics.median(seconds), 2), "eval_s": round(eval_s), "hit_at_1": hit}
    return {"figures": figures, "outcomes": outcomes}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", choices=["demo", "metaqa"], default="demo")
    parser.add_argument("--per-hop", type=int, default=100)
    parser.add_argument("--json", type=Path, default=Path("outputs/benchmarks/stores.json"))
    parser.add_argument("--l1-adapter", type=Path, help="with --l2-adapter: also time ask and run the evaluation")
    parser.add_argument("--l2-adapter", type=Path)
    parser.add_argument("--asks", type=int, default=30, help="questions asked one at a time for ask p50")
    args = parser.parse_args()
    if bool(args.l1_adapter) != bool(args.l2_adapter):
        parser.error("--l1-adapter and --l2-adapter go together")
    settings = load_settings(l1_adapter=args.l1_adapter, l2_adapter=args.l2_adapter)
    asking = bool(args.l1_adapter)
    nodes, rels, items = graph_and_questions(args.dataset)
    groups = stable_groups(items, lambda q: q.hops, lambda q: q.qid)
    items = [q for group in groups.values() for q in group[: args.per_hop]]
    embedder = make_embedder(settings)
    work = Path(tempfile.mkdtemp(prefix="graphraft-stores-"))
    falkor_server = EmbeddedServer(work / "falkordb")
    neo_server = Neo4jServer(work / "neo4j", settings.neo4j_jars or settings.home / "cache" / "neo4j", heap="2g")
    results = {}
    try:
        info, _ = falkor_server.start()
        stores = {"FalkorDB": embedded_store(falkor_server, args.dataset, info)}
        info, _ = neo_server.start()
        stores["Neo4j"] = Neo4jStore(neo_server.uri(info), USERNAME, neo_server.password(), graph=args.dataset)
        for name, store in stores.items():
            results[name] = measure(store, nodes, rels, items, embedder)
            if asking:
                asked = ask_and_evaluate(
                    store, args.dataset, items, settings, args.asks, args.json.parent / f"stores-eval-{name}"
                )
                results[name]["figures"].update(asked["figures"])
                results[name]["outcomes"] = asked["outcomes"]
    finally:
        falkor_server.stop()
        neo_server.stop()
    falkor, neo = results["FalkorDB"], results["Neo4j"]
    differing = [q for q in falkor["candidates"] if falkor["candidates"][q] != neo["candidates"][q]]
    best_differing = [q for q in falkor["best"] if falkor["best"][q] != neo["best"][q]]
    print(f"{args.dataset}: {len(nodes):,} nodes, {len(rels):,} relationships, {len(items)} validation questions")
    print(f"{'':<28}{'FalkorDB':>12}{'Neo4j':>12}")
    for key in ("load_s", "embed_s", "synthesis_q_per_s"):
        print(f"{key:<28}{falkor['figures'][key]:>12}{neo['figures'][key]:>12}")
    for hops in falkor["figures"]["enumeration_ms"]:
        f, n = falkor["figures"]["enumeration_ms"][hops], neo["figures"]["enumeration_ms"][hops]
        print(f"{f'enumeration ms, {hops}-hop':<28}{f:>12}{n:>12}")
    print(f"questions whose candidates differ: {len(differing)}; whose best query differs: {len(best_differing)}")
    if asking:
        print(f"{'ask p50 s':<28}{falkor['figures']['ask_p50_s']:>12}{neo['figures']['ask_p50_s']:>12}")
        print(f"{'eval s (both methods)':<28}{falkor['figures']['eval_s']:>12}{neo['figures']['eval_s']:>12}")
        for method in EVAL_METHODS:
            for hops, f in falkor["figures"]["hit_at_1"][method].items():
                n = neo["figures"]["hit_at_1"][method][hops]
                print(f"{f'Hit@1 % {method}, {hops}-hop':<28}{f:>12}{n:>12}")
        outcome_differing = sorted(k for k in falkor["outcomes"] if falkor["outcomes"][k] != neo["outcomes"].get(k))
        print(f"evaluation outcomes that differ: {len(outcome_differing)} of {len(falkor['outcomes'])}")
        best_differing += outcome_differing
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(
        json.dumps({k: v["figures"] for k, v in results.items()} | {"differing": differing + best_differing}, indent=1)
    )
    if differing or best_differing:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
