"""Enumeration templates against a hand-counted graph; every count is checked against the
rendered query run in the database, so enumeration and renderer cannot drift apart."""

from __future__ import annotations

import pytest

from graphraft.synthesis.enumeration import HOP_TEMPLATES, PatternEnumerator, PatternStats
from graphraft.synthesis.patterns import AnchorRef, Pattern, Step
from graphraft.synthesis.ranking import rank, select

from movie_graph import load

HANKS = AnchorRef("p1", ("Person",))
DRAMA = AnchorRef("g1", ("Genre",))


def by_shape(enumeration):
    return {p.pattern.shape: (p.total, p.hits) for p in enumeration.patterns}


def assert_rendered_counts_match(store, enumeration):
    for stats in enumeration.patterns:
        rows = store.read(stats.cypher)
        assert len(rows) == stats.total, stats.cypher


def test_one_hop(store):
    load(store)
    found = PatternEnumerator(store).around(HANKS, 1, answer_names=["Big", "Cast Away"])
    assert by_shape(found) == {"(:Person)<-[:STARRED_ACTORS]-(*:Movie)": (3, 2)}
    assert_rendered_counts_match(store, found)


def test_two_hop_uses_no_relationship_twice(store):
    load(store)
    found = PatternEnumerator(store).around(HANKS, 2, answer_ids=["p3"])
    assert by_shape(found) == {
        "(:Person)<-[:STARRED_ACTORS]-(:Movie)-[:DIRECTED_BY]->(*:Person)": (2, 1),
        "(:Person)<-[:STARRED_ACTORS]-(:Movie)-[:HAS_GENRE]->(*:Genre)": (1, 0),
        "(:Person)<-[:STARRED_ACTORS]-(:Movie)-[:STARRED_ACTORS]->(*:Person)": (1, 0),
    }
    assert_rendered_counts_match(store, found)


def test_two_hop_never_returns_the_anchor(store):
    load(store)
    # Contact is directed *and* written by Zemeckis: the anchor is reachable by a second edge.
    found = PatternEnumerator(store).around(AnchorRef("m4", ("Movie",)), 2)
    assert all(p.total > 0 for p in found.patterns)
    assert "(:Movie)-[:DIRECTED_BY]->(:Person)<-[:WRITTEN_BY]-(*:Movie)" not in by_shape(found)
    assert by_shape(found)["(:Movie)-[:DIRECTED_BY]->(:Person)<-[:DIRECTED_BY]-(*:Movie)"] == (2, 0)
    assert_rendered_counts_match(store, found)


def test_three_hop(store):
    load(store)
    found = PatternEnumerator(store).around(HANKS, 3, answer_names=["Contact"])
    counts = by_shape(found)
    # Hanks' films -> their directors -> the directors' other films: m3 via m1, m1 via m3, m4 via both.
    key = "(:Person)<-[:STARRED_ACTORS]-(:Movie)-[:DIRECTED_BY]->(:Person)<-[:DIRECTED_BY]-(*:Movie)"
    assert counts[key] == (3, 1)
    assert_rendered_counts_match(store, found)


def test_bridge_between_two_anchors(store):
    load(store)
    found = PatternEnumerator(store).between(DRAMA, HANKS, answer_names=["Cast Away", "Forrest Gump"])
    assert [(p.cypher, p.total, p.hits) for p in found.patterns] == [
        (
            'MATCH (a:Genre {id: "g1"})<-[r1:HAS_GENRE]-(n1:Movie)-[r2:STARRED_ACTORS]->(b:Person {id: "p1"}) '
            "RETURN DISTINCT n1.id AS id",
            2,
            2,
        )
    ]
    assert_rendered_counts_match(store, found)


def test_a_bridge_is_rooted_at_the_anchor_mentioned_first(store):
    """Not by the anchors' ids: the text L1 writes follows the question's order of mentions,
    so one wording is always written the same way round."""
    load(store)
    enumerator = PatternEnumerator(store)
    for first, second in ((HANKS, DRAMA), (DRAMA, HANKS)):
        bridges = [
            p.pattern for p in enumerator.all_patterns([first, second], max_hops=1).patterns if p.pattern.end_anchor
        ]
        assert bridges and all((p.anchor, p.end_anchor) == (first, second) for p in bridges)
        assert all(
            p.cypher.startswith(f'MATCH (a:{first.labels[0]} {{id: "{first.id}"}})')
            for p in enumerator.between(first, second).patterns
        )


def test_hub_cap_skips_busy_nodes_and_says_so(store):
    load(store)
    capped = PatternEnumerator(store, fanout_cap=2).around(HANKS, 2)
    assert capped.patterns == [] and capped.hubs_skipped == 3
    uncapped = PatternEnumerator(store, fanout_cap=3).around(HANKS, 2)
    assert len(uncapped.patterns) == 3 and uncapped.hubs_skipped == 0


def test_a_timed_out_template_is_reported_not_raised(store):
    load(store)
    found = PatternEnumerator(store, timeout_ms=1).around(HANKS, 3)
    # 1 ms is too short on most machines but not all, and either of the two templates may be the one
    # that runs out: whichever does is named with its anchor, and the other still runs.
    assert set(found.timeouts) <= {f"p1 / {HOP_TEMPLATES[3]}", "p1 / hubs_skipped"}
    assert found.queries == 2


def _stats(name, hits, total, hops=1):
    steps = tuple(Step("R", True, ("X",)) for _ in range(hops))
    return PatternStats(Pattern(AnchorRef(name, ("A",)), steps, hops), total, hits)


def test_ranking_most_hits_then_fewest_results_then_fewest_hops():
    patterns = [_stats("a", 2, 10), _stats("b", 3, 50), _stats("c", 3, 5, hops=2), _stats("d", 3, 5), _stats("e", 0, 1)]
    ranked = rank(patterns, n_answers=3)
    assert [r.stats.pattern.anchor.id for r in ranked] == ["d", "c", "b", "a", "e"]
    assert ranked[0].recall == 1.0 and ranked[0].precision == pytest.approx(0.6)
    best, alternatives = select(ranked, min_recall=1.0, alternatives=1)
    assert best.stats.pattern.anchor.id == "d" and [a.stats.pattern.anchor.id for a in alternatives] == ["c"]
    assert select(ranked, min_recall=1.0, min_precision=0.7) == (None, [])
    best, _ = select(ranked, min_recall=0.5, min_precision=0.2)
    assert best.stats.pattern.anchor.id == "d"
