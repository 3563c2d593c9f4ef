"""The same queries on FalkorDB and on Neo4j over the same graph must return the same rows.

The graph is small, seeded and awkward on purpose: labels and types that need backticks,
names with quotes, backslashes, other scripts and Cypher in them, nodes with two labels,
relationships of one type in both directions (so that a path could walk one relationship
twice, which Cypher forbids and FalkorDB does not check by itself). Compared:

- the enumeration templates around every node (1, 2, 3 hops) and between every pair of nodes
  two steps apart: the same patterns with the same counts;
- every enumerated pattern rendered with every target position (what synthesis, training and
  ask produce), run in its executable form: the same ids;
- the store's own reads: schema, name dictionary, name lookups, text match, nodes by id.

A difference is fixed in the renderer or the store, not here; the last test shows the check
failing on a deliberate one (the renderer without its ``rN <> rM`` conditions)."""

from __future__ import annotations

import json
import random
import re
import uuid

import pytest

from graphraft.graph.records import NodeRecord, RelationshipRecord
from graphraft.synthesis import patterns as renderer
from graphraft.synthesis.enumeration import PatternEnumerator
from graphraft.synthesis.patterns import Pattern, executable

pytestmark = pytest.mark.neo4j

LABELS = [("Person",), ("Film Noir",), ("Фильм", "Movie"), ("Genre-2",)]
TYPES = ["KNOWS", "HAS GENRE", "ACTED-IN"]  # a backtick in a name: refused by the loaders
NAMES = ['He said "hi"', "O'Brien \\ back\\slash", "Zoë 東京 🎬", "line\nbreak", '"}) MATCH (n) DETACH DELETE n //']


def awkward_graph(seed: int = 7, size: int = 16) -> tuple[list[NodeRecord], list[RelationshipRecord]]:
    rng = random.Random(seed)
    nodes = [
        NodeRecord(
            f"n{i}:{NAMES[i % len(NAMES)][:6]}",
            LABELS[i % len(LABELS)],
            {"name": f"{NAMES[i % len(NAMES)]} {i // len(NAMES)}", "rank": i},
        )
        for i in range(size)
    ]
    rels = set()
    while len(rels) < size * 2:
        a, b = rng.sample(range(size), 2)
        rels.add((nodes[a].id, nodes[b].id, rng.choice(TYPES)))
    # one node two KNOWS relationships away from the same neighbour in both directions
    rels |= {(nodes[0].id, nodes[4].id, "KNOWS"), (nodes[8].id, nodes[4].id, "KNOWS")}
    relationships = [RelationshipRecord(s, t, ty, {"w": i}) for i, (s, t, ty) in enumerate(sorted(rels))]
    return nodes, relationships


@pytest.fixture(scope="module")
def both(server, neo4j_server):
    """The awkward graph in a FalkorDB graph and in a Neo4j graph of this module's own."""
    graph = f"diff-{uuid.uuid4().hex[:8]}"
    stores = [server.store(graph), neo4j_server.store(graph)]
    nodes, rels = awkward_graph()
    for store in stores:
        store.clear()
        store.load_nodes(nodes)
        store.load_relationships(rels)
    yield stores
    for store in stores:
        store.clear()
        store.close()


def enumerated(store, nodes) -> dict[str, tuple[Pattern, int]]:
    """Every pattern the templates find around each node and between nodes two steps apart."""
    enumerator = PatternEnumerator(store)
    refs = {n.id: renderer.AnchorRef(n.id, n.labels) for n in nodes}
    found = {}
    for ref in refs.values():
        for stats in enumerator.all_patterns([ref], max_hops=3, bridges=False).patterns:
            found[stats.cypher] = (stats.pattern, stats.total)
    pairs = sorted({(a, b) for a in refs for b in refs if a < b})
    for a, b in pairs:
        for stats in enumerator.between(refs[a], refs[b]).patterns:
            found[stats.cypher] = (stats.pattern, stats.total)
    return found


