"""Times `graphraft load metaqa` stage by stage into a fresh graph, then a second,
idempotent run, and prints the figures README reports.

    python benchmarks/load_metaqa.py [--path ../shared/datasets/metaqa] [--graph metaqa-bench]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from graphraft.config import load_settings
from graphraft.graph import open_store
from graphraft.graph.embeddings import embed_missing_names, make_embedder
from graphraft.graph.loaders.metaqa import default_metaqa_dir, read_kb


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", type=Path, default=default_metaqa_dir())
    parser.add_argument("--graph", default="metaqa-bench")
    args = parser.parse_args()
    if args.path is None:
        raise SystemExit("MetaQA not found: pass --path")
    settings = load_settings()
    timings: dict[str, float] = {}

    def timed(name, fn):
        started = time.perf_counter()
        result = fn()
        timings[name] = time.perf_counter() - started
        return result

    with open_store(settings, args.graph, create=True) as store:
        store.clear()
        nodes, rels = timed("parse kb.txt", lambda: read_kb(args.path / "kb.txt"))
        embedder = timed("load embedding model", lambda: make_embedder(settings))
        timed("nodes", lambda: store.load_nodes(nodes))
        timed("relationships", lambda: store.load_relationships(rels))
        count = timed("name embeddings", lambda: embed_missing_names(store, embedder))
        first_total = sum(timings.values())
        second = {}
        started = time.perf_counter()
        report = store.load_nodes(nodes)
        report_r = store.load_relationships(rels)
        again = embed_missing_names(store, embedder)
        second["second run"] = time.perf_counter() - started
        schema = timed("schema (uncached)", lambda: store.schema(refresh=True))
        store.invalidate_schema()
        timed("schema (cached)", store.schema)
        print(f"MetaQA: {len(nodes):,} nodes, {len(rels):,} triples, {count:,} names embedded")
        for name, seconds in timings.items():
            print(f"  {name:<22} {seconds:7.1f} s")
        print(f"  {'first load, total':<22} {first_total:7.1f} s")
        print(
            f"  {'second load (no-op)':<22} {second['second run']:7.1f} s  "
            f"(created {report.writes.nodes_created + report_r.writes.relationships_created}, embedded {again})"
        )
        print(
            f"  schema: {len(schema.labels)} labels, {len(schema.relationship_types)} types, "
            f"{len(schema.patterns)} patterns"
        )
        store.clear()


if __name__ == "__main__":
    main()
