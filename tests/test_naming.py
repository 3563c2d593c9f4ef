"""A name per label: `title` names a Movie, `productName` a Product; anchoring, the schema, the
name embeddings, answers and evidence all take the name the rule gives (graph/naming.py), and
a user's choice for a label overrides it. On both stores."""

from __future__ import annotations

import pytest

from graphraft.graph.naming import NamingRule
from graphraft.graph.records import NodeRecord, RelationshipRecord

NODES = [
    NodeRecord("m1", ("Movie",), {"title": "The Matrix", "released": 1999}),
    NodeRecord("m2", ("Movie",), {"title": "Speed", "released": 1994}),
    NodeRecord("p1", ("Person",), {"name": "Keanu Reeves", "born": 1964}),
    NodeRecord("x1", ("Product",), {"productName": "Chai", "unitPrice": 18.0, "quantityPerUnit": "10 boxes"}),
    NodeRecord("s1", ("Supplier",), {"companyName": "Exotic Liquids", "contactName": "Charlotte Cooper"}),
    NodeRecord("e1", ("Employee",), {"firstName": "Nancy", "lastName": "Davolio"}),
    NodeRecord("o1", ("Order",), {"orderID": 10248, "shipCity": "Reims"}),
]
RELS = [
    RelationshipRecord("p1", "m1", "ACTED_IN", {"roles": ["Neo"]}),
    RelationshipRecord("p1", "m2", "ACTED_IN"),
    RelationshipRecord("s1", "x1", "SUPPLIES"),
]


@pytest.mark.parametrize(
    "label, keys, expected",
    [
        ("Person", ["born", "name"], "name"),
        ("Movie", ["released", "tagline", "title"], "title"),
        ("Product", ["productName", "quantityPerUnit", "unitPrice"], "productName"),
        ("Category", ["CategoryName", "description"], "CategoryName"),  # the label's own, in any case
        ("Supplier", ["companyName", "contactName", "country"], "companyName"),  # the first *name
        ("Order", ["orderID", "shipCity"], None),
        ("Thing", ["name_norm", "name_text", "embedding", "id"], None),  # GraphRAFT's own never name
    ],
)
def test_the_rule_picks_the_property_that_names_a_label(label, keys, expected):
    assert NamingRule().property_for(label, keys) == expected


def test_a_given_property_wins_and_a_node_of_several_labels_takes_the_first_that_names_it():
    rule = NamingRule({"Employee": "lastName"})
    assert rule.property_for("Employee", ["firstName", "lastName"]) == "lastName"
    assert rule.name_of(("Employee", "Person"), {"lastName": "Davolio", "name": "N. Davolio"}) == "Davolio"
    # a label whose property is absent on this node gives way to the next label, then to name/title
    assert rule.name_of(("Employee",), {"title": "Sales Representative"}) == "Sales Representative"
    assert rule.name_of(("Order",), {"orderID": 10248}) is None


def test_nodes_are_anchored_answered_and_embedded_by_the_name_their_label_has(store):
    store.load_nodes(NODES)
    store.load_relationships(RELS)
    schema = store.schema(refresh=True)
    assert schema.names == {
        "Employee": "firstName",
        "Movie": "title",
        "Order": None,
        "Person": "name",
        "Product": "productName",
        "Supplier": "companyName",
    }
    # each label's properties with their types, and the values of a few-valued one
    movie = schema.properties["Movie"]
    assert set(movie) == {"released", "title"} and "name_text" not in schema.properties["Person"]
    assert (movie["released"].type, movie["released"].values) == ("integer", [1994, 1999])
    assert (movie["title"].type, movie["title"].sampled) == ("string", 2)
    assert schema.properties["Product"]["unitPrice"].type == "float"
    assert schema.relationship_properties == {
        "ACTED_IN": {"roles": schema.relationship_properties["ACTED_IN"]["roles"]}
    }
    assert schema.relationship_properties["ACTED_IN"]["roles"].type == "list"
    # exact anchoring by title and by productName, the name as the graph writes it
    assert [(r["id"], r["name"]) for r in store.nodes_by_name("the matrix")] == [("m1", "The Matrix")]
    assert [(r["id"], r["name"]) for r in store.nodes_by_name("CHAI")] == [("x1", "Chai")]
    assert [r["id"] for r in store.names_containing(["exotic"])] == ["s1"]
    assert "the matrix" in store.name_counts() and store.nodes_by_name("10248") == []
    # what gets embedded: every named node by its name, the unnamed Order not at all
    assert dict(store.nodes_without_embedding()) == {
        "m1": "The Matrix",
        "m2": "Speed",
        "p1": "Keanu Reeves",
        "x1": "Chai",
        "s1": "Exotic Liquids",
        "e1": "Nancy",
    }
    assert {row["id"]: row["name"] for row in store.nodes_by_id(["m1", "o1"])} == {"m1": "The Matrix", "o1": None}


def test_a_changed_choice_renames_the_nodes_and_drops_their_stale_embedding(store, embedder):
    from graphraft.graph.embeddings import embed_missing_names

    store.load_nodes(NODES)
    embed_missing_names(store, embedder)
    assert store.nodes_without_embedding() == []
    store.naming = NamingRule({"Employee": "lastName"})
    assert store.prepare_names() == 1  # Nancy Davolio only
    assert [r["id"] for r in store.nodes_by_name("Davolio")] == ["e1"] and store.nodes_by_name("Nancy") == []
    assert store.nodes_without_embedding() == [("e1", "Davolio")]
    assert store.prepare_names() == 0  # nothing left to change


def test_answers_and_evidence_show_a_movie_by_its_title(store, tiny, graphraft_home):
    from graphraft.config import load_settings
    from graphraft.inference.pipeline import GraphRAFT
    from graphraft.synthesis.mentions import MarkedMentionExtractor

    store.load_nodes(NODES)
    store.load_relationships(RELS)
    model, tokenizer = tiny
    settings = load_settings(home=graphraft_home, embedder="none")
    engine = GraphRAFT(settings, store=store, model=model, tokenizer=tokenizer, extractor=MarkedMentionExtractor())
    answer = engine.ask("which movies did [Keanu Reeves] act in", max_hops=1)
    assert answer.anchors[0]["id"] == "p1"
    assert {(a.id, a.name) for a in answer.answers} == {("m1", "The Matrix"), ("m2", "Speed")}
    assert "The Matrix" in answer.evidence and "title" not in answer.evidence  # the title is its name, once
    answer = engine.ask("who acted in [The Matrix]", max_hops=1)
    assert answer.anchors[0]["id"] == "m1" and answer.anchors[0]["name"] == "The Matrix"
    assert [(a.id, a.name) for a in answer.answers] == [("p1", "Keanu Reeves")]
