"""The GraphStore contract, run against every backend available (see conftest)."""

from __future__ import annotations

import time

import pytest

from graphraft.deadline import Deadline, within
from graphraft.errors import DeadlineExceededError, QueryError, QueryTimeoutError, ReadOnlyViolationError
from graphraft.graph.records import NodeRecord, RelationshipRecord

# far more rows than any machine counts in a few seconds: only a limit can end it
COUNT_FOREVER = "UNWIND range(1, 1000000) AS a UNWIND range(1, 1000000) AS b RETURN count(*) AS c"
NODES = [
    NodeRecord("m1", ("Movie",), {"name": "Cast Away", "year": 2000}),
    NodeRecord("m2", ("Movie",), {"name": "Big"}),
    NodeRecord("p1", ("Person",), {"name": "Tom Hanks"}),
    NodeRecord("p2", ("Person",), {"name": "Penny Marshall"}),
    NodeRecord("p3", ("Person",), {"name": "Robert Zemeckis"}),
    NodeRecord("g1", ("Genre",), {"name": "Drama"}),
]
RELS = [
    RelationshipRecord("m1", "p1", "STARRED_ACTORS"),
    RelationshipRecord("m2", "p1", "STARRED_ACTORS"),
    RelationshipRecord("m2", "p2", "DIRECTED_BY"),
    RelationshipRecord("m1", "p3", "DIRECTED_BY", {"credited": True}),
    RelationshipRecord("m1", "g1", "HAS_GENRE"),
]


def load_sample(store):
    store.load_nodes(NODES)
    return store.load_relationships(RELS)


def test_loading_twice_duplicates_nothing(store):
    first_nodes = store.load_nodes(NODES)
    first_rels = store.load_relationships(RELS)
    assert first_nodes.writes.nodes_created == 6
    assert first_rels.writes.relationships_created == 5

    second_nodes = store.load_nodes(NODES)
    second_rels = store.load_relationships(RELS)
    assert second_nodes.writes.nodes_created == 0 and second_rels.writes.relationships_created == 0
    assert not second_nodes.writes.changed and not second_rels.writes.changed
    assert store.count_nodes() == 6
    assert store.count_relationships() == 5


def test_relationships_to_unknown_ids_are_counted_not_created(store):
    store.load_nodes(NODES)
    report = store.load_relationships([RelationshipRecord("m1", "nobody", "DIRECTED_BY"), *RELS])
    assert report.missing_endpoints == 1
    assert store.count_relationships() == 5


def test_an_id_reloaded_under_other_labels_is_refused(store):
    store.load_nodes(NODES)
    with pytest.raises(QueryError, match="ids must be unique"):
        store.load_nodes([NodeRecord("m1", ("Person",), {"name": "Cast Away"})])
    assert store.count_nodes() == 6


def test_schema_lists_labels_types_and_patterns_with_counts(store):
    load_sample(store)
    schema = store.schema()
    assert schema.labels == {"Genre": 1, "Movie": 2, "Person": 3}
    assert schema.relationship_types == {"DIRECTED_BY": 2, "HAS_GENRE": 1, "STARRED_ACTORS": 2}
    assert {(p.source, p.type, p.target, p.count) for p in schema.patterns} == {
        ("Movie", "DIRECTED_BY", "Person", 2),
        ("Movie", "HAS_GENRE", "Genre", 1),
        ("Movie", "STARRED_ACTORS", "Person", 2),
    }


def test_schema_is_cached_until_the_graph_changes(store):
    load_sample(store)
    first = store.schema()
    assert store.schema() is first  # in memory
    store.invalidate_schema()
    from_disk = store.schema()
    assert from_disk == first and from_disk is not first
    store.load_nodes([NodeRecord("y1", ("Year",), {"name": "2000"})])
    assert store.schema().labels["Year"] == 1


WRITES = [
    "CREATE (:Movie {name: 'x'})",
    "MERGE (:Movie {name: 'y'})",
    "MATCH (n) DETACH DELETE n",
    "MATCH (n:Movie) SET n.hacked = 1",
    "MATCH (n:Movie) REMOVE n.name",
    "CREATE INDEX FOR (n:Movie) ON (n.year)",
]


