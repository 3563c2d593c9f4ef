"""L1 led by the nearest solved questions' shapes (``inference/neighbour_shapes.py``): the queries
of the shape of the nearest solved question come first, with the question's own anchors and
values; every query is of the question's space; a question no neighbour's shape fits gets L1's
queries as they were."""

from __future__ import annotations

import pytest
from test_query_space import PATTERNS, space_for

from graphraft.inference.exemplars import Exemplar, Exemplars
from graphraft.inference.generation import ConstrainedGenerator
from graphraft.inference.neighbour_shapes import NeighbourShapes
from graphraft.synthesis.language import query_shape, render_query


@pytest.fixture(scope="module")
def tiny(graphraft_home):
    from graphraft.models import tiny_random_model

    return tiny_random_model(graphraft_home, seed=5)


SOLVED = [
    # a question asked as the one below, of another person and another year: its query's shape is
    # the one to take
    Exemplar(
        question="Which movies released after 1980 did Hugo Weaving act in?",
        cypher='MATCH (a:Person {id: "p:hugo"})-[r1:ACTED_IN]->(n1:Movie) WHERE n1.released > 1980 '
        "RETURN DISTINCT n1.id AS id",
    ),
    Exemplar(question="How many people are there?", cypher="MATCH (n0:Person) RETURN count(DISTINCT n0) AS count"),
]


def test_the_nearest_solved_questions_shape_comes_first_with_the_questions_values(tiny, embedder):
    model, tokenizer = tiny
    question = "Which movies released after 1999 did Keanu act in?"
    patterns = [p for p in PATTERNS if len(p.steps) < 2]
    clauses, space = space_for(question, tokenizer, patterns, max_filters=1, max_properties=1)
    l1 = ConstrainedGenerator(model, tokenizer)
    led = NeighbourShapes(l1, Exemplars(SOLVED, 2, embedder.embed))
    (found,) = led.generate_many([question], [space], num_beams=3)
    (alone,) = l1.generate_many([question], [space], num_beams=3)
    first = found[0]
    assert query_shape(first.cypher) == query_shape(SOLVED[0].cypher)
    # this question's anchor and number, not the solved question's
    assert '"p:keanu"' in first.cypher and "n1.released > 1999" in first.cypher
    # the random model does not write it itself: the neighbour's shape put it first
    assert first.cypher not in [g.cypher for g in alone[:1]]
    # then L1's own queries, each once, every one a query of the space, ranked anew
    assert [g.cypher for g in found if g.cypher in {a.cypher for a in alone}] == [g.cypher for g in alone]
    assert len({g.cypher for g in found}) == len(found) and [g.rank for g in found] == list(range(len(found)))
    assert all(g.query is not None and clauses.contains(g.query) and render_query(g.query) == g.cypher for g in found)
    # the queries of a shape are scored by L1 among themselves (its order within a shape)
    shaped = led.shaped([question], [space])[0]
    same = [s.query.score for s in shaped if s.neighbour == 0]
    assert same == sorted(same, reverse=True)


def test_a_question_no_neighbours_shape_fits_gets_l1s_queries(tiny, embedder):
    model, tokenizer = tiny
    question = "Which movies did Keanu act in?"
    patterns = [PATTERNS[1]]  # one step from the anchor: no label root, so no count of all people
    _, space = space_for(question, tokenizer, patterns, max_filters=1, max_properties=1)
    l1 = ConstrainedGenerator(model, tokenizer)
    # the solved question's shape compares a number the question does not state
    led = NeighbourShapes(l1, Exemplars(SOLVED, 2, embedder.embed))
    assert led.shaped([question], [space]) == [[]]
    assert led.generate_many([question], [space], num_beams=3) == l1.generate_many([question], [space], num_beams=3)
