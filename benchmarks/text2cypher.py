"""Text2Cypher's movies and northwind questions as GraphRAFT question sets, with their gold results.

`prepare` loads each example database's Neo4j dump into a scratch Neo4j (the one `graphraft neo4j
start` runs, in a folder of its own), exports the graph to the loader's files (so both stores hold
the same graph: `graphraft load files`), runs every question's gold Cypher on the dump as its
authors wrote it, and writes a question file with the gold rows (a node as its naming value). Rows
whose gold Cypher fails, times out or returns nothing are dropped and counted. A gold query ending in
a LIMIT with no ORDER BY picks its rows arbitrarily: its rows without the LIMIT are kept too
(`any_of`), and `graphraft eval` and the ceiling also report any as many of them as right. The split is
stable: a hash of the question, a quarter for validation.

    python benchmarks/text2cypher.py prepare --shared ../shared/datasets --out outputs/text2cypher
    graphraft load files --graph movies --nodes outputs/text2cypher/movies/nodes.jsonl \\
        --relationships outputs/text2cypher/movies/relationships.jsonl --replace
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

DATABASES = ("movies", "northwind")
#: the share of each database's questions kept for validation (a hash of the question text)
VALIDATION_FRACTION = 0.25
GOLD_TIMEOUT_S = 20.0


def node_ids(nodes: list[dict[str, Any]], naming) -> dict[str, str]:
    """A stable id for each exported node (element id -> id): its first label and the first
    property, the naming one first, whose values are present on all of the label's nodes and
    unique among them; else the label and the node's rank in the export's order."""
    by_label: dict[str, list[dict]] = collections.defaultdict(list)
    for node in nodes:
        by_label[sorted(node["labels"])[0] if node["labels"] else "Node"].append(node)
    ids = {}
    for label, members in by_label.items():
        keys = set.intersection(*(set(n["properties"]) for n in members))
        named = naming.property_for(label, keys)
        ordered = ([named] if named in keys else []) + sorted(keys - {named})
        key = next(
            (
                k
                for k in ordered
                if all(isinstance(n["properties"][k], (str, int)) for n in members)
                and len({n["properties"][k] for n in members}) == len(members)
            ),
            None,
        )
        for rank, node in enumerate(members):
            ids[node["eid"]] = f"{label}:{node['properties'][key] if key else rank}"
    return ids


def json_value(value: Any, naming) -> Any:
    """A value Neo4j returned, as JSON: a node as its name (else its properties), a relationship
    as its properties, a path as its nodes' names, temporals as ISO text."""
    import neo4j.graph

    if isinstance(value, neo4j.graph.Node):
        name = naming.name_of(value.labels, dict(value))
        return name if name is not None else {k: json_value(v, naming) for k, v in dict(value).items()}
    if isinstance(value, neo4j.graph.Relationship):
        return {k: json_value(v, naming) for k, v in dict(value).items()}
    if isinstance(value, neo4j.graph.Path):
        return [json_value(n, naming) for n in value.nodes]
    if isinstance(value, dict):
        return {k: json_value(v, naming) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_value(v, naming) for v in value]
    if hasattr(value, "iso_format"):
        return value.iso_format()
    if isinstance(value, float) and value != value:
        return None
    return value


def property_value(value: Any) -> Any:
    """A property as the loader takes it (scalars and lists of scalars; temporals as text)."""
    if isinstance(value, list):
        return [property_value(v) for v in value]
    if hasattr(value, "iso_format"):
        return value.iso_format()
    return value


def export_graph(driver, naming, out: Path) -> tuple[int, int]:
    nodes = [
        {"eid": r["eid"], "labels": r["labels"], "properties": r["props"]}
        for r in driver.execute_query(
            "MATCH (n) RETURN elementId(n) AS eid, labels(n) AS labels, properties(n) AS props ORDER BY eid"
        ).records
    ]
    ids = node_ids(nodes, naming)
    out.mkdir(parents=True, exist_ok=True)
    with (out / "nodes.jsonl").open("w") as handle:
        for node in nodes:
            props = {k: property_value(v) for k, v in node["properties"].items() if k != "id"}
            row = {"id": ids[node["eid"]], "labels": node["labels"], "properties": props}
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    rels = driver.execute_query(
        "MATCH (a)-[r]->(b) RETURN elementId(a) AS a, elementId(b) AS b, type(r) AS type, "
        "properties(r) AS props ORDER BY a, b, type"
    ).records
    with (out / "relationships.jsonl").open("w") as handle:
        for r in rels:
            props = {k: property_value(v) for k, v in r["props"].items()}
            row = {"source": ids[r["a"]], "target": ids[r["b"]], "type": r["type"], "properties": props}
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    return len(nodes), len(rels)


