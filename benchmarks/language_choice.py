"""Which of L1's queries to answer with, on questions with a gold result (issue 27)?

L1 writes its ``--beams`` best queries of the language for each question (constrained, as `ask
--language full` does); every one is run and its rows compared with the gold result (execution
accuracy: as sets of rows, a node by its name). Then each choice policy picks one query, and the
table gives the share of questions whose picked query's rows are the gold's:

- ``top``: L1's most likely query that returns anything (what `ask` answers with);
- ``states D``: among the queries that return anything and score within D nats of that one, the
  one that says the most of what the question states — its numbers and quoted texts
  (``synthesis.literals.question_literals``: the values a filter or a LIMIT may say) found in the
  query's text — the likelier first among equals. Summed log-probabilities favour short queries,
  and a LIMIT or a filter the question states makes a query longer;
- ``any``: one of the queries is right (what any choice among them can reach).

Nothing here reads a data set's wording: the literals are the language's own. Pick D on ``--split
train`` and read it on validation; nothing here is used by `ask`.

    python benchmarks/language_choice.py --questions outputs/text2cypher/northwind/questions.jsonl \\
        --graph northwind --l1-adapter outputs/training/l1-language-northwind/adapter [--split validation]
"""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path

from graphraft.config import load_settings
from graphraft.deadline import Deadline
from graphraft.errors import GraphRAFTError
from graphraft.graph.loaders.questions import read_question_file
from graphraft.inference.config import AskConfig
from graphraft.inference.pipeline import GraphRAFT
from graphraft.synthesis.language import is_node_column
from graphraft.synthesis.literals import Literals, question_literals
from graphraft.synthesis.results import candidate_key, result_key


def stated(literals: Literals, cypher: str) -> int:
    """How many of the values a question states (``literals``) the query's text says (a number as
    a whole token, not inside a variable's name; a quoted text as a quoted literal)."""
    said = sum(bool(re.search(rf"(?<![\w.]){re.escape(str(n))}(?![\w.])", cypher)) for n in literals.numbers)
    return said + sum(json.dumps(text) in cypher for text in literals.strings)


def query_result(store, cypher: str) -> frozenset | None:
    """A query's result as synthesis compares it with a gold one (``candidate_key``: its node
    columns by name); None: it failed or ran out of time."""
    try:
        rows = store.read(cypher)
    except GraphRAFTError:
        return None
    ids = [v for row in rows for column, v in row.items() if is_node_column(column) and isinstance(v, str)]
    names = {n["id"]: n["name"] for n in store.nodes_by_id(ids)} if ids else {}
    return candidate_key([list(row.values()) for row in rows], names)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--graph", required=True)
    parser.add_argument("--l1-adapter", type=Path, required=True)
    parser.add_argument("--split", default="validation", choices=["train", "validation"])
    parser.add_argument("--limit", type=int)
    parser.add_argument("--beams", type=int, default=5)
    parser.add_argument("--margins", default="0.5,1,2,3,5,1000", help="The D of the 'states D' policies.")
    parser.add_argument("--dump", type=Path, help="Each question's queries (score, stated, rows right) as JSON lines.")
    args = parser.parse_args()

    items = list(read_question_file(args.questions, split=args.split))[: args.limit]
    settings = load_settings().model_copy(update={"l1_adapter": args.l1_adapter})
    engine = GraphRAFT(
        settings, graph=args.graph, config=AskConfig(language="full", beams=args.beams, run_queries=args.beams)
    )
    margins = [float(m) for m in args.margins.split(",") if m]
    policies = ["top", *(f"states {m:g}" for m in margins), "any"]
    right = dict.fromkeys(policies, 0)
    dump = args.dump.open("w") if args.dump else None
    started = time.perf_counter()
    answers = []
    for start in range(0, len(items), 8):  # L1 searches 8 questions a forward call, as eval does
        answers += engine.ask_many([item.question for item in items[start : start + 8]], deadline=Deadline(None))
    for item, answer in zip(items, answers, strict=True):
        literals, gold = question_literals(item.question), result_key(item.extra["rows"])
        queries = []
        for info in answer.queries:
            result = query_result(engine.store, info.cypher)
            queries.append(
                {
                    "cypher": info.cypher,
                    "score": info.score,
                    "stated": stated(literals, info.cypher),
                    "returns": bool(result),
                    "right": result == gold,
                }
            )
        answering = [q for q in queries if q["returns"]]
        if answering:
            top = answering[0]
            right["top"] += top["right"]
            for m in margins:
                near = [q for q in answering if q["score"] >= top["score"] - m]
                right[f"states {m:g}"] += max(near, key=lambda q: (q["stated"], q["score"]))["right"]
        right["any"] += any(q["right"] for q in queries)
        if dump:
            dump.write(json.dumps({"qid": item.qid, "question": item.question, "queries": queries}) + "\n")
    engine.close()
    print(
        f"{args.graph} {args.split}: {len(items)} questions, {time.perf_counter() - started:.0f} s,"
        f" {args.beams} queries each"
    )
    print("| policy | right | % |\n| --- | ---: | ---: |")
    for policy in policies:
        print(f"| {policy} | {right[policy]} | {100 * right[policy] / max(len(items), 1):.1f} |")


if __name__ == "__main__":
    main()