#: the condition that keeps the target off an anchor (``n2 <> a``)
TARGET_CONDITION = re.compile(r"n\d+ <> [ab]")


def form(pattern: Pattern) -> tuple:
    """What decides how a pattern is written: hops, directions, target, bridge or not, its
    conditions (the target against an anchor, ``n2 <> a``; which ``rN <> rM``) and whether a name
    needs back-quotes."""
    text = renderer.render(pattern)
    where = text.split(" WHERE ")[1].split(" RETURN")[0].split(" AND ") if " WHERE " in text else []
    quoted = any("`" in renderer.render(Pattern(pattern.anchor, (step,), 1)) for step in pattern.steps)
    directions = tuple(step.outgoing for step in pattern.steps)
    conditions = tuple(c for c in where if not TARGET_CONDITION.fullmatch(c))
    bridge, guarded = pattern.end_anchor is not None, any(TARGET_CONDITION.fullmatch(c) for c in where)
    return (pattern.hops, directions, pattern.target, bridge, conditions, guarded, quoted)


def every_target(patterns, per_form: int = 2) -> list[Pattern]:
    """Each pattern with its target at every node after the anchor (a bridge's target stays),
    ``per_form`` of each way of writing one (the first in text order): every form the renderer
    has, on real anchors, without running thousands of near-copies."""
    by_form: dict[tuple, list[Pattern]] = {}
    for pattern in sorted(patterns, key=renderer.render):
        targets = [pattern.target] if pattern.end_anchor is not None else range(1, pattern.hops + 1)
        for target in targets:
            variant = Pattern(pattern.anchor, pattern.steps, target, pattern.end_anchor)
            kept = by_form.setdefault(form(variant), [])
            if len(kept) < per_form and variant not in kept:
                kept.append(variant)
    return [p for kept in by_form.values() for p in kept]


def differences(first, second, patterns) -> dict[str, tuple[list, list]]:
    """Rendered queries whose rows differ between the two stores."""
    found = {}
    for pattern in patterns:
        rows = [sorted(r["id"] for r in store.read(executable(pattern, store))) for store in (first, second)]
        if rows[0] != rows[1]:
            found[renderer.render(pattern)] = tuple(rows)
    return found


def test_enumeration_finds_the_same_patterns_with_the_same_counts(both):
    falkor, neo = both
    nodes, _ = awkward_graph()
    on_falkor, on_neo = enumerated(falkor, nodes), enumerated(neo, nodes)
    assert len(on_falkor) > 300  # hops 1-3, both directions, bridges
    assert {c: t for c, (_, t) in on_falkor.items()} == {c: t for c, (_, t) in on_neo.items()}


def test_every_rendered_shape_returns_the_same_rows_on_both_stores(both):
    falkor, neo = both
    nodes, _ = awkward_graph()
    patterns = every_target(p for p, _ in enumerated(falkor, nodes).values())
    rendered = [renderer.render(p) for p in patterns]
    # the shapes cover what the renderer can write: every hop count and target position,
    # bridges, relationship conditions, the target-anchor condition, back-quoted names
    assert {p.hops for p in patterns} == {1, 2, 3} and {p.target for p in patterns} == {1, 2, 3}
    assert any(p.end_anchor for p in patterns) and any("r1 <> r2" in q for q in rendered)
    assert any(re.search(r"WHERE n\d <> a", q) for q in rendered) and any("`" in q for q in rendered)
    assert differences(falkor, neo, patterns) == {}
    # and the rows are not all empty: the comparison has something to compare
    assert sum(bool(falkor.read(executable(p, falkor))) for p in patterns) > len(patterns) / 2


