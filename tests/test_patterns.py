"""The one renderer: canonical, escaped, deterministic Cypher."""

from __future__ import annotations

import pytest

from graphraft.synthesis.patterns import AnchorRef, Pattern, Step, render

HANKS = AnchorRef("person:Tom Hanks", ("Person",))


def test_one_hop_renders_canonically():
    pattern = Pattern(HANKS, (Step("STARRED_ACTORS", False, ("Movie",)),), target=1)
    assert render(pattern) == (
        'MATCH (a:Person {id: "person:Tom Hanks"})<-[r1:STARRED_ACTORS]-(n1:Movie) RETURN DISTINCT n1.id AS id'
    )


def test_multi_hop_is_one_path_and_excludes_the_anchor_only_when_labels_allow():
    to_year = Pattern(HANKS, (Step("STARRED_ACTORS", False, ("Movie",)), Step("RELEASE_YEAR", True, ("Year",))), 2)
    assert render(to_year) == (
        'MATCH (a:Person {id: "person:Tom Hanks"})<-[r1:STARRED_ACTORS]-(n1:Movie)'
        "-[r2:RELEASE_YEAR]->(n2:Year) RETURN DISTINCT n2.id AS id"
    )
    co_star = Pattern(HANKS, (Step("STARRED_ACTORS", False, ("Movie",)), Step("STARRED_ACTORS", True, ("Person",))), 2)
    assert render(co_star).endswith("(n2:Person) WHERE n2 <> a RETURN DISTINCT n2.id AS id")
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
        'MATCH (a:Person {id: "person:Tom Hanks"})<-[r1:STARRED_ACTORS]-(n1:Movie)'
        '-[r2:HAS_GENRE]->(b:Genre {id: "genre:Drama"}) RETURN DISTINCT n1.id AS id'
    )


def test_quotes_backslashes_and_odd_identifiers_are_escaped():
    anchor = AnchorRef('p:Dwayne "The Rock" \\ Jr.', ("Person Of Interest",))
    pattern = Pattern(anchor, (Step("ACTED IN", True, ("Movie`s",)),), 1)
    assert render(pattern) == (
        'MATCH (a:`Person Of Interest` {id: "p:Dwayne \\"The Rock\\" \\\\ Jr."})'
        "-[r1:`ACTED IN`]->(n1:`Movie``s`) RETURN DISTINCT n1.id AS id"
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


def test_every_relationship_is_named_and_those_that_could_be_walked_twice_are_kept_apart():
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
        'MATCH (a:Person {id: "person:Tom Hanks"})<-[r1:STARRED_ACTORS]-(n1:Movie)'
        "-[r2:DIRECTED_BY]->(n2:Person)<-[r3:DIRECTED_BY]-(n3:Movie) WHERE r2 <> r3 "
        "RETURN DISTINCT n3.id AS id"
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


def _decisions(pattern: Pattern) -> list:
    """What L1 decides, in the order a question tells it: the anchor, then each step and the
    node it reaches (its labels; whether it is the second anchor), then which node is asked
    for, once the whole path is known."""
    out: list = [("anchor", pattern.anchor)]
    last = len(pattern.steps)
    for index, step in enumerate(pattern.steps, 1):
        out.append(("step", step.type, step.outgoing))
        end = pattern.end_anchor if index == last else None
        out.append(("node", step.labels, end))
    return out + [("target", pattern.target)]


def _all_patterns() -> list[Pattern]:
    """Every pattern over a small schema with reusable relationships: 1-3 hops, each target,
    and bridges."""
    from itertools import product

    steps = [Step(t, out, labels) for t, out, labels in product(("A", "B"), (True, False), (("X",), ("Y",)))]
    anchor, other = AnchorRef("x1", ("X",)), AnchorRef("y1", ("Y",))
    found = []
    for hops in (1, 2, 3):
        for path in product(steps, repeat=hops):
            for target in range(1, hops + 1):
                found.append(Pattern(anchor, path, target))
    for path in product(steps, repeat=2):
        if path[1].labels == other.labels:
            found.append(Pattern(anchor, path, 1, end_anchor=other))
    return found


def test_text_is_decided_left_to_right():
    """For every pair of candidates, the texts agree up to the first part where their structures
    differ: no part of the text depends on what comes after it, so L1 decides each part where the
    question tells it. (Naming a relationship only when a later step could reuse it broke this:
    a 2-hop path and its 3-hop extensions differed at the first `[`; so did marking the target
    where the path reached it: a 1-hop path and its extensions differed at `(t:` against `(:`.)"""
    patterns = _all_patterns()
    texts = [render(p) for p in patterns]
    decisions = [_decisions(p) for p in patterns]
    assert len(set(texts)) == len(patterns) > 500
    for i in range(len(patterns)):
        for j in range(i + 1, len(patterns)):
            same = next(k for k, (a, b) in enumerate(zip(decisions[i], decisions[j])) if a != b)
            shared = texts[i][: next((k for k, (a, b) in enumerate(zip(texts[i], texts[j])) if a != b), None)]
            # each decided part of the path ends with `)` (a node) or `]` (a relationship)
            parts = shared.count(")") + shared.count("]")
            assert parts >= same, (texts[i], texts[j])
