"""How far a question's query can be read off the solved training questions nearest to it.

A query's *shape* (``synthesis.language.query_shape``) is its text with the anchors' ids and the
literals masked: the labels, relationships, directions, keys, operators, aggregates and order, all
that L1 decides from the question's wording. Questions asked alike have queries of one shape, so
the nearest solved questions (``inference.exemplars``: MiniLM over the questions with what they
name masked) say which shapes a question's query likely has; the question's own query space says
which queries of those shapes exist for its anchors and values (``QuerySpace.shaped``).

Two readings, one run:

1. the data (``--train`` and ``--validation`` synthesis files, no model): how often a validation
   pair's shape is among its k nearest training pairs' shapes;
2. with ``--questions`` and ``--l1-adapter``: execution accuracy on the validation questions of
   several orders of the queries `ask` tries — L1's alone (what `graphraft eval`'s no-l2 scores),
   and L1's queries of the neighbours' shapes first, in a few ways — each answered and scored as
   `ask` and `eval` do (``GraphRAFT._answer``, the stated-first and asked-label rules included,
   ``evaluation.runner.outcome_from_answer``). L1 writes its top queries and scores the shaped ones
   once a question; each order is then answered from the same queries.

    python benchmarks/neighbour_shape.py --train outputs/synthesis/t2c-movies-train.jsonl \\
        --validation outputs/synthesis/t2c-movies-validation.jsonl \\
        [--questions outputs/text2cypher/movies/questions.jsonl --graph movies \\
         --l1-adapter outputs/training/l1-language-movies/adapter --pool-extra FILE ...]
"""

from __future__ import annotations

import argparse
import copy
import json
import re
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from graphraft.config import load_settings
from graphraft.inference.decoding.query_space import QuerySpace
from graphraft.inference.exemplars import Exemplar, Exemplars, bundled_embedder, question_form
from graphraft.inference.generation import GeneratedQuery
from graphraft.synthesis.language import Query, query_shape, render_query
from graphraft.synthesis.rows import read_rows

#: the most queries of one shape taken from a question's space
PER_SHAPE = 32


def data_reading(train, valid, embed, ks) -> None:
    vectors = np.asarray(embed([question_form(r.question) for r in train]), dtype=np.float32)
    asked = np.asarray(embed([question_form(r.question) for r in valid]), dtype=np.float32)
    order = np.argsort(-(asked @ vectors.T), axis=1, kind="stable")
    shapes = [query_shape(r.cypher) for r in train]
    hit = Counter()
    vote = 0
    for row, ranked in zip(valid, order):
        own = query_shape(row.cypher)
        for k in ks:
            hit[k] += own in {shapes[i] for i in ranked[:k]}
        vote += Counter(shapes[i] for i in ranked[:5]).most_common(1)[0][0] == own
    n = len(valid)
    unseen = sum(query_shape(r.cypher) not in set(shapes) for r in valid)
    print(f"data: {n} validation pairs, {len(train)} training pairs, {len(set(shapes))} shapes among them")
    print(f"  a shape no training pair has: {unseen} ({unseen / n:.1%})")
    for k in ks:
        print(f"  the shape among the {k} nearest's: {hit[k]} ({hit[k] / n:.1%})")
    print(f"  the shape most common among the 5 nearest: {vote} ({vote / n:.1%})")
    # the path alone (before WHERE, WITH or RETURN): its labels, relationships and directions
    paths = [path_shape(s) for s in shapes]
    for k in (1, 5):
        hits = sum(
            path_shape(query_shape(r.cypher)) in {paths[i] for i in ranked[:k]} for r, ranked in zip(valid, order)
        )
        print(f"  the path alone among the {k} nearest's: {hits} ({hits / n:.1%})")
    clause_reading(train, valid, order, sorted({*ks, 20}))


def clause_parts(row) -> frozenset[tuple]:
    """A pair's query as parts named by labels, not by places on the path (``n1`` is a Person
    on one path, a Movie on another): the path (anchored or a label root; its labels, types and
    directions, which node it answers with), each filter (the label or type it is on, its key and
    operator), the projection (the labels of the nodes it returns, their keys, the aggregate and
    what it groups by), the order (its column and direction) and whether it has a LIMIT. Literals
    and anchors are left out, as the shape leaves them out."""
    query = Query.from_dict(row.query)
    pattern = query.pattern

    def element(place: int, relationship: bool) -> str:
        if relationship:
            return pattern.steps[place - 1].type
        return "/".join(pattern.labels_of(place))

    steps = tuple((s.type, s.outgoing, "/".join(s.labels)) for s in pattern.steps)
    root = pattern.anchor.is_label_root
    parts: set[tuple] = {("path", root, element(0, False), steps, pattern.target, pattern.closed)}
    parts |= {("filter", element(f.element, f.relationship), f.key, f.op) for f in query.filters}
    projection = query.projection
    parts.add(
        (
            "return",
            element(pattern.target, False),
            projection.properties,
            tuple((element(n, False), key) for n, key in projection.others),
            tuple((element(s, True), key) for s, key in projection.edges),
            projection.aggregate,
            projection.key,
            None if projection.group is None else element(projection.group, False),
            projection.group_key,
            projection.having[0] if projection.having else None,
            projection.values,
        )
    )
    if query.order is not None:
        parts.add(("order", query.order.by, query.order.descending, query.order.before))
    parts.add(("limit", query.limit is not None))
    return frozenset(parts)


