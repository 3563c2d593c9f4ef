"""L1 led by the solved questions nearest to the question (`--neighbour-shapes K`).

Questions asked alike are answered by queries of one *shape* (``synthesis.language.query_shape``:
the query's text with the anchors' ids and the literals masked — what L1 must decide from the
wording). The ``K`` training questions nearest to a question (``exemplars.Exemplars``, the MiniLM
similarity of the questions with what they name masked; the pool an L1 adapter keeps) give the
shapes its query likely has; the question's own query space gives the queries of those shapes
with its anchors and values (``QuerySpace.shaped``), and L1 scores them (the exact search over
that small list). They are tried before L1's other queries.

Nothing leaves the language: every query comes from the question's query space, and its shape is
only a choice among them. A question none of whose neighbours' shapes fits its space gets L1's
queries alone."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from graphraft.inference.decoding.query_space import QuerySpace
from graphraft.inference.exemplars import Exemplars
from graphraft.inference.generation import GeneratedQuery, QueryGenerator
from graphraft.synthesis.language import query_shape, render_query

#: the most queries of one shape taken from a question's space (two anchors and two numbers of
#: the question give a shape a handful; more are ways to place many values, scored by L1)
PER_SHAPE = 32


@dataclass(frozen=True)
class ShapedQuery:
    """A query of a neighbour's shape, as L1 scored it among them."""

    query: GeneratedQuery
    neighbour: int  # the rank of the nearest solved question of its shape (0: the nearest)
    weight: float  # the summed similarity of the solved questions of its shape


class NeighbourShapes(QueryGenerator):
    """``l1`` (a ``ConstrainedGenerator``) with the queries of the shapes of the ``solved``
    questions nearest to each question first: by the nearest such question, then L1's score;
    then L1's own top queries."""

    def __init__(self, l1: QueryGenerator, solved: Exemplars, per_shape: int = PER_SHAPE):
        self.l1, self.solved, self.per_shape = l1, solved, per_shape
        self.model, self.tokenizer = l1.model, l1.tokenizer
        self.schema_hint, self.exemplars = l1.schema_hint, l1.exemplars

    @property
    def adapter(self):
        return self.l1.adapter

    @property
    def method(self) -> str:
        return self.l1.method

    def shaped(
        self, questions: Sequence[str], spaces: Sequence, check: Callable[[], None] | None = None
    ) -> list[list[ShapedQuery]]:
        """Each question's queries of its neighbours' shapes, by the nearest neighbour of their
        shape, then L1's score (none for a question whose candidates are not a query space)."""
        found: list[dict[str, tuple]] = []
        for neighbours, space in zip(self.solved.nearest_scored(questions), spaces):
            queries: dict[str, tuple] = {}
            if isinstance(space, QuerySpace) and neighbours:
                shapes = [query_shape(e.cypher) for e, _ in neighbours]
                weight: dict[str, float] = {}
                for shape, (_, similarity) in zip(shapes, neighbours):
                    weight[shape] = weight.get(shape, 0.0) + similarity
                for shape, listed in space.shaped(shapes, self.per_shape).items():
                    for query in listed:
                        queries.setdefault(render_query(query), (query, shapes.index(shape), weight[shape]))
            found.append(queries)
        asked = [i for i, queries in enumerate(found) if queries]
        scored = self.l1.generate_many(
            [questions[i] for i in asked],
            [list(found[i]) for i in asked],
            num_beams=max((len(found[i]) for i in asked), default=1),
            check=check,
        )
        out: list[list[ShapedQuery]] = [[] for _ in questions]
        for i, generated in zip(asked, scored):
            shaped = []
            for g in generated:
                query, neighbour, weight = found[i][g.cypher]
                shaped.append(ShapedQuery(GeneratedQuery(g.cypher, g.score, 0, query), neighbour, weight))
            out[i] = sorted(shaped, key=lambda s: (s.neighbour, -s.query.score))
        return out

    def generate_many(
        self,
        questions: Sequence[str],
        candidate_lists: Sequence,
        num_beams: int = 5,
        group: int = 8,
        check: Callable[[], None] | None = None,
    ) -> list[list[GeneratedQuery]]:
        own = self.l1.generate_many(questions, candidate_lists, num_beams, group, check)
        shaped = self.shaped(questions, candidate_lists, check)
        return [shaped_first([s.query for s in first], rest) for first, rest in zip(shaped, own)]


def shaped_first(first: Sequence[GeneratedQuery], rest: Sequence[GeneratedQuery]) -> list[GeneratedQuery]:
    """``first``, then the queries of ``rest`` not among them, ranked anew from 0."""
    seen, out = set(), []
    for g in [*first, *rest]:
        if g.cypher not in seen:
            seen.add(g.cypher)
            out.append(GeneratedQuery(g.cypher, g.score, len(out), g.query))
    return out
