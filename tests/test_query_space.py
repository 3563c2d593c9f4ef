"""Decoding over the query language: the tree made as the search goes gives exactly what the
whole tree, listed query by query, gives; its tokens are the whole queries' tokens; it makes
only a small part of the space; and nothing comes out that is not a grounded query."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from graphraft.graph.schema import ISO_DATE, GraphSchema, PropertyInfo
from graphraft.inference.decoding.query_space import LazyChildren, QuerySpace
from graphraft.inference.decoding.search import top_m
from graphraft.inference.decoding.trie import CandidateIndex
from graphraft.inference.prompts import l1_messages, prompt_ids
from graphraft.synthesis.clauses import ClauseSpace
from graphraft.synthesis.language import Filter, Order, Projection, Query, render_query
from graphraft.synthesis.literals import question_literals
from graphraft.synthesis.patterns import AnchorRef, Pattern, Step

SCHEMA = GraphSchema(
    labels={"Person": 5, "Movie": 5},
    relationship_types={"ACTED_IN": 7, "REVIEWED": 3},
    patterns=[],
    properties={
        "Person": {"born": PropertyInfo(type="integer", sampled=4), "name": PropertyInfo(type="string", sampled=5)},
        "Movie": {
            "released": PropertyInfo(type="integer", sampled=5),
            "genre": PropertyInfo(type="string", sampled=5, values=["Drama", "Science Fiction"]),
            "title": PropertyInfo(type="string", sampled=5),
        },
    },
    relationship_properties={"REVIEWED": {"rating": PropertyInfo(type="integer", sampled=3)}},
)
# as a graph loaded from CSV keeps them, a number and a date as text too (not in SCHEMA: the tests
# that list its whole space would list several times as much)
CSV_SCHEMA = SCHEMA.model_copy(deep=True)
CSV_SCHEMA.properties["Movie"] |= {
    "gross": PropertyInfo(type="string", sampled=5, numeric=True),
    "opened": PropertyInfo(type="string", sampled=5, dates=True),
}
KEANU = AnchorRef("p:keanu", ("Person",))
ACTED = Step("ACTED_IN", True, ("Movie",))
COSTARS = Step("ACTED_IN", False, ("Person",))
PATTERNS = [
    Pattern(KEANU, (), 0),
    Pattern(KEANU, (ACTED,), 1),
    Pattern(KEANU, (Step("REVIEWED", True, ("Movie",)),), 1),
    Pattern(AnchorRef(None, ("Movie",)), (), 0),
    Pattern(KEANU, (ACTED, COSTARS), 2),
]


def space_for(question: str, tokenizer, patterns=PATTERNS, schema=SCHEMA, **limits) -> tuple[ClauseSpace, QuerySpace]:
    clauses = ClauseSpace(schema, question_literals(question), question, **limits)
    return clauses, QuerySpace(tokenizer, patterns, clauses)


@pytest.fixture(scope="module")
def tiny(graphraft_home):
    from graphraft.models import tiny_random_model

    return tiny_random_model(graphraft_home, seed=5)


def test_pieces_tokenise_as_whole_queries(tiny):
    _, tokenizer = tiny
    # an anchor, a step from it and a label root: 164,000 queries (all five paths: 670,000; the
    # test below covers a relationship's properties and two steps over smaller questions)
    patterns = [p for p in PATTERNS if len(p.steps) < 2 and p.steps[:1] != (Step("REVIEWED", True, ("Movie",)),)]
    clauses, space = space_for(
        "which 2 Drama movies after 1999 with 'Matrix' in the title",
        tokenizer,
        patterns,
        max_filters=1,
        max_properties=1,
    )
    leaves = dict(space.leaves())
    queries = clauses.queries(patterns)
    # walking the whole tree finds every query of the space, each once
    assert sorted(map(render_query, leaves.values())) == sorted(map(render_query, queries))
    whole = CandidateIndex(tokenizer, [render_query(q) for q in queries])
    assert set(leaves) == set(whole.trie.sequences)
    assert all(whole.query_for(sequence) == render_query(query) for sequence, query in leaves.items())
    assert space.tokenisation_holds()


@pytest.mark.parametrize(
    "question, m", [("how many movies after 2000", 1), ("which 'Matrix' movies", 3), ("the Drama ones", 8)]
)
def test_the_search_over_the_made_tree_finds_what_the_whole_tree_gives(tiny, question, m):
    model, tokenizer = tiny
    clauses, space = space_for(question, tokenizer, max_filters=1, max_properties=1)
    queries = [render_query(q) for q in clauses.queries(PATTERNS)]
    whole = CandidateIndex(tokenizer, queries)
    prompt = prompt_ids(tokenizer, l1_messages(question))
    expected = top_m(model, prompt, whole.radix(), m)
    found = top_m(model, prompt, space.radix(), m)
    assert [r.sequence for r in found] == [r.sequence for r in expected]
    assert [r.score for r in found] == pytest.approx([r.score for r in expected], abs=1e-4)
    assert [render_query(space.query_for(r.sequence)) for r in found] == [whole.query_for(r.sequence) for r in expected]


def test_the_search_makes_a_small_part_of_the_space(tiny):
    model, tokenizer = tiny
    question = "which 3 movies after 2000 and before 2010 did Keanu act in, with 'Matrix' in the title"
    _, space = space_for(question, tokenizer)
    prompt = prompt_ids(tokenizer, l1_messages(question))
    found = top_m(model, prompt, space.radix(), 5)
    assert len(found) == 5
    made, stack = 0, [space.radix()]
    while stack:
        node = stack.pop()
        if isinstance(node.children, LazyChildren) and not node.children.made:
            continue
        made += 1
        stack.extend(node.children)
    # the space below one of its five paths, of those with one filter at most (2.9 million with two:
    # a minute to list): the search made a small part even of that
    fewer = ClauseSpace(SCHEMA, question_literals(question), question, max_filters=1)
    one_path = len(fewer.queries([PATTERNS[1]]))
    assert one_path > 100_000 and made < one_path / 15, (made, one_path)


@given(
    st.text(alphabet=st.sampled_from(list("abc 19820-'\"Drama?")), max_size=40),
    st.integers(min_value=1, max_value=6),
)
@example("which movies opened after '1999-10-20' and grossed over 100.5", 3)  # text holding dates, numbers
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_decoding_yields_only_grounded_queries(tiny, question, m):
    """Whatever the model reads, what comes out is a query of the language over the given
    paths, with properties of the schema and values of the question or the schema."""
    model, tokenizer = tiny
    clauses, space = space_for(question, tokenizer, schema=CSV_SCHEMA)
    literals = question_literals(question)
    years = {("STARTS WITH", year) for year in literals.years}  # a year stated, as the start of a date kept as text
    for result in top_m(model, prompt_ids(tokenizer, l1_messages(question)), space.radix(), m):
        query = space.query_for(result.sequence)
        assert query is not None and query.pattern in PATTERNS
        for item in query.filters:
            if item.op == "NOT EXISTS":  # a relationship the schema has for the node's labels
                labels = query.pattern.labels_of(item.element)
                assert any(
                    (
                        link.type,
                        link.source if item.outgoing else link.target,
                        link.target if item.outgoing else link.source,
                    )
                    in {(item.key, label, item.value) for label in labels}
                    for link in CSV_SCHEMA.patterns
                )
                continue
            keys = (
                CSV_SCHEMA.relationship_properties[query.pattern.steps[item.element - 1].type]
                if item.relationship
                else clauses.properties(query.pattern.labels_of(item.element))
            )
            assert item.key in keys
            values = set(literals.numbers) | set(literals.strings) | set(keys[item.key].values or []) | {True, False}
            assert item.value is None or item.value in values or (item.op, item.value) in years
            # text is read as a number (toFloat) where it holds numbers, and compared with a number
            assert item.numeric == (
                keys[item.key].numeric
                and item.op in ("=", "<>", "<", "<=", ">", ">=")
                and isinstance(item.value, (int, float))
                and not isinstance(item.value, bool)
            )
            if keys[item.key].type == "string" and item.op in ("<", "<=", ">", ">=") and not item.numeric:
                assert keys[item.key].dates and ISO_DATE.fullmatch(item.value)  # before or after a quoted date
        target_keys = clauses.properties(query.pattern.labels_of(query.pattern.target))
        assert set(query.projection.properties) <= set(target_keys)
        if query.order is not None and query.order.before:  # ordered by a key of the target
            assert query.order.by in target_keys and query.limit is not None
        for node, key in query.projection.others:  # other nodes of the path, never an anchor
            assert node != query.pattern.target and query.pattern.variable(node) not in ("a", "b")
            assert key is None or key in clauses.properties(query.pattern.labels_of(node))
        projection = query.projection
        if projection.key is not None:  # an aggregate of the target's property or a relationship's
            kind = query.pattern.steps[projection.step - 1].type if projection.step else None
            keys = CSV_SCHEMA.relationship_properties[kind] if kind else target_keys
            info = keys[projection.key]
            assert info.type in ("integer", "float") or info.numeric
            assert projection.numeric == info.numeric
        if projection.group_key is not None:  # grouped by a text property's values, of a node not an anchor
            assert query.pattern.variable(projection.group) not in ("a", "b")
            group_keys = clauses.properties(query.pattern.labels_of(projection.group))
            assert group_keys[projection.group_key].type == "string"
        if projection.having is not None:  # groups kept by comparing their aggregate with a number of the question
            assert projection.having[1] in literals.numbers and projection.group is not None
        for step, key in query.projection.edges:  # a property of the path's relationship's type
            assert key in CSV_SCHEMA.relationship_properties[query.pattern.steps[step - 1].type]
        assert query.limit is None or query.limit in literals.limits


def test_the_generator_writes_queries_of_a_space_as_of_a_list(tiny):
    """``generate_many`` takes a question's space where it took its listed candidates: the same
    queries, best first, each with its ``Query``."""
    from graphraft.inference.generation import ConstrainedGenerator

    model, tokenizer = tiny
    question = "which 'Matrix' movies after 1999"
    patterns = [PATTERNS[1], PATTERNS[3]]  # a step from an anchor and a label root: 45,000 queries
    clauses, space = space_for(question, tokenizer, patterns, max_filters=1, max_properties=1)
    listed = [render_query(q) for q in clauses.queries(patterns)]
    generator = ConstrainedGenerator(model, tokenizer)
    from_space, from_list = generator.generate_many([question, question], [space, listed], num_beams=4)
    assert [g.cypher for g in from_space] == [g.cypher for g in from_list] and len(from_space) == 4
    assert all(render_query(g.query) == g.cypher for g in from_space)
    assert all(g.query is None for g in from_list)


def test_text_that_holds_numbers_or_dates_is_compared_as_such():
    """Text that holds numbers is compared with the question's numbers through toFloat and
    aggregated so; text that holds dates is compared in order with a date the question quotes;
    other text is neither."""
    question = "which movies opened after '1999-10-20' and grossed over 100.5"
    clauses = ClauseSpace(CSV_SCHEMA, question_literals(question), question)
    movie = Pattern(AnchorRef(None, ("Movie",)), (), 0)
    filters = clauses.filters(movie)
    assert {(f.key, f.op, f.value) for f in filters if f.numeric} == {
        ("gross", op, 100.5) for op in ("=", "<>", "<", "<=", ">", ">=")
    }
    ordered = {(f.key, f.op, f.value) for f in filters if f.op in ("<", "<=", ">", ">=") and isinstance(f.value, str)}
    assert ordered == {("opened", op, "1999-10-20") for op in ("<", "<=", ">", ">=")}
    sums = {p.key: p.numeric for p, _ in clauses.projections(movie) if p.aggregate == "sum" and p.group is None}
    assert sums == {"gross": True, "released": False}
    query = Query(
        movie,
        (Filter(0, "gross", ">", 100.5, numeric=True), Filter(0, "opened", ">", "1999-10-20")),
        Projection(aggregate="sum", key="gross", numeric=True),
    )
    assert render_query(query) == (
        'MATCH (n0:Movie) WHERE toFloat(n0.gross) > 100.5 AND n0.opened > "1999-10-20" '
        "RETURN sum(toFloat(n0.gross)) AS sum"
    )
    assert clauses.contains(query)
    assert not clauses.contains(Query(movie, (Filter(0, "title", ">", "1999-10-20"),)))  # free text


def test_text_that_holds_numbers_is_ordered_as_numbers_or_as_text_and_other_text_as_text():
    """As text, '9.5' follows '10.25': an order of text that holds numbers may read it with
    toFloat, whether the column is returned or the nodes are ordered before the projection, or
    order it as text (what a gold query that forgot toFloat did); other text only as text."""
    question = "the 3 movies with the highest gross"
    clauses = ClauseSpace(CSV_SCHEMA, question_literals(question), question)
    movie = Pattern(AnchorRef(None, ("Movie",)), (), 0)
    before = Query(movie, order=Order("gross", True, before=True, numeric=True), limit=3)
    assert (
        render_query(before)
        == "MATCH (n0:Movie) WITH DISTINCT n0 ORDER BY toFloat(n0.gross) DESC LIMIT 3 RETURN n0.id AS id"
    )
    assert clauses.contains(before) and clauses.contains(replace(before, order=Order("gross", True, before=True)))
    returned = Query(movie, projection=Projection(("gross",)), order=Order("gross", True, numeric=True), limit=3)
    assert render_query(returned).endswith(
        "RETURN DISTINCT n0.id AS id, n0.gross AS gross ORDER BY toFloat(gross) DESC LIMIT 3"
    )
    assert clauses.contains(returned) and clauses.contains(replace(returned, order=Order("gross", True)))
    titled = Query(movie, projection=Projection(("title",)), order=Order("title"), limit=3)
    assert clauses.contains(titled)
    assert not clauses.contains(replace(titled, order=Order("title", numeric=True)))
    assert Query.from_dict(returned.to_dict()) == returned


def test_shaped_finds_every_query_of_a_shape_and_nothing_else(tiny):
    """``QuerySpace.shaped``: the queries of the given shapes, as listing the whole space and
    masking each query's text finds them, without listing it."""
    from graphraft.synthesis.language import query_shape

    _, tokenizer = tiny
    patterns = [p for p in PATTERNS if len(p.steps) < 2]
    clauses, space = space_for("the 2 movies of Keanu after 1999", tokenizer, patterns, max_filters=1, max_properties=1)
    every = [render_query(q) for q in clauses.queries(patterns)]
    by_shape: dict[str, set[str]] = {}
    for text in every:
        by_shape.setdefault(query_shape(text), set()).add(text)
    # shapes with several queries (two values the question states, two anchors' paths) and one
    wanted = sorted(by_shape, key=lambda s: (-len(by_shape[s]), s))[:3] + ["MATCH (n0:Nowhere) RETURN N"]
    found = space.shaped(wanted, limit=1000)
    assert len(by_shape[wanted[0]]) > 1
    for shape in wanted:
        assert {render_query(q) for q in found[shape]} == by_shape.get(shape, set())
    # at most ``limit`` a shape
    assert len(space.shaped(wanted[:1], limit=1)[wanted[0]]) == 1


def test_query_shape_masks_what_the_question_supplies():
    from graphraft.synthesis.language import query_shape

    query = Query(
        Pattern(KEANU, (ACTED,), 1),
        (Filter(1, "released", ">", 1999), Filter(1, "title", "CONTAINS", 'The "Matrix"')),
        Projection(("title",)),
        Order("title", True),
        3,
    )
    text = render_query(query)
    shape = query_shape(text)
    assert "p:keanu" not in shape and "1999" not in shape and "Matrix" not in shape and "LIMIT 3" not in shape
    assert shape == query_shape(text.replace("1999", "2005").replace("p:keanu", "p:hugo"))
    # what the wording decides stays: the keys, the operators, the order, the variables
    assert "n1.released > N" in shape and "ACTED_IN" in shape and "DESC" in shape and "(n1:Movie)" in shape