def clause_reading(train, valid, order, ks) -> None:
    """Whether an unseen shape is a new combination of parts training has: for each validation
    pair whose shape no training pair has, whether every part of its query (``clause_parts``) is
    among all training pairs' parts, and among its k nearest's."""
    shapes = {query_shape(r.cypher) for r in train}
    parts = [clause_parts(r) for r in train]
    every = frozenset().union(*parts)
    unseen = [(r, ranked) for r, ranked in zip(valid, order) if query_shape(r.cypher) not in shapes]
    if not unseen:
        return
    n = len(unseen)
    whole = sum(clause_parts(r) <= every for r, _ in unseen)
    print(f"  of the {n} of an unseen shape, every part (by labels) among training's: {whole} ({whole / n:.1%})")
    for k in ks:
        near = sum(clause_parts(r) <= frozenset().union(*(parts[i] for i in ranked[:k])) for r, ranked in unseen)
        print(f"    among the {k} nearest's: {near} ({near / n:.1%})")


def path_shape(shape: str) -> str:
    """A shape's MATCH alone: what comes before its WHERE, WITH or RETURN."""
    return re.split(r" (?:WHERE|WITH|RETURN) ", shape, maxsplit=1)[0]


@dataclass(frozen=True)
class ShapedQuery:
    """A query of a neighbour's shape, as L1 scored it among them."""

    query: GeneratedQuery
    neighbour: int  # the rank of the nearest solved question of its shape (0: the nearest)
    weight: float  # the summed similarity of the solved questions of its shape


def shaped(l1, solved: Exemplars, question: str, space) -> list[ShapedQuery]:
    """The question's queries of its neighbours' shapes (``QuerySpace.shaped``), L1 scoring them
    among themselves (the exact search over that list), by the nearest neighbour of their shape,
    then L1's score."""
    (neighbours,) = solved.nearest_scored([question])
    if not isinstance(space, QuerySpace) or not neighbours:
        return []
    shapes = [query_shape(e.cypher) for e, _ in neighbours]
    weight: dict[str, float] = {}
    for shape, (_, similarity) in zip(shapes, neighbours):
        weight[shape] = weight.get(shape, 0.0) + similarity
    queries: dict[str, tuple] = {}
    for shape, listed in space.shaped(shapes, PER_SHAPE).items():
        for query in listed:
            queries.setdefault(render_query(query), (query, shapes.index(shape), weight[shape]))
    if not queries:
        return []
    (scored,) = l1.generate_many([question], [list(queries)], num_beams=len(queries))
    out = []
    for g in scored:
        query, neighbour, w = queries[g.cypher]
        out.append(ShapedQuery(GeneratedQuery(g.cypher, g.score, 0, query), neighbour, w))
    return sorted(out, key=lambda s: (s.neighbour, -s.query.score))


def shaped_first(first, rest) -> list[GeneratedQuery]:
    """``first``, then the queries of ``rest`` not among them, ranked anew from 0."""
    seen, out = set(), []
    for g in [*first, *rest]:
        if g.cypher not in seen:
            seen.add(g.cypher)
            out.append(GeneratedQuery(g.cypher, g.score, len(out), g.query))
    return out


