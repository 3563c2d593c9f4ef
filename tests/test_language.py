"""The query language beyond paths: every form renders to one text, runs on both stores and
returns what Python computes from the graph's own lists (tests/facts_graph.py)."""

from __future__ import annotations

from collections import Counter
from itertools import product
from statistics import mean

import pytest
from facts_graph import ACTED_IN, DIRECTED, MOVIES, PEOPLE, REVIEWED, load

from graphraft.synthesis.clauses import ClauseSpace
from graphraft.synthesis.language import (
    Filter,
    Order,
    Projection,
    Query,
    alias,
    literal,
    render_query,
    sorted_filters,
)
from graphraft.synthesis.literals import question_literals
from graphraft.synthesis.patterns import AnchorRef, Pattern, Step, render

KEANU = AnchorRef("p:keanu", ("Person",))
LANA = AnchorRef("p:lana", ("Person",))
JESSICA = AnchorRef("p:jessica", ("Person",))
PEOPLE_ROOT = AnchorRef(None, ("Person",))
MOVIE_ROOT = AnchorRef(None, ("Movie",))
ACTED = Step("ACTED_IN", True, ("Movie",))
ACTED_BACK = Step("ACTED_IN", False, ("Person",))
DIRECTS = Step("DIRECTED", True, ("Movie",))
REVIEWS = Step("REVIEWED", True, ("Movie",))
DIRECTED_BY = Step("DIRECTED", False, ("Person",))


def acted(person):
    return {m for p, m in ACTED_IN if p == person}