def test_read_path_refuses_writes(store):
    load_sample(store)
    writes = list(WRITES)
    if store.__class__.__name__ == "FalkorDBStore":  # a write through a procedure
        writes.append("CALL db.idx.fulltext.createNodeIndex('Movie', 'name')")
    for write in writes:
        with pytest.raises(ReadOnlyViolationError):
            store.read(write)
    # a write smuggled in as a second statement is refused, one way or the other
    with pytest.raises((ReadOnlyViolationError, QueryError)):
        store.read("MATCH (n) RETURN n; CREATE (:Movie {name: 'z'})")
    assert store.count_nodes() == 6
    assert store.read("MATCH (n:Movie) WHERE n.hacked IS NOT NULL OR n.name IS NULL RETURN count(n) AS c")[0]["c"] == 0
    assert store.read("MATCH (n:Movie) RETURN count(n) AS c")[0]["c"] == 2


def test_free_text_on_the_read_path_may_only_read_the_graph(store, tmp_path):
    """`graphraft query` and a model's free query: the database's plan is checked first, since
    the read-only modes let LOAD CSV (a file read) and procedure calls through."""
    load_sample(store)
    secret = tmp_path / "secret.csv"
    secret.write_text("password\nhunter2\n")
    refused = [
        f"LOAD CSV FROM 'file://{secret}' AS row RETURN row[0] AS id",
        "LOAD CSV FROM 'http://127.0.0.1:9/x.csv' AS row RETURN row[0] AS id",
        "CALL db.labels() YIELD label RETURN label AS id",
        *WRITES,
    ]
    for query in refused:
        with pytest.raises((ReadOnlyViolationError, QueryError)):
            store.read_untrusted(query)
    with pytest.raises(ReadOnlyViolationError, match="LOAD CSV"):
        store.read_untrusted(refused[0])
    assert store.read_untrusted("MATCH (n:Movie) RETURN n.id AS id ORDER BY id") == [{"id": "m1"}, {"id": "m2"}]
    assert store.count_nodes() == 6


def test_four_parallel_reads_on_one_store_each_get_their_own_rows(store):
    from concurrent.futures import ThreadPoolExecutor

    load_sample(store)
    names = [node.properties["name"] for node in NODES]
    with ThreadPoolExecutor(4) as pool:
        rows = list(
            pool.map(lambda name: store.read("MATCH (n {name: $name}) RETURN n.id AS id", {"name": name}), names * 4)
        )
    assert rows == [[{"id": node.id}] for node in NODES] * 4


@pytest.mark.parametrize("label", ["Film Noir", "Фильм", "映画", "Genre-2"])
def test_labels_with_spaces_or_other_scripts_load_and_query(store, label):
    store.load_nodes([NodeRecord("x1", (label,), {"name": "odd label"})])
    store.load_relationships([RelationshipRecord("x1", "x1", f"{label} LINK")])
    assert store.schema().labels == {label: 1}
    assert store.schema().relationship_types == {f"{label} LINK": 1}


@pytest.mark.parametrize(
    "name",
    [
        'He said "hi"',
        "O'Brien \\ back\\slash",
        "Zoë Ærø 東京 🎬",
        "tab\tand\nnewline",
        '"}) MATCH (n) DETACH DELETE n //',
    ],
)
def test_awkward_values_round_trip(store, name):
    store.load_nodes([NodeRecord("odd", ("Thing",), {"name": name, "note": name})])
    row = store.read("MATCH (n:Thing {id: $id}) RETURN n.name AS name, n.note AS note", {"id": "odd"})[0]
    assert row == {"name": name, "note": name}
    assert store.read("MATCH (n:Thing) WHERE n.name = $name RETURN n.id AS id", {"name": name}) == [{"id": "odd"}]


def test_nodes_by_name_ignores_case_accents_and_spacing(store):
    store.load_nodes([NodeRecord("z", ("Person",), {"name": "Zoë  Saldaña"}), *NODES])
    assert [r["id"] for r in store.nodes_by_name("zoe saldana")] == ["z"]
    assert store.nodes_by_name("nobody at all") == []


def test_a_query_past_its_timeout_raises_a_clear_error(store):
    load_sample(store)
    with pytest.raises(QueryTimeoutError, match="exceeded its 50 ms limit"):
        # far more rows than any machine counts in 50 ms: only the limit can end it
        store.read(COUNT_FOREVER, timeout_ms=50)
    # the store still works afterwards
    assert store.read("RETURN 1 AS one") == [{"one": 1}]


def test_the_deadline_in_force_cuts_every_read_and_says_where_it_was_reached(store):
    load_sample(store)
    deadline = Deadline(0.5, "answering the question")
    deadline.check("finding the entities")
    started = time.monotonic()
    expected = r"0\.5s limit \(reached while finding the entities"
    with within(deadline), pytest.raises(DeadlineExceededError, match=expected):
        store.read(COUNT_FOREVER)  # its own limit is the store's 10 s: the deadline's is shorter
    assert time.monotonic() - started < 2.5
    # outside the block the call's own limit holds again, and running out of it is not the deadline's doing
    with pytest.raises(QueryTimeoutError) as raised:
        store.read(COUNT_FOREVER, timeout_ms=50)
    assert not isinstance(raised.value, DeadlineExceededError)