def orders(l1, found):
    """Each order of the queries to try: name -> list of GeneratedQuery. ``l1``: L1's top queries;
    ``found``: L1's queries of the neighbours' shapes (``shaped``)."""
    by_rank = [s.query for s in found]  # by the nearest neighbour of their shape, then L1's score
    by_score = [s.query for s in sorted(found, key=lambda s: -s.query.score)]
    by_weight = [s.query for s in sorted(found, key=lambda s: (-s.weight, -s.query.score))]
    l1_shapes = {query_shape(g.cypher) for g in by_rank}
    return {
        "L1 alone": l1,
        "nearest shape's best, then L1": shaped_first(by_rank[:1], l1),
        "shaped by nearest, then L1": shaped_first(by_rank, l1),
        "shaped by L1 score, then L1": shaped_first(by_score, l1),
        "shaped by vote, then L1": shaped_first(by_weight, l1),
        "L1's of a neighbour's shape, then nearest's": shaped_first(
            [g for g in l1 if query_shape(g.cypher) in l1_shapes] + by_rank[:1], l1
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", type=Path, required=True)
    parser.add_argument("--validation", type=Path, required=True)
    parser.add_argument("--k", default="1,3,5,10")
    parser.add_argument("--questions", type=Path)
    parser.add_argument("--graph")
    parser.add_argument("--l1-adapter", type=Path)
    parser.add_argument("--pool-extra", type=Path, action="append", default=[], help="More solved questions.")
    parser.add_argument("--neighbours", type=int, default=5, help="Nearest solved questions read (k).")
    parser.add_argument("--limit", type=int, help="The first N validation questions only.")
    parser.add_argument("--dump", type=Path, help="Each question's queries and verdicts, one JSON line each.")
    args = parser.parse_args()
    ks = [int(k) for k in args.k.split(",")]
    settings = load_settings(l1_adapter=args.l1_adapter)
    embed = bundled_embedder(settings.home).embed
    train = [r for r in read_rows(args.train) if r.usable]
    valid = [r for r in read_rows(args.validation) if r.usable]
    data_reading(train, valid, embed, ks)
    if args.questions is None:
        return

    from graphraft.deadline import Deadline
    from graphraft.evaluation.runner import outcome_from_answer
    from graphraft.graph.loaders.question_sets import Split, load_items
    from graphraft.inference.config import AskConfig
    from graphraft.inference.pipeline import GraphRAFT

    extra = [r for path in args.pool_extra for r in read_rows(path) if r.usable and r.split != "validation"]
    pool = Exemplars([Exemplar(question=r.question, cypher=r.cypher) for r in train + extra], args.neighbours, embed)
    items = load_items(None, args.questions, None, Split.validation, None, None)
    items = items[: args.limit] if args.limit else items
    pipeline = GraphRAFT(settings, graph=args.graph, config=AskConfig(language="full"))
    # the same, trying the queries in the order given (no stated-first or asked-label rule)
    plain = copy.copy(pipeline)
    plain.config = pipeline.config.model_copy(update={"stated_first": False, "asked_label_first": False})
    seen_shapes = {query_shape(r.cypher) for r in train}
    # each validation question by its pair: a shape some training pair has, one none has, or no pair
    part_of = {r.qid: "seen shape" if query_shape(r.cypher) in seen_shapes else "unseen shape" for r in valid}
    right: Counter = Counter()
    by_part: Counter = Counter()
    sizes: Counter = Counter()
    shaped_any = 0
    started = time.perf_counter()
    dump = args.dump.open("w") if args.dump else None
    for number, item in enumerate(items, 1):
        deadline = Deadline(600)
        answer0, space, anchors = pipeline._prepare(item.question, deadline, pipeline.max_hops)
        if not len(space):
            continue
        l1 = pipeline.generator.generate_many([item.question], [space], num_beams=5)[0]
        found = shaped(pipeline.generator, pool, item.question, space)
        shaped_any += bool(found)
        verdicts = {}
        part = part_of.get(item.qid, "no pair")
        sizes[part] += 1
        for name, generated in orders(l1, found).items():
            for rules, engine in (("", pipeline), (", L1's order", plain)):
                answer = copy.deepcopy(answer0)
                engine._answer(answer, space, anchors, generated[:10], deadline)
                outcome = outcome_from_answer(item, "no-l2", answer, 0.0, False, None, pipeline.store)
                verdicts[name + rules] = bool(outcome.execution)
                right[name + rules] += verdicts[name + rules]
                by_part[name + rules, part] += verdicts[name + rules]
        if dump:
            dump.write(
                json.dumps(
                    {
                        "qid": item.qid,
                        "question": item.question,
                        "l1": [g.cypher for g in l1],
                        "shaped": [(s.query.cypher, s.neighbour, round(s.query.score, 3)) for s in found],
                        "verdicts": verdicts,
                    }
                )
                + "\n"
            )
        if number % 10 == 0:
            print(f"  {number}/{len(items)} ({time.perf_counter() - started:.0f} s): {dict(right)}", flush=True)
    pipeline.close()
    n = len(items)
    print(f"execution accuracy on {n} validation questions ({args.questions}), {args.neighbours} neighbours:")
    print(f"  questions with a query of a neighbour's shape: {shaped_any}")
    parts = sorted(sizes)
    print(f"  {'':<52} {'all':>11}  " + "  ".join(f"{p} ({sizes[p]})".rjust(18) for p in parts))
    for name, count in right.items():
        cells = "  ".join(f"{by_part[name, p]:4d} {by_part[name, p] / max(1, sizes[p]):6.1%}".rjust(18) for p in parts)
        print(f"  {name:<52} {count:4d} {count / n:6.1%}  {cells}")


if __name__ == "__main__":
    main()