def test_the_stores_own_reads_agree(both, embedder):
    falkor, neo = both
    assert falkor.schema(refresh=True).model_dump(exclude={"seconds"}) == neo.schema(refresh=True).model_dump(
        exclude={"seconds"}
    )
    assert falkor.name_counts() == neo.name_counts()
    assert (falkor.count_nodes(), falkor.count_relationships()) == (neo.count_nodes(), neo.count_relationships())
    nodes, _ = awkward_graph()
    for node in nodes[:6]:
        name = node.properties["name"]
        assert falkor.nodes_by_name(name) == neo.nodes_by_name(name)
        assert sorted(r["id"] for r in falkor.names_containing(name.split()[:1])) == sorted(
            r["id"] for r in neo.names_containing(name.split()[:1])
        )
    ids = [n.id for n in nodes]
    assert sorted(json.dumps(r, sort_keys=True) for r in falkor.nodes_by_id(ids)) == sorted(
        json.dumps(r, sort_keys=True) for r in neo.nodes_by_id(ids)
    )


def test_the_check_fails_on_a_deliberate_difference(both, monkeypatch):
    """Without its ``rN <> rM`` conditions the renderer lets FalkorDB walk one relationship
    twice where Neo4j will not: the differential check must see it."""
    falkor, neo = both
    nodes, _ = awkward_graph()
    patterns = every_target(p for p, _ in enumerated(falkor, nodes).values())
    conditioned = [p for p in patterns if "r1 <> r2" in renderer.render(p) or "r2 <> r3" in renderer.render(p)]
    assert conditioned
    monkeypatch.setattr(renderer, "_reusable_pairs", lambda pattern: [])
    assert differences(falkor, neo, conditioned) != {}


def test_names_resolve_to_the_same_anchors_on_both_stores(both, embedder):
    """Exact names, names with a typo and loosely written ones: the same anchors, found the
    same way (exact index, Neo4j's and FalkorDB's vector indexes, the character match)."""
    from graphraft.graph.embeddings import embed_missing_names
    from graphraft.synthesis.resolution import EntityResolver

    for store in both:
        assert embed_missing_names(store, embedder) == 16 and store.has_vector_index()
    nodes, _ = awkward_graph()
    names = [n.properties["name"] for n in nodes[:8]]
    mentions = names + [name[:3] + name[4:] for name in names] + [name.upper().replace(" ", "  ") for name in names]
    found = []
    for store in both:
        resolver = EntityResolver(store, lambda: embedder)
        found.append([[(a.id, a.method, round(a.score, 2)) for a in resolver.resolve(m)] for m in mentions])
    assert found[0] == found[1]
    methods = {method for anchors in found[0] for _, method, _ in anchors}
    assert {"exact", "fuzzy"} <= methods or {"exact", "vector"} <= methods


def test_retrieval_returns_a_querys_nodes_in_the_same_order_on_both_stores(both):
    """The stores return a query's rows in orders of their own; what `ask` retrieves (the nodes
    in order, hence the answers ranked without L2 and L2's evidence) must not depend on them."""
    from graphraft.inference.generation import GeneratedQuery
    from graphraft.inference.retrieval import execute

    falkor, neo = both
    nodes, _ = awkward_graph()
    patterns = every_target(p for p, _ in enumerated(falkor, nodes).values())
    many = [p for p in patterns if len(falkor.read(executable(p, falkor))) >= 2]  # an order to compare
    assert len(many) >= 5
    raw_orders_differ = 0
    for pattern in many:
        text = renderer.render(pattern)
        raw = [[r["id"] for r in store.read(executable(pattern, store))] for store in (falkor, neo)]
        raw_orders_differ += raw[0] != raw[1]
        found = [execute(store, [GeneratedQuery(text, 0.0, 0)], patterns={text: pattern}) for store in (falkor, neo)]
        assert found[0].order == found[1].order and found[0].runs[0].node_ids == found[1].runs[0].node_ids
        assert sorted(raw[0]) == found[0].order
    assert raw_orders_differ > 0  # the stores do order rows differently: the check has teeth
