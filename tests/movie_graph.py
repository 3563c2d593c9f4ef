"""A small hand-made movie graph whose patterns are counted by hand in the tests."""

from graphraft.graph.records import NodeRecord, RelationshipRecord

ROCK = 'person:Dwayne "The Rock" Johnson \\ Jr.'  # an id that needs escaping

NODES = [
    NodeRecord("m1", ("Movie",), {"name": "Cast Away"}),
    NodeRecord("m2", ("Movie",), {"name": "Big"}),
    NodeRecord("m3", ("Movie",), {"name": "Forrest Gump"}),
    NodeRecord("m4", ("Movie",), {"name": "Contact"}),
    NodeRecord("p1", ("Person",), {"name": "Tom Hanks"}),
    NodeRecord("p2", ("Person",), {"name": "Penny Marshall"}),
    NodeRecord("p3", ("Person",), {"name": "Robert Zemeckis"}),
    NodeRecord("g1", ("Genre",), {"name": "Drama"}),
    NodeRecord("g2", ("Genre",), {"name": "Science Fiction"}),
    # the same name under two labels: an ambiguous mention
    NodeRecord("b1", ("Book",), {"name": "Contact"}),
    NodeRecord(ROCK, ("Person",), {"name": 'Dwayne "The Rock" Johnson \\ Jr.'}),
]
RELS = [
    RelationshipRecord("m1", "p1", "STARRED_ACTORS"),
    RelationshipRecord("m2", "p1", "STARRED_ACTORS"),
    RelationshipRecord("m3", "p1", "STARRED_ACTORS"),
    RelationshipRecord("m1", "p3", "DIRECTED_BY"),
    RelationshipRecord("m2", "p2", "DIRECTED_BY"),
    RelationshipRecord("m3", "p3", "DIRECTED_BY"),
    RelationshipRecord("m4", "p3", "DIRECTED_BY"),
    RelationshipRecord("m4", "p3", "WRITTEN_BY"),
    RelationshipRecord("m1", "g1", "HAS_GENRE"),
    RelationshipRecord("m3", "g1", "HAS_GENRE"),
    RelationshipRecord("m4", "g2", "HAS_GENRE"),
    RelationshipRecord("m2", ROCK, "STARRED_ACTORS"),
]


def load(store):
    store.load_nodes(NODES)
    store.load_relationships(RELS)