def category(cypher: str) -> str:
    """Our coarse category of a gold query, read from its text (for the report's rows)."""
    text = " ".join(cypher.split())
    upper = text.upper()
    if re.search(r"\b(COUNT|SUM|AVG|MIN|MAX|COLLECT)\s*\(", upper):
        return "count/aggregate"
    if "ORDER BY" in upper or re.search(r"\bLIMIT\b", upper):
        return "order/limit"
    if " WHERE " in f" {upper} " or re.search(r"\{\s*\w+\s*:", text):
        return "filter"
    return "lookup"


def gold_rows(driver, cypher: str, naming) -> tuple[list[str], list[list[Any]]] | str:
    """The gold query's columns and rows, or why there are none."""
    import neo4j

    try:
        with driver.session(default_access_mode=neo4j.READ_ACCESS) as session:
            result = session.run(neo4j.Query(cypher, timeout=GOLD_TIMEOUT_S))
            records = list(result)
            columns = list(result.keys())
    except neo4j.exceptions.ClientError as exc:
        reason = "timeout" if "Timeout" in (exc.code or "") or "terminated" in str(exc).lower() else "error"
        return reason
    except neo4j.exceptions.Neo4jError:
        return "error"
    if not records:
        return "empty"
    return columns, [[json_value(record[c], naming) for c in columns] for record in records]


#: a gold query whose last clause is a LIMIT and that orders nothing: its pick is arbitrary
UNORDERED_LIMIT = re.compile(r"\s+LIMIT\s+\d+\s*;?\s*$", re.IGNORECASE)
ORDER_BY = re.compile(r"\bORDER\s+BY\b", re.IGNORECASE)
#: the most rows kept of such a query without its LIMIT
POOL_ROWS = 5000


def unordered_pool(driver, cypher: str, naming, rows: list) -> list | None:
    """The rows a gold query ending in a LIMIT with no ORDER BY picks from (the query without the
    LIMIT), when it has more than it kept: any as many of them are as right an answer."""
    if ORDER_BY.search(cypher) or not UNORDERED_LIMIT.search(cypher):
        return None
    found = gold_rows(driver, UNORDERED_LIMIT.sub("", cypher), naming)
    if isinstance(found, str) or len(found[1]) > POOL_ROWS or len(found[1]) <= len(rows):
        return None
    return found[1]