# (query, its text, what it returns as a set of row tuples in the projection's column order)
CASES = {
    "a property of the anchor": (
        Query(Pattern(KEANU, (), 0), projection=Projection(("born",))),
        'MATCH (a:Person {id: "p:keanu"}) RETURN DISTINCT a.id AS id, a.born AS born',
        {("p:keanu", PEOPLE["p:keanu"]["born"])},
    ),
    "a count": (
        Query(Pattern(KEANU, (ACTED,), 1), projection=Projection(aggregate="count")),
        'MATCH (a:Person {id: "p:keanu"})-[r1:ACTED_IN]->(n1:Movie) RETURN count(DISTINCT n1) AS count',
        {(len(acted("p:keanu")),)},
    ),
    "a filter on the target": (
        Query(Pattern(KEANU, (ACTED,), 1), (Filter(1, "released", ">", 2000),)),
        'MATCH (a:Person {id: "p:keanu"})-[r1:ACTED_IN]->(n1:Movie) WHERE n1.released > 2000 '
        "RETURN DISTINCT n1.id AS id",
        {(m,) for m in acted("p:keanu") if MOVIES[m]["released"] > 2000},
    ),
    "a label root": (
        Query(Pattern(MOVIE_ROOT, (), 0), (Filter(0, "released", "=", 1999),)),
        "MATCH (n0:Movie) WHERE n0.released = 1999 RETURN DISTINCT n0.id AS id",
        {(m,) for m, p in MOVIES.items() if p["released"] == 1999},
    ),
    "order and limit": (
        Query(
            Pattern(LANA, (DIRECTS,), 1), projection=Projection(("released",)), order=Order("released", True), limit=2
        ),
        'MATCH (a:Person {id: "p:lana"})-[r1:DIRECTED]->(n1:Movie) '
        "RETURN DISTINCT n1.id AS id, n1.released AS released ORDER BY released DESC LIMIT 2",
        set(sorted(((m, MOVIES[m]["released"]) for p, m in DIRECTED if p == "p:lana"), key=lambda r: -r[1])[:2]),
    ),
    "a count per node, ordered": (
        Query(
            Pattern(PEOPLE_ROOT, (ACTED,), 1),
            projection=Projection(aggregate="count", group=0),
            order=Order("count", True),
            limit=1,
        ),
        "MATCH (n0:Person)-[r1:ACTED_IN]->(n1:Movie) RETURN n0.id AS id, count(DISTINCT n1) AS count "
        "ORDER BY count DESC LIMIT 1",
        {Counter(p for p, _ in ACTED_IN).most_common(1)[0]},
    ),
    "an average": (
        Query(Pattern(KEANU, (ACTED,), 1), projection=Projection(aggregate="avg", key="released")),
        'MATCH (a:Person {id: "p:keanu"})-[r1:ACTED_IN]->(n1:Movie) RETURN avg(n1.released) AS avg',
        {(mean(MOVIES[m]["released"] for m in acted("p:keanu")),)},
    ),
    "a maximum per node": (
        Query(Pattern(PEOPLE_ROOT, (ACTED,), 1), projection=Projection(aggregate="max", key="released", group=0)),
        "MATCH (n0:Person)-[r1:ACTED_IN]->(n1:Movie) RETURN n0.id AS id, max(n1.released) AS max",
        {(p, max(MOVIES[m]["released"] for m in acted(p))) for p, _ in ACTED_IN},
    ),
    "a filter on a relationship": (
        Query(Pattern(JESSICA, (REVIEWS,), 1), (Filter(1, "rating", ">=", 65, relationship=True),)),
        'MATCH (a:Person {id: "p:jessica"})-[r1:REVIEWED]->(n1:Movie) WHERE r1.rating >= 65 '
        "RETURN DISTINCT n1.id AS id",
        {(m,) for _, m, rating in REVIEWED if rating >= 65},
    ),
    "text operators": (
        Query(
            Pattern(MOVIE_ROOT, (), 0),
            (Filter(0, "title", "CONTAINS", "Matrix"), Filter(0, "title", "STARTS WITH", "The")),
            Projection(("title",)),
        ),
        'MATCH (n0:Movie) WHERE n0.title CONTAINS "Matrix" AND n0.title STARTS WITH "The" '
        "RETURN DISTINCT n0.id AS id, n0.title AS title",
        {(m, p["title"]) for m, p in MOVIES.items() if "Matrix" in p["title"] and p["title"].startswith("The")},
    ),
    "a missing value": (
        Query(Pattern(PEOPLE_ROOT, (), 0), (Filter(0, "born", "IS NULL"),)),
        "MATCH (n0:Person) WHERE n0.born IS NULL RETURN DISTINCT n0.id AS id",
        {(p,) for p, props in PEOPLE.items() if "born" not in props},
    ),
    "two hops, the anchor kept out, a filter after": (
        Query(Pattern(KEANU, (ACTED, ACTED_BACK), 2), (Filter(2, "born", ">", 1965),)),
        'MATCH (a:Person {id: "p:keanu"})-[r1:ACTED_IN]->(n1:Movie)<-[r2:ACTED_IN]-(n2:Person) '
        "WHERE n2 <> a AND n2.born > 1965 RETURN DISTINCT n2.id AS id",
        {(p,) for p, m in ACTED_IN if m in acted("p:keanu") and p != "p:keanu" and PEOPLE[p].get("born", 0) > 1965},
    ),
    "other nodes of the path beside the target": (
        Query(
            Pattern(PEOPLE_ROOT, (ACTED,), 1),
            (Filter(1, "released", ">", 2000),),
            Projection(("title",), others=((0, None), (0, "born"))),
        ),
        "MATCH (n0:Person)-[r1:ACTED_IN]->(n1:Movie) WHERE n1.released > 2000 "
        "RETURN DISTINCT n1.id AS id, n1.title AS title, n0.id AS id_0, n0.born AS born_0",
        {(m, MOVIES[m]["title"], p, PEOPLE[p]["born"]) for p, m in ACTED_IN if MOVIES[m]["released"] > 2000},
    ),
    "ordered by another node's property": (
        Query(
            Pattern(PEOPLE_ROOT, (ACTED,), 0),
            projection=Projection(others=((1, "released"),)),
            order=Order("released_1", True),
            limit=1,
        ),
        "MATCH (n0:Person)-[r1:ACTED_IN]->(n1:Movie) RETURN DISTINCT n0.id AS id, n1.released AS released_1 "
        "ORDER BY released_1 DESC LIMIT 1",
        {max(((p, MOVIES[m]["released"]) for p, m in ACTED_IN), key=lambda row: row[1])},
    ),
    "the first k by a property not returned": (
        Query(
            Pattern(MOVIE_ROOT, (), 0), projection=Projection(("title",)), order=Order("released", before=True), limit=2
        ),
        "MATCH (n0:Movie) WITH DISTINCT n0 ORDER BY n0.released ASC LIMIT 2 RETURN n0.id AS id, n0.title AS title",
        {(m, MOVIES[m]["title"]) for m in sorted(MOVIES, key=lambda m: MOVIES[m]["released"])[:2]},
    ),
    "a path back to its root: the same person acted in and directed the movie": (
        Query(Pattern(PEOPLE_ROOT, (ACTED, DIRECTED_BY), 1, closed=True), projection=Projection(others=((0, None),))),
        "MATCH (n0:Person)-[r1:ACTED_IN]->(n1:Movie)<-[r2:DIRECTED]-(n0) RETURN DISTINCT n1.id AS id, n0.id AS id_0",
        {(m, p) for p, m in ACTED_IN if (p, m) in DIRECTED},
    ),
    "a node with no relationship of a kind: who never directed": (
        Query(Pattern(PEOPLE_ROOT, (ACTED,), 0), (Filter(0, "DIRECTED", "NOT EXISTS", "Movie", outgoing=True),)),
        "MATCH (n0:Person)-[r1:ACTED_IN]->(n1:Movie) WHERE NOT (n0)-[:DIRECTED]->(:Movie) RETURN DISTINCT n0.id AS id",
        {(p,) for p, _ in ACTED_IN if p not in {d for d, _ in DIRECTED}},
    ),
    "a relationship's property beside the target: the two best-rated reviews": (
        Query(
            Pattern(PEOPLE_ROOT, (REVIEWS,), 1),
            projection=Projection(edges=((1, "rating"),)),
            order=Order("rating_r1", True),
            limit=2,
        ),
        "MATCH (n0:Person)-[r1:REVIEWED]->(n1:Movie) RETURN DISTINCT n1.id AS id, r1.rating AS rating_r1 "
        "ORDER BY rating_r1 DESC LIMIT 2",
        set(sorted(((m, r) for _, m, r in REVIEWED), key=lambda row: -row[1])[:2]),
    ),
    "an aggregate of a relationship's property: the highest rating": (
        Query(Pattern(PEOPLE_ROOT, (REVIEWS,), 1), projection=Projection(aggregate="max", key="rating", step=1)),
        "MATCH (n0:Person)-[r1:REVIEWED]->(n1:Movie) RETURN max(r1.rating) AS max",
        {(max(r for _, _, r in REVIEWED),)},
    ),
    "an aggregate of a relationship's property per node: each reviewer's average rating": (
        Query(
            Pattern(MOVIE_ROOT, (Step("REVIEWED", False, ("Person",)),), 1),
            projection=Projection(aggregate="avg", key="rating", group=0, step=1),
        ),
        "MATCH (n0:Movie)<-[r1:REVIEWED]-(n1:Person) RETURN n0.id AS id, avg(r1.rating) AS avg",
        {(m, float(r)) for _, m, r in REVIEWED},
    ),
    "groups kept by their aggregate: who directed more than one movie": (
        Query(
            Pattern(PEOPLE_ROOT, (DIRECTS,), 1),
            projection=Projection(aggregate="count", group=0, having=(">", 1), hidden=True),
        ),
        "MATCH (n0:Person)-[r1:DIRECTED]->(n1:Movie) WITH n0, count(DISTINCT n1) AS count WHERE count > 1 "
        "RETURN n0.id AS id",
        {(p,) for p in PEOPLE if sum(d == p for d, _ in DIRECTED) > 1},
    ),
    "groups kept by their aggregate, returned beside them and ordered by it": (
        Query(
            Pattern(MOVIE_ROOT, (Step("ACTED_IN", False, ("Person",)),), 1),
            projection=Projection(aggregate="max", key="born", group=0, having=(">=", 1964)),
            order=Order("max", True),
        ),
        "MATCH (n0:Movie)<-[r1:ACTED_IN]-(n1:Person) WITH n0, max(n1.born) AS max WHERE max >= 1964 "
        "RETURN n0.id AS id, max AS max ORDER BY max DESC",
        {
            (m, max(PEOPLE[p]["born"] for p, n in ACTED_IN if n == m))
            for m in MOVIES
            if any(n == m for _, n in ACTED_IN) and max(PEOPLE[p]["born"] for p, n in ACTED_IN if n == m) >= 1964
        },
    ),
    "a count per value of a property: people per country": (
        Query(
            Pattern(PEOPLE_ROOT, (), 0),
            projection=Projection(aggregate="count", group=0, group_key="country"),
            order=Order("count", True),
        ),
        "MATCH (n0:Person) RETURN n0.country AS country_0, count(DISTINCT n0) AS count ORDER BY count DESC",
        set(Counter(p.get("country") for p in PEOPLE.values()).items()),
    ),
    "every time a path reaches a node: roles per country, not distinct movies": (
        Query(
            Pattern(PEOPLE_ROOT, (ACTED,), 1),
            projection=Projection(aggregate="count", group=0, group_key="country", every=True),
            order=Order("count", True),
        ),
        "MATCH (n0:Person)-[r1:ACTED_IN]->(n1:Movie) RETURN n0.country AS country_0, count(n1) AS count "
        "ORDER BY count DESC",
        set(Counter(PEOPLE[p].get("country") for p, _ in ACTED_IN).items()),
    ),
    "groups of another node's values kept by their aggregate: countries whose actors made 3 movies or more": (
        Query(
            Pattern(MOVIE_ROOT, (ACTED_BACK,), 0),
            projection=Projection(aggregate="count", group=1, group_key="country", having=(">=", 3)),
        ),
        "MATCH (n0:Movie)<-[r1:ACTED_IN]-(n1:Person) WITH n1.country AS country_1, count(DISTINCT n0) AS count "
        "WHERE count >= 3 RETURN country_1 AS country_1, count AS count",
        {
            (country, len(movies))
            for country in {p.get("country") for p in PEOPLE.values()}
            if len(movies := {m for p, m in ACTED_IN if PEOPLE[p].get("country") == country}) >= 3
        },
    ),
    "a property's distinct values alone": (
        Query(Pattern(PEOPLE_ROOT, (ACTED,), 0), projection=Projection(("born",), values=True)),
        "MATCH (n0:Person)-[r1:ACTED_IN]->(n1:Movie) RETURN DISTINCT n0.born AS born",
        {(PEOPLE[p].get("born"),) for p, _ in ACTED_IN},
    ),
    "values alone, ordered": (
        Query(
            Pattern(KEANU, (ACTED,), 1),
            projection=Projection(("released", "title"), values=True),
            order=Order("released", True),
            limit=2,
        ),
        'MATCH (a:Person {id: "p:keanu"})-[r1:ACTED_IN]->(n1:Movie) '
        "RETURN DISTINCT n1.released AS released, n1.title AS title ORDER BY released DESC LIMIT 2",
        set(sorted(((MOVIES[m]["released"], MOVIES[m]["title"]) for m in acted("p:keanu")), reverse=True)[:2]),
    ),
    "text that holds numbers, compared as a number": (
        Query(Pattern(MOVIE_ROOT, (), 0), (Filter(0, "gross", ">", 400, numeric=True),)),
        "MATCH (n0:Movie) WHERE toFloat(n0.gross) > 400 RETURN DISTINCT n0.id AS id",
        {(m,) for m, p in MOVIES.items() if float(p["gross"]) > 400},
    ),
    "a sum of text that holds numbers": (
        Query(Pattern(KEANU, (ACTED,), 1), projection=Projection(aggregate="sum", key="gross", numeric=True)),
        'MATCH (a:Person {id: "p:keanu"})-[r1:ACTED_IN]->(n1:Movie) RETURN sum(toFloat(n1.gross)) AS sum',
        {(sum(float(MOVIES[m]["gross"]) for m in acted("p:keanu")),)},
    ),
    "text that holds numbers, ordered as numbers": (
        # as text '467.25' would come first
        Query(
            Pattern(KEANU, (ACTED,), 1), projection=Projection(("gross",)), order=Order("gross", numeric=True), limit=1
        ),
        'MATCH (a:Person {id: "p:keanu"})-[r1:ACTED_IN]->(n1:Movie) '
        "RETURN DISTINCT n1.id AS id, n1.gross AS gross ORDER BY toFloat(gross) ASC LIMIT 1",
        {min(((m, MOVIES[m]["gross"]) for m in acted("p:keanu")), key=lambda row: float(row[1]))},
    ),
    "the first nodes by text that holds numbers, not returned": (
        Query(Pattern(MOVIE_ROOT, (), 0), order=Order("gross", True, before=True, numeric=True), limit=2),
        "MATCH (n0:Movie) WITH DISTINCT n0 ORDER BY toFloat(n0.gross) DESC LIMIT 2 RETURN n0.id AS id",
        {(m,) for m in sorted(MOVIES, key=lambda m: float(MOVIES[m]["gross"]))[-2:]},
    ),
    "dates kept as text, before a date": (
        Query(Pattern(MOVIE_ROOT, (), 0), (Filter(0, "opened", "<", "2000-01-01"),)),
        'MATCH (n0:Movie) WHERE n0.opened < "2000-01-01" RETURN DISTINCT n0.id AS id',
        {(m,) for m, p in MOVIES.items() if p["opened"] < "2000-01-01"},
    ),
    "a label root asked for the root, filtered along the path": (
        Query(Pattern(PEOPLE_ROOT, (DIRECTS,), 0), (Filter(1, "released", "<", 2000),)),
        "MATCH (n0:Person)-[r1:DIRECTED]->(n1:Movie) WHERE n1.released < 2000 RETURN DISTINCT n0.id AS id",
        {(p,) for p, m in DIRECTED if MOVIES[m]["released"] < 2000},
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_each_form_renders_to_its_one_text(case):
    query, text, _ = CASES[case]
    assert render_query(query) == text
    assert Query.from_dict(query.to_dict()) == query


@pytest.mark.parametrize("case", CASES)
def test_each_form_returns_what_the_graph_holds(store, case):
    load(store)
    query, _, expected = CASES[case]
    rows = store.read(render_query(query, store.graph_label))
    columns = query.projection.aliases
    assert all(set(row) == set(columns) for row in rows)
    got = {tuple(row[c] for c in columns) for row in rows}
    assert got == expected and expected


def test_a_path_query_renders_as_the_pattern_does():
    """Renderer 3's path text is the language's node query: adapters trained on it still apply."""
    for pattern in (
        Pattern(KEANU, (ACTED,), 1),
        Pattern(KEANU, (ACTED, ACTED_BACK), 2),
        Pattern(KEANU, (ACTED, ACTED_BACK), 1, end_anchor=AnchorRef("p:carrie", ("Person",))),
    ):
        assert render_query(Query(pattern)) == render(pattern)


def test_columns_are_named_by_plain_identifiers():
    query = Query(
        Pattern(MOVIE_ROOT, (), 0), projection=Projection(("2nd title", "unit price")), order=Order("unit price")
    )
    assert render_query(query) == (
        "MATCH (n0:Movie) RETURN DISTINCT n0.id AS id, n0.`2nd title` AS v2nd_title, n0.`unit price` AS unit_price "
        "ORDER BY unit_price ASC"
    )
    assert alias("`odd`_") == "odd" and alias("%%") == "value"
    with pytest.raises(ValueError):  # two keys, one column name
        Projection(("unit price", "unit_price"))
    with pytest.raises(ValueError):  # in the order of their keys
        Projection(("name", "born"))


def test_literals_are_escaped_and_typed():
    assert literal('say "hi" \\ now') == '"say \\"hi\\" \\\\ now"'
    assert literal(True) == "true" and literal(3) == "3" and literal(3.0) == "3.0" and literal(2.5) == "2.5"
    with pytest.raises(ValueError):
        literal(float("nan"))
    query = Query(Pattern(MOVIE_ROOT, (), 0), (Filter(0, "title", "=", 'Dwayne "The Rock"'),))
    assert 'n0.title = "Dwayne \\"The Rock\\""' in render_query(query)


@pytest.mark.parametrize(
    "make",
    [
        lambda: Filter(0, "born", "LIKE", 3),  # not an operator of the language
        lambda: Filter(0, "born", "IS NULL", 3),  # a null test takes no value
        lambda: Filter(0, "title", "CONTAINS", 3),  # a text operator takes text
        lambda: Filter(0, "gross", "CONTAINS", "4", numeric=True),  # text read as a number is compared
        lambda: Filter(0, "gross", ">", "400", numeric=True),  # with a number
        lambda: Projection(aggregate="count", numeric=True),  # count reads no property
        lambda: Projection(("gross",), numeric=True),  # nor does a projection of ids
        lambda: Projection(("born",), aggregate="count"),
        lambda: Projection(aggregate="avg"),  # avg of what
        lambda: Projection(aggregate="count", key="born"),
        lambda: Projection(aggregate="max", key="born", every=True),  # every binding: count alone
        lambda: Query(Pattern(KEANU, (ACTED,), 1), (Filter(2, "born", "=", 1),)),  # no node 2
        lambda: Query(Pattern(KEANU, (ACTED,), 1), (Filter(2, "rating", "=", 1, relationship=True),)),
        lambda: Query(Pattern(KEANU, (ACTED,), 1), projection=Projection(aggregate="count", group=1)),
        lambda: Query(Pattern(KEANU, (ACTED,), 1), order=Order("born")),  # not returned
        lambda: Query(Pattern(KEANU, (ACTED,), 1), projection=Projection(aggregate="count"), order=Order("count")),
        lambda: Query(Pattern(KEANU, (ACTED,), 1), limit=0),
        lambda: Query(Pattern(KEANU, (ACTED,), 1), (Filter(1, "b", "=", 1), Filter(1, "a", "=", 1))),  # unordered
        lambda: Projection(aggregate="count", others=((0, None),)),  # an aggregate has nothing beside it
        # an order before the projection returns the target's ids and properties only
        lambda: Query(
            Pattern(PEOPLE_ROOT, (ACTED,), 1),
            projection=Projection(aggregate="count", group=0),
            order=Order("born", before=True),
            limit=1,
        ),
        lambda: Query(
            Pattern(PEOPLE_ROOT, (ACTED,), 1),
            projection=Projection(others=((0, None),)),
            order=Order("born", before=True),
            limit=1,
        ),
        lambda: Projection(others=((1, "born"), (0, "born"))),  # along the path
        lambda: Projection(("born_0",), others=((0, "born"),)),  # two columns of one name
        lambda: Query(Pattern(KEANU, (ACTED,), 1), projection=Projection(others=((1, None),))),  # the target
        lambda: Query(Pattern(KEANU, (ACTED,), 1), projection=Projection(others=((2, None),))),  # no node 2
        lambda: Projection(aggregate="count", edges=((1, "rating"),)),  # an aggregate has nothing beside it
        lambda: Projection(edges=((2, "rating"), (1, "rating"))),  # along the path
        lambda: Projection(aggregate="count", step=1),  # a relationship's aggregate takes a property
        lambda: Projection(aggregate="count", having=(">", 1)),  # groups kept: there are groups
        lambda: Projection(aggregate="count", group=0, having=("CONTAINS", 1)),
        lambda: Projection(aggregate="count", group=0, having=(">", "1")),  # compared with a number
        lambda: Projection(aggregate="count", group=0, hidden=True),  # only a kept group's aggregate is left out
        lambda: Projection(aggregate="count", group_key="country"),  # a group's property goes with a group
        lambda: Projection(group=0, group_key="country"),  # and with an aggregate
        lambda: Query(  # an aggregate not returned orders nothing
            Pattern(PEOPLE_ROOT, (DIRECTS,), 1),
            projection=Projection(aggregate="count", group=0, having=(">", 1), hidden=True),
            order=Order("count"),
        ),
        lambda: Projection(aggregate="max", key="rating", step=0),
        lambda: Query(
            Pattern(PEOPLE_ROOT, (REVIEWS,), 0), projection=Projection(aggregate="max", key="rating", step=1)
        ),
        lambda: Query(Pattern(JESSICA, (REVIEWS,), 1), projection=Projection(aggregate="max", key="rating", step=2)),
        lambda: Query(Pattern(JESSICA, (REVIEWS,), 1), projection=Projection(edges=((2, "rating"),))),  # no r2
        lambda: Query(Pattern(JESSICA, (REVIEWS,), 1), projection=Projection(edges=((0, "rating"),))),  # no r0
        lambda: Query(
            Pattern(PEOPLE_ROOT, (REVIEWS,), 1),
            projection=Projection(edges=((1, "rating"),)),
            order=Order("born", before=True),
            limit=1,
        ),
        lambda: Pattern(KEANU, (ACTED,), 0),  # an anchor with steps asks for what it reaches
        lambda: Pattern(KEANU, (ACTED,) * 4, 4),
        lambda: Pattern(KEANU, (), 0, end_anchor=LANA),
        lambda: Filter(0, "DIRECTED", "NOT EXISTS", "Movie"),  # an existence test has a direction
        lambda: Filter(0, "born", ">", 1960, outgoing=True),  # and only it
        lambda: Filter(1, "DIRECTED", "NOT EXISTS", "Movie", relationship=True, outgoing=True),  # on a node
        lambda: Pattern(PEOPLE_ROOT, (ACTED,), 1, closed=True),  # a closed path has two steps or more
        lambda: Pattern(PEOPLE_ROOT, (ACTED, ACTED_BACK), 2, closed=True),  # its last node is the root
        lambda: Pattern(PEOPLE_ROOT, (ACTED, REVIEWS), 1, closed=True),  # which must have the root's labels
        lambda: Query(Pattern(PEOPLE_ROOT, (ACTED, DIRECTED_BY), 1, closed=True), (Filter(2, "born", ">", 1),)),
    ],
)
def test_what_is_not_in_the_language_is_refused(make):
    with pytest.raises(ValueError):
        make()


def test_label_roots_come_back_to_the_root_along_another_relationship():
    """From the schema: two steps back to the root's label, asking for the root or the node
    between; never back over the same kind of relationship the other way round (two
    relationships between the same nodes), but a relationship between two nodes of one label
    may be walked on (each follows the other)."""
    from graphraft.graph.schema import GraphSchema, SchemaPattern
    from graphraft.synthesis.patterns import label_roots

    links = [("Person", "ACTED_IN", "Movie"), ("Person", "DIRECTED", "Movie"), ("Person", "FOLLOWS", "Person")]
    schema = GraphSchema(
        labels={"Person": 5, "Movie": 5},
        relationship_types={t: 1 for _, t, _ in links},
        patterns=[SchemaPattern(source=s, type=t, target=e, count=1) for s, t, e in links],
    )
    closed = {render(p) for p in label_roots(schema) if p.closed}
    assert render(Pattern(PEOPLE_ROOT, (ACTED, DIRECTED_BY), 1, closed=True)) in closed
    assert render(Pattern(PEOPLE_ROOT, (ACTED, DIRECTED_BY), 0, closed=True)) in closed
    assert "MATCH (n0:Movie)<-[r1:DIRECTED]-(n1:Person)-[r2:ACTED_IN]->(n0) RETURN DISTINCT n1.id AS id" in closed
    follows = Step("FOLLOWS", True, ("Person",))
    assert render(Pattern(PEOPLE_ROOT, (follows, follows), 1, closed=True)) in closed
    assert not any("[r1:ACTED_IN]->(n1:Movie)<-[r2:ACTED_IN]-" in text for text in closed)
    assert not any("[r1:FOLLOWS]->(n1:Person)<-[r2:FOLLOWS]-" in text for text in closed)
    # both orders of two kinds, two roots, two targets; and each way round the FOLLOWS loop
    assert len(closed) == 2 * 2 * 2 + 2 * 2


def test_label_roots_walk_two_steps_of_the_schema_to_any_of_their_nodes():
    """From the schema: two steps from a label, asking for any of the three nodes (the people
    who directed a movie someone acted in, those movies, the actors), the mirror of each walked
    from its other end too; never back over the same kind of relationship the other way round
    (another actor of the same movie is an entity's question)."""
    from graphraft.graph.schema import GraphSchema, SchemaPattern
    from graphraft.synthesis.patterns import label_roots

    links = [("Person", "ACTED_IN", "Movie"), ("Person", "DIRECTED", "Movie")]
    schema = GraphSchema(
        labels={"Person": 5, "Movie": 5},
        relationship_types={t: 1 for _, t, _ in links},
        patterns=[SchemaPattern(source=s, type=t, target=e, count=1) for s, t, e in links],
    )
    open_paths = [p for p in label_roots(schema) if len(p.steps) == 2 and not p.closed]
    texts = {render(p) for p in open_paths}
    for target in (0, 1, 2):
        assert render(Pattern(PEOPLE_ROOT, (ACTED, DIRECTED_BY), target)) in texts
    movies = AnchorRef(None, ("Movie",))
    assert render(Pattern(movies, (DIRECTED_BY, ACTED), 2)) in texts  # the same path from the movie
    assert not any("[r1:ACTED_IN]->(n1:Movie)<-[r2:ACTED_IN]-" in text for text in texts)
    # from a person: acted in or directed, then the other; from a movie: each kind, then the other
    assert len(open_paths) == len(texts) == (2 + 2) * 3


def _decisions(query: Query) -> list:
    """What L1 decides, in order: the root, each step and node, the target, each filter along
    the path, the projection, the order, the limit."""
    pattern = query.pattern
    out: list = [("root", pattern.anchor)]
    for index, step in enumerate(pattern.steps, 1):
        back = pattern.closed and index == len(pattern.steps)
        out += [("step", step.type, step.outgoing), ("the root again",) if back else ("node", step.labels)]
    out.append(("target", pattern.target))
    out += [("filter", f) for f in query.filters]
    projection = query.projection
    if query.order is not None and query.order.before:  # decided where the filters end
        out += [("order before", query.order), ("limit", query.limit), ("aggregate", *([None] * 7))]
        return out + [("property", key) for key in projection.properties] + [("end of properties",)]
    if projection.having is None:  # RETURN; groups kept by their aggregate begin WITH
        out += [("end of filters",)]
    out += [
        (
            "aggregate",
            projection.aggregate,
            projection.group,
            projection.group_key,
            projection.key,
            projection.step,
            projection.having,
            projection.every,
        )
    ]
    out += [("shown", not projection.hidden)] if projection.having is not None else []
    out += [("property", key) for key in projection.properties] + [("end of properties",)]
    out += [("other", item) for item in projection.others] + [("end of others",)]
    out += [("edge", item) for item in projection.edges] + [("end of edges",)]
    return out + [("order", query.order), ("limit", query.limit)]


def beside_of(pattern: Pattern) -> list[int]:
    return [n for n in pattern.nodes if n != pattern.target and pattern.variable(n) not in ("a", "b")]


def _queries() -> list[Query]:
    """Every combination of a few paths, filters, projections, orders and limits."""
    paths = [
        Pattern(KEANU, (), 0),
        Pattern(KEANU, (ACTED,), 1),
        Pattern(KEANU, (ACTED, ACTED_BACK), 2),
        Pattern(KEANU, (ACTED, ACTED_BACK), 1),
        Pattern(PEOPLE_ROOT, (), 0),
        Pattern(PEOPLE_ROOT, (ACTED,), 0),
        Pattern(PEOPLE_ROOT, (ACTED,), 1),
        Pattern(PEOPLE_ROOT, (ACTED, DIRECTED_BY), 1, closed=True),
        Pattern(PEOPLE_ROOT, (ACTED, ACTED_BACK), 1),
    ]
    found = []
    for pattern in paths:
        nodes = pattern.nodes
        filter_sets = (
            [()]
            + [sorted_filters(chosen) for chosen in ((Filter(n, "born", ">", 1960),) for n in nodes)]
            + [sorted_filters((Filter(0, "born", ">", 1960), Filter(n, "released", "=", 1999))) for n in nodes if n]
            + [(Filter(n, "DIRECTED", "NOT EXISTS", "Movie", outgoing=True),) for n in nodes if n == 0]
        )
        projections = [Projection(), Projection(("born",)), Projection(("born", "name")), Projection(aggregate="count")]
        projections += [Projection(aggregate="max", key="born")]
        if pattern.steps and pattern.target == len(pattern.steps) and not pattern.closed:
            projections += [Projection(aggregate="max", key="rating", step=1)]
            projections += (
                [Projection(aggregate="avg", key="rating", group=0, step=1)] if 0 in beside_of(pattern) else []
            )
        projections += [Projection(aggregate="count", group=g) for g in nodes if g != pattern.target]
        projections += [Projection(aggregate="count", group=g, every=True) for g in nodes if g != pattern.target]
        projections += [Projection(aggregate="count", every=True)] if pattern.steps else []
        projections += [
            Projection(aggregate="count", group=g, having=(">", 1), hidden=hidden)
            for g in beside_of(pattern)
            for hidden in (True, False)
        ]
        free = [n for n in nodes if pattern.variable(n) not in ("a", "b")]  # per a value of a node's property
        projections += [Projection(aggregate="count", group=g, group_key="country") for g in free]
        projections += [
            Projection(aggregate="max", key="born", group=g, group_key="country", having=(">", 1), hidden=hidden)
            for g in free
            for hidden in (True, False)
        ]
        beside = [n for n in nodes if n != pattern.target and pattern.variable(n) not in ("a", "b")]
        projections += [Projection(others=((n, None),)) for n in beside]
        projections += [Projection(("born",), others=((n, None), (n, "born"))) for n in beside]
        steps = range(1, len(pattern.steps) + 1)
        projections += [Projection(edges=((s, "rating"),)) for s in steps]
        projections += [Projection(others=((n, None),), edges=((1, "rating"), (1, "roles"))) for n in beside[:1]]
        for filters, projection in product(filter_sets, projections):
            orders = [None] + [Order(column, d) for column in projection.columns[1:] for d in (False, True)]
            if projection.aggregate and projection.group is None:
                orders = [None]
            for order, limit in product(orders, (None, 3)):
                found.append(Query(pattern, filters, projection, order, limit))
            plain = not projection.others and not projection.edges
            if projection.aggregate is None and plain and pattern.target != 0:
                for key, descending in product(("born", "name"), (False, True)):
                    found.append(Query(pattern, filters, projection, Order(key, descending, before=True), 3))
    return found


def test_query_text_is_decided_left_to_right():
    """For every pair of queries, the texts agree up to where their decisions first differ:
    nothing is written for a decision before the decisions before it are all written."""
    queries = _queries()
    texts = [render_query(q) for q in queries]
    assert len(set(texts)) == len(queries) > 300
    decisions = [_decisions(q) for q in queries]
    written = [_written(q) for q in queries]
    assert all(w[-1] == len(t) for w, t in zip(written, texts))
    # what the decisions two queries share wrote is the same text: of the queries that share their
    # first k decisions, each one's text once they are made is where all their texts still agree
    # (the same check as over every pair, in time linear in the queries for each k)
    for k in range(1, max(map(len, decisions))):
        groups: dict[tuple, list[int]] = {}
        for i, made in enumerate(decisions):
            if len(made) > k:
                groups.setdefault(tuple(made[:k]), []).append(i)
        for members in groups.values():
            # where all their texts agree: where the first and the last in sorted order do
            first, last = min(texts[i] for i in members), max(texts[i] for i in members)
            agree = next((c for c, (a, b) in enumerate(zip(first, last)) if a != b), len(first))
            worst = max(members, key=lambda i: written[i][k - 1])
            if written[worst][k - 1] > agree:
                other = next(
                    j for j in members if texts[j][: written[worst][k - 1]] != texts[worst][: written[worst][k - 1]]
                )
                pytest.fail(f"decided alike, written differently: {texts[worst]!r} and {texts[other]!r}")


def _written(query: Query) -> list[int]:
    """How many characters of the query's text are written once each decision is made."""
    from graphraft.synthesis.language import filter_piece, returns_piece
    from graphraft.synthesis.patterns import path_conditions, path_text

    pattern = query.pattern
    path = path_text(pattern)
    out = [i + 1 for i, c in enumerate(path) if c in ")]"]  # the root, each step and node
    length = len(path)
    conditions = path_conditions(pattern)
    if conditions:
        length += len(" WHERE " + " AND ".join(conditions))
    out.append(length)  # the target
    for item in query.filters:
        length += len(filter_piece(query, item, first=not conditions))
        conditions = conditions + [item]
        out.append(length)
    target = pattern.variable(pattern.target)
    projection = query.projection
    if query.order is not None and query.order.before:
        order = query.order
        length += len(f" WITH DISTINCT {target} ORDER BY {target}.{order.by} {'DESC' if order.descending else 'ASC'}")
        out.append(length)  # the order before
        length += len(f" LIMIT {query.limit}")
        out.append(length)
        length += len(f" RETURN {target}.id AS id")
        out.append(length)
        for key in projection.properties:
            length += len(f", {target}.{key} AS {alias(key)}")
            out.append(length)
        return out + [length]  # the end of the properties
    having = projection.having is not None
    if not having:
        length += len(" RETURN ")
        out.append(length)  # the end of the filters
    length += len(returns_piece(query)) - (0 if having else len(" RETURN "))
    out.append(length)
    if having:  # the aggregate beside the groups it kept, or not
        length += 0 if projection.hidden else len(f", {projection.aggregate} AS {projection.aggregate}")
        out.append(length)
    for key in projection.properties:
        length += len(f", {target}.{key} AS {alias(key)}")
        out.append(length)
    out.append(length)  # the end of the properties
    for node, key in projection.others:
        length += len(f", {pattern.variable(node)}.{key or 'id'} AS {key or 'id'}_{node}")
        out.append(length)
    out.append(length)  # the end of the others
    for step, key in projection.edges:
        length += len(f", r{step}.{key} AS {key}_r{step}")
        out.append(length)
    out.append(length)  # the end of the edges
    if query.order is not None:
        length += len(f" ORDER BY {alias(query.order.by)} {'DESC' if query.order.descending else 'ASC'}")
    out.append(length)
    if query.limit is not None:
        length += len(f" LIMIT {query.limit}")
    out.append(length)
    return out


def test_retrieval_keeps_a_querys_rows_and_its_nodes(store):
    """What runs for a query of the language: its rows by column (values kept), node ids where it
    returns nodes, rows in its own order where it has one."""
    from graphraft.inference.generation import GeneratedQuery
    from graphraft.inference.retrieval import execute

    load(store)
    count, _, _ = CASES["a count"]
    ordered, _, _ = CASES["order and limit"]
    grouped, _, _ = CASES["a maximum per node"]
    queries = [GeneratedQuery(render_query(q), -float(i), i, q) for i, q in enumerate((count, ordered, grouped))]
    runs = execute(store, queries).runs
    assert runs[0].rows == [{"count": len(acted("p:keanu"))}] and runs[0].node_ids == []
    newest = sorted(((MOVIES[m]["released"], m) for p, m in DIRECTED if p == "p:lana"), reverse=True)[:2]
    assert runs[1].rows == [{"id": m, "released": year} for year, m in newest]  # ORDER BY released DESC
    assert runs[1].node_ids == [m for _, m in newest]
    assert [row["id"] for row in runs[2].rows] == sorted({p for p, _ in ACTED_IN}) == sorted(runs[2].node_ids)


def test_no_target_counted_per_a_text_no_two_targets_share(store, monkeypatch):
    """A text no two nodes share (a title, a name; a tagline some movies lack) is unique in the
    schema, checked over every node and not only the sample. The target's own count or property
    per such a text is a group per target (its count 1, its average the target's own value: a
    filter in disguise), which the language does not write; other nodes grouped by it, every time
    the path reaches the target and the target's relationships per it stay (reviews per title)."""
    import graphraft.graph.store as store_module
    from graphraft.graph.records import NodeRecord

    load(store)
    studios = {f"s:{n}": {"name": n, "city": "Burbank"} for n in ("Warner", "Disney", "Pixar")}
    store.load_nodes([NodeRecord(i, ("Studio",), dict(p)) for i, p in studios.items()])
    facts = {"Person": PEOPLE, "Movie": MOVIES, "Studio": studios}

    def shared(label: str, key: str) -> bool:
        values = [node[key] for node in facts[label].values() if key in node]
        return len(set(values)) < len(values)

    schema = store.schema(refresh=True)
    people, movies = schema.properties["Person"], schema.properties["Movie"]
    assert people["name"].unique and movies["title"].unique and movies["tagline"].unique
    assert not people["country"].unique and not people["born"].unique  # Canada twice; a number: groups are by text
    monkeypatch.setattr(store_module, "PROFILE_SAMPLE", 1)  # a sample of one node: its values are all distinct
    sampled = store.schema(refresh=True)
    texts = [
        (label, key) for label, found in sampled.properties.items() for key, i in found.items() if i.type == "string"
    ]
    assert ("Studio", "city") in texts  # one the sample alone would call unique
    assert all(sampled.properties[label][key].unique == (not shared(label, key)) for label, key in texts)
    clauses = ClauseSpace(schema, question_literals("how many movies per title or per country"))
    for pattern in (Pattern(PEOPLE_ROOT, (ACTED,), 1), Pattern(PEOPLE_ROOT, (ACTED,), 0)):
        grouped = [p for p, _ in clauses.projections(pattern) if p.group is not None]
        keys = {(p.group, p.group_key) for p in grouped}
        assert (0, "country") in keys and (1 - pattern.target, None) in keys  # the other node, itself
        # the target's own count or property per its title: one target a group (a count of 1)
        own = [p for p in grouped if p.group == pattern.target and p.group_key in ("name", "title", "tagline")]
        assert own and all(p.every or p.step is not None for p in own)
        assert any(p.group != pattern.target and p.group_key in ("name", "title") for p in grouped)
    # per title, every time the path reaches the movie, and its relationships' property: these say
    # something (the reviews of each movie, their average rating)
    reviewed = Pattern(PEOPLE_ROOT, (REVIEWS,), 1)
    per_title = {(p.aggregate, p.key, p.every) for p, _ in clauses.projections(reviewed) if p.group_key == "title"}
    assert ("count", None, True) in per_title and ("avg", "rating", False) in per_title
    assert ("count", None, False) not in per_title and ("max", "released", False) not in per_title


def test_text_that_holds_numbers_or_dates_is_found_in_the_schema(store):
    """A graph loaded from CSV keeps numbers and dates as text: the schema says which text holds
    numbers (compared and aggregated with toFloat) and which dates (compared in their order);
    text of whole numbers alone (codes, ids) and free text stay text."""
    from graphraft.graph.schema import date_text, numeric_text

    load(store)
    movies = store.schema().properties["Movie"]
    assert movies["gross"].type == "string" and movies["gross"].numeric and not movies["gross"].dates
    assert movies["opened"].dates and not movies["opened"].numeric
    assert not movies["title"].numeric and not movies["title"].dates and not movies["released"].numeric
    assert numeric_text(["32.38", "5", " 0.5", ""]) and not numeric_text(["1", "10", "2"])  # codes stay text
    assert not numeric_text(["32.38", "n/a"]) and not numeric_text(["nan", "1.5"]) and not numeric_text([1.5])
    # a placeholder where the source had no date ('NULL') among many dates, not among few
    assert date_text(["1996-07-04 00:00:00.000"] * 9 + ["NULL"]) and not date_text(["1996-07-04", "NULL"])
    assert not date_text(["1996", "1997"]) and not date_text(["19960704"])
