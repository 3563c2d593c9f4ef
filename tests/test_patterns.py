"""The one renderer: canonical, escaped, deterministic Cypher."""

from __future__ import annotations

import pytest

from graphraft.synthesis.patterns import AnchorRef, Pattern, Step, render

HANKS = AnchorRef("person:Tom Hanks", ("Person",))


def test_one_hop_renders_canonically():
    pattern = Pattern(HANKS, (Step("STARRED_ACTORS", False, ("Movie",)),), target=1)
    assert render(pattern) == (
        'MATCH (a:Person {id: "person:Tom Hanks"})<-[:STARRED_ACTORS]-(t:Movie) RETURN DISTINCT t.id AS id'
    )


def test_multi_hop_is_one_path_and_excludes_the_anchor_only_when_labels_allow():
    to_year = Pattern(HANKS, (Step("STARRED_ACTORS", False, ("Movie",)), Step("RELEASE_YEAR", True, ("Year",))), 2)
    assert render(to_year) == (
        'MATCH (a:Person {id: "person:Tom Hanks"})<-[:STARRED_ACTORS]-(:Movie)'
        "-[:RELEASE_YEAR]->(t:Year) RETURN DISTINCT t.id AS id"
    )
    co_star = Pattern(HANKS, (Step("STARRED_ACTORS", False, ("Movie",)), Step("STARRED_ACTORS", True, ("Person",))), 2)
    assert render(co_star).endswith("(t:Person) WHERE t <> a RETURN DISTINCT t.id AS id")
    assert render(co_star).count("MATCH") == 1


def test_bridge_names_both_anchors():
    genre = AnchorRef("genre:Drama", ("Genre",))
    pattern = Pattern(
        HANKS,
        (Step("STARRED_ACTORS", False, ("Movie",)), Step("HAS_GENRE", True, ("Genre",))),
        target=1,
        end_anchor=genre,
    )
    assert render(pattern) == (
        'MATCH (a:Person {id: "person:Tom Hanks"})<-[:STARRED_ACTORS]-(t:Movie)'
        '-[:HAS_GENRE]->(b:Genre {id: "genre:Drama"}) RETURN DISTINCT t.id AS id'
    )


def test_quotes_backslashes_and_odd_identifiers_are_escaped():
    anchor = AnchorRef('p:Dwayne "The Rock" \\ Jr.', ("Person Of Interest",))
    pattern = Pattern(anchor, (Step("ACTED IN", True, ("Movie`s",)),), 1)
    assert render(pattern) == (
        'MATCH (a:`Person Of Interest` {id: "p:Dwayne \\"The Rock\\" \\\\ Jr."})'
        "-[:`ACTED IN`]->(t:`Movie``s`) RETURN DISTINCT t.id AS id"
    )


def test_patterns_round_trip_through_dicts_and_render_the_same():
    pattern = Pattern(
        HANKS, (Step("A", True, ("X", "Y")), Step("B", False, ("Z",))), 1, end_anchor=AnchorRef("z", ("Z",))
    )
    again = Pattern.from_dict(pattern.to_dict())
    assert again == pattern and render(again) == render(pattern)


@pytest.mark.parametrize(
    "steps, target, end",
    [((), 1, None), ((Step("A", True, ("X",)),), 2, None), ((Step("A", True, ("X",)),), 1, AnchorRef("b", ("X",)))],
)
def test_invalid_patterns_are_refused(steps, target, end):
    with pytest.raises(ValueError):
        Pattern(HANKS, steps, target, end)


def test_three_hop_names_relationships_that_could_be_walked_twice():
    pattern = Pattern(
        HANKS,
        (
            Step("STARRED_ACTORS", False, ("Movie",)),
            Step("DIRECTED_BY", True, ("Person",)),
            Step("DIRECTED_BY", False, ("Movie",)),
        ),
        3,
    )
    assert render(pattern) == (
        'MATCH (a:Person {id: "person:Tom Hanks"})<-[:STARRED_ACTORS]-(:Movie)'
        "-[r2:DIRECTED_BY]->(:Person)<-[r3:DIRECTED_BY]-(t:Movie) WHERE r2 <> r3 "
        "RETURN DISTINCT t.id AS id"
    )
    # different types (or ends) cannot share a relationship: nothing to say
    other = Pattern(
        HANKS,
        (
            Step("STARRED_ACTORS", False, ("Movie",)),
            Step("DIRECTED_BY", True, ("Person",)),
            Step("WRITTEN_BY", False, ("Movie",)),
        ),
        3,
    )
    assert "WHERE" not in render(other)