def test_enumeration_stops_at_the_deadline_instead_of_recording_a_timeout(store):
    from graphraft.synthesis.enumeration import PatternEnumerator
    from graphraft.synthesis.patterns import AnchorRef

    load_sample(store)
    anchor = AnchorRef(NODES[0].id, NODES[0].labels)
    assert PatternEnumerator(store).all_patterns([anchor]).candidates  # something to enumerate
    spent = Deadline(0.0)
    with within(spent), pytest.raises(DeadlineExceededError, match="took longer than its 0s limit"):
        PatternEnumerator(store).all_patterns([anchor])


def test_vector_search_finds_a_misspelled_name(store, embedder):
    from graphraft.graph.embeddings import embed_missing_names

    load_sample(store)
    assert embed_missing_names(store, embedder) == 6
    assert embed_missing_names(store, embedder) == 0  # idempotent
    hits = store.nearest_names(embedder.embed(["tom hank"])[0], k=3)
    best, similarity = hits[0]
    assert best["name"] == "Tom Hanks" and best["labels"] == ["Person"]
    assert similarity > 0.8
    assert similarity > hits[1][1]


def test_vector_search_returns_k_names_after_the_embedded_nodes_are_written_again(store, embedder):
    """A reload that changes the nodes' other properties leaves FalkorDB 4.16's index with a stale
    vector for each (FalkorDB#2197); the search still returns the nearest k, the same as before."""
    from dataclasses import replace

    from graphraft.graph.embeddings import embed_missing_names

    load_sample(store)
    embed_missing_names(store, embedder)
    vector = embedder.embed(["tom hank"])[0]
    before = store.nearest_names(vector, k=3)
    for round_ in range(3):
        store.load_nodes([replace(node, properties={**node.properties, "edition": round_}) for node in NODES])
    assert embed_missing_names(store, embedder) == 0  # the names did not change
    after = store.nearest_names(vector, k=3)
    assert len(after) == 3
    assert [row["id"] for row, _ in after] == [row["id"] for row, _ in before]
    assert after[0][0]["name"] == "Tom Hanks"
    every = [similarity for _, similarity in store.nearest_names(vector, k=6)]
    assert len(every) == 6 and every == sorted(every, reverse=True)  # all six, nearest first


def test_a_renamed_node_is_updated_and_embedded_again(store, embedder):
    from graphraft.graph.embeddings import embed_missing_names

    load_sample(store)
    embed_missing_names(store, embedder)
    report = store.load_nodes([NodeRecord("p1", ("Person",), {"name": "Thomas Hanks"}), *NODES[:2]])
    assert report.writes.properties_set > 0 and report.writes.nodes_created == 0
    assert embed_missing_names(store, embedder) == 1
    assert store.nearest_names(embedder.embed(["thomas hanks"])[0], k=1)[0][0]["id"] == "p1"


def test_a_graph_loaded_by_hand_with_a_repeated_id_is_refused_when_prepared(store):
    """The unique-id constraint cannot be built: an error naming the cause, not a silence."""
    from graphraft.errors import QueryError
    from graphraft.graph.cypher_text import label_expression

    node = f"(n{label_expression((store.entity_label, 'Person'))} {{id: 'x', name: $name}})"
    store.write(f"CREATE {node}", {"name": "Ann"})
    store.write(f"CREATE {node}", {"name": "Bob"})
    with pytest.raises(QueryError, match=r"node ids are not unique in .*; cannot add the id constraint"):
        store.prepare_names()


def test_embeddings_for_a_node_not_in_the_graph_are_an_error_not_a_silence(store, embedder):
    from graphraft.errors import QueryError

    load_sample(store)
    vector = embedder.embed(["Tom Hanks"])[0]
    with pytest.raises(QueryError, match="1 of 2 nodes"):
        store.set_embeddings([("p1", vector), ("no-such-node", vector)])
    assert [name for _, name in store.nodes_without_embedding()].count("Tom Hanks") == 0


def test_nodes_by_id_returns_labels_and_properties_without_the_embedding(store, embedder):
    from graphraft.graph.embeddings import embed_missing_names

    load_sample(store)
    embed_missing_names(store, embedder)
    (row,) = store.nodes_by_id(["m1"])
    assert row["labels"] == ["Movie"]
    assert row["properties"]["name"] == "Cast Away" and row["properties"]["year"] == 2000
    assert "embedding" not in row["properties"]