def prepare(shared: Path, out: Path, jar_cache: Path | None) -> None:
    import logging

    import neo4j

    # the gold queries name labels the dumps lack (Employee): the driver's warnings are noise here
    logging.getLogger("neo4j.notifications").setLevel(logging.ERROR)

    from graphraft.config import load_settings
    from graphraft.graph.loaders.questions import split_of
    from graphraft.graph.naming import NamingRule
    from graphraft.graph.neo4j_server import USERNAME, Neo4jServer

    settings = load_settings()
    naming = NamingRule(settings.name_properties)
    jars = jar_cache or settings.neo4j_jars or settings.home / "cache" / "neo4j"
    summary = {}
    for database in DATABASES:
        dumps = sorted((shared / "neo4j-examples" / database).glob("*.dump"))
        questions = shared / "text2cypher" / f"{database}.jsonl"
        if not dumps or not questions.is_file():
            sys.exit(f"{shared}: no {database} dump or questions")
        with tempfile.TemporaryDirectory(prefix=f"t2c-{database}-") as folder:
            server = Neo4jServer(Path(folder), jars)
            server.load_dump(dumps[0])
            info, _ = server.start()
            try:
                with neo4j.GraphDatabase.driver(server.uri(info), auth=(USERNAME, server.password())) as driver:
                    nodes, rels = export_graph(driver, naming, out / database)
                    kept, dropped = [], collections.Counter()
                    started = time.perf_counter()
                    for number, line in enumerate(questions.read_text().splitlines(), 1):
                        row = json.loads(line)
                        found = gold_rows(driver, row["cypher"], naming)
                        if isinstance(found, str):
                            dropped[found] += 1
                            continue
                        columns, rows = found
                        pool = unordered_pool(driver, row["cypher"], naming, rows)
                        kept.append(
                            {
                                "id": f"{database}-{number}",  # unique beside the other database's
                                "question": row["question"],
                                "answers": [],
                                "type": row["type"],
                                "category": category(row["cypher"]),
                                "cypher": row["cypher"],
                                "columns": columns,
                                "rows": rows,
                                **({"any_of": pool} if pool else {}),
                                "split": split_of(row["question"], VALIDATION_FRACTION),
                                "line": number,
                            }
                        )
                    seconds = time.perf_counter() - started
            finally:
                server.stop()
        with (out / database / "questions.jsonl").open("w") as handle:
            for row in kept:
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        splits = collections.Counter(row["split"] for row in kept)
        summary[database] = {
            "nodes": nodes,
            "relationships": rels,
            "questions": len(kept) + sum(dropped.values()),
            "kept": len(kept),
            "dropped": dict(dropped),
            "train": splits["train"],
            "validation": splits["validation"],
            "gold_seconds": round(seconds, 1),
        }
        print(json.dumps({database: summary[database]}))
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")


def read_items(path: Path, split: str) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return [row for row in rows if split == "all" or row["split"] == split]


def some_rows_reached(store, space, item: dict, budget: int | None, budget_s: float | None) -> bool:
    """Where the gold query's LIMIT orders nothing (``any_of``): whether a query of the language
    returns as many rows of its result without the LIMIT — one that gives that whole result,
    ordered by a column it returns and limited to the number the question states."""
    import dataclasses

    from graphraft.errors import GraphRAFTError
    from graphraft.synthesis.language import Order, render_query
    from graphraft.synthesis.reproduce import reproduce
    from graphraft.synthesis.results import candidate_key, named_by, result_key, some_rows_of

    if "any_of" not in item:
        return False
    count = len(result_key(item["rows"]))
    if count not in space.clauses.literals.limits:
        return False  # L1 could not write the LIMIT
    patterns = [p for group in space.paths.values() for p in group]
    gold = result_key(item["any_of"])
    whole = reproduce(store, patterns, space.clauses, gold, candidate_key, budget=budget, budget_s=budget_s, first=True)
    for query in whole.queries:
        if query.limit is not None or query.order is not None:
            continue
        for column in query.projection.orderable:
            try:
                limited = dataclasses.replace(query, order=Order(column, False), limit=count)
                rows = store.read(render_query(limited, store.graph_label))
            except (ValueError, GraphRAFTError):
                continue
            answer = [[row.get(c) for c in limited.projection.aliases] for row in rows]
            ids = [v for row in answer for v in row if isinstance(v, str)]
            names = {node["id"]: node["name"] for node in store.nodes_by_id(ids)} if ids else {}
            if some_rows_of(answer, item["any_of"], count, named_by(names)):
                return True
    return False


def ceiling(
    graph: str,
    questions: Path,
    split: str,
    limit: int | None,
    out: Path | None,
    budget: int | None,
    budget_s: float | None,
) -> None:
    """The share of questions whose gold result some query of the language reproduces, over
    the candidates `ask --language full` gives each question (its anchors, literals, label roots)."""
    from graphraft.config import load_settings
    from graphraft.deadline import Deadline
    from graphraft.evaluation.runner import ANY_ROWS
    from graphraft.inference.config import AskConfig
    from graphraft.inference.decoding.query_space import QuerySpace
    from graphraft.inference.pipeline import GraphRAFT
    from graphraft.synthesis.language import render_query
    from graphraft.synthesis.reproduce import reproduce
    from graphraft.synthesis.results import candidate_key, result_key
    from graphraft.synthesis.synthesizer import gold_order

    items = read_items(questions, split)[:limit]
    engine = GraphRAFT(load_settings(), graph=graph, config=AskConfig(language="full"))
    reached = collections.Counter()
    total = collections.Counter()
    rows_out = []
    started = time.perf_counter()
    for item in items:
        gold = result_key(item["rows"])
        clock = time.perf_counter()
        answer, space, _ = engine._prepare(item["question"], Deadline(None), engine.max_hops)
        found = None
        if isinstance(space, QuerySpace):
            patterns = [p for group in space.paths.values() for p in group]
            found = reproduce(
                engine.store,
                patterns,
                space.clauses,
                gold,
                candidate_key,
                first=True,
                budget=budget,
                budget_s=budget_s,
                order=gold_order(item["cypher"]),  # as synthesis: a pick among ties of the gold's order
            )
        hit = bool(found and found.queries)
        exhausted = bool(found and found.exhausted and not hit)
        total["out of time"] += exhausted
        # the query found gives another pick among the rows tied at its LIMIT than the gold's
        picked = hit and render_query(found.queries[0]) in found.picked
        total["picked"] += picked
        for name in ("all", item["type"], item["category"]):
            total[name] += 1
            reached[name] += hit
        some = hit or (isinstance(space, QuerySpace) and some_rows_reached(engine.store, space, item, budget, budget_s))
        total[ANY_ROWS] += 1
        reached[ANY_ROWS] += some
        rows_out.append(
            {
                "question": item["question"],
                "gold": item["cypher"],
                "anchors": [a["name"] for a in answer.anchors],
                "reached": hit,
                "reached_any": some,
                "out_of_time": exhausted,
                "picked_among_ties": picked,
                "query": found.queries[0].to_dict() if hit else None,
                "proposed": found.proposed if found else 0,
                "matches": found.matches if found else 0,
                "seconds": round(time.perf_counter() - clock, 2),
            }
        )
        print(f"{'+' if hit else '-'} {rows_out[-1]['seconds']:6.2f}s {item['question'][:90]}", flush=True)
    print(f"\n{graph} {split}: {len(items)} questions, {time.perf_counter() - started:.0f} s")
    print(f"  searches that ran out of their budget ({budget:,} units, {budget_s} s): {total.pop('out of time')}")
    print(f"  reached by another pick than the gold's among rows tied at a LIMIT: {total.pop('picked')}")
    for name in sorted(total, key=lambda n: (n != "all", n != ANY_ROWS, n)):
        print(f"  {name:<32} {reached[name]:>4} / {total[name]:<4} {reached[name] / total[name] * 100:5.1f} %")
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"reached": dict(reached), "total": dict(total), "rows": rows_out}, indent=1))
    engine.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    step = commands.add_parser("prepare", help="Graphs to loader files, gold results, the split.")
    step.add_argument("--shared", type=Path, default=Path("../shared/datasets"))
    step.add_argument("--out", type=Path, default=Path("outputs/text2cypher"))
    step.add_argument("--jar-cache", type=Path, help="Neo4j's jars (default: GRAPHRAFT_HOME/cache/neo4j).")
    step = commands.add_parser("ceiling", help="How many gold results some query of the language reproduces.")
    step.add_argument("--graph", required=True)
    step.add_argument("--questions", type=Path, required=True)
    step.add_argument("--split", default="validation", choices=["train", "validation", "all"])
    step.add_argument("--limit", type=int)
    step.add_argument("--json", type=Path)
    step.add_argument(
        "--budget",
        type=int,
        default=60_000_000,
        help="Work of search a question, in reproduce.WORK units (about a minute of one core; a miss after).",
    )
    step.add_argument(
        "--budget-s", type=float, default=120.0, help="Seconds of search a question at most (a miss after)."
    )
    args = parser.parse_args()
    if args.command == "prepare":
        prepare(args.shared, args.out, args.jar_cache)
    else:
        ceiling(args.graph, args.questions, args.split, args.limit, args.json, args.budget, args.budget_s)


if __name__ == "__main__":
    main()
