"""A small movie graph whose facts live in properties (born, released, ratings), as Neo4j's own
movies graph keeps them; tests compute what a query should return from these lists in Python."""

from graphraft.graph.records import NodeRecord, RelationshipRecord

PEOPLE = {
    "p:keanu": {"name": "Keanu Reeves", "born": 1964, "country": "Canada"},
    "p:carrie": {"name": "Carrie-Anne Moss", "born": 1967, "country": "Canada"},
    "p:lana": {"name": "Lana Wachowski", "born": 1965, "country": "USA"},
    "p:tom": {"name": "Tom Hanks", "born": 1956, "country": "USA"},
    "p:jessica": {"name": "Jessica Thompson"},  # born unknown, country unknown
}
MOVIES = {
    "m:matrix": {"title": "The Matrix", "released": 1999, "tagline": "Welcome to the Real World"},
    "m:reloaded": {"title": "The Matrix Reloaded", "released": 2003, "tagline": "Free your mind"},
    "m:johnny": {"title": "Johnny Mnemonic", "released": 1995},
    "m:castaway": {"title": "Cast Away", "released": 2000, "tagline": "At the edge of the world"},
    "m:cloud": {"title": "Cloud Atlas", "released": 2012, "tagline": "Everything is connected"},
    "m:thatthing": {"title": "That Thing You Do", "released": 1996},  # Tom Hanks acted in it and directed it
}
# as a graph loaded from CSV keeps them: numbers and dates as text (the box office in millions;
# the day it opened; fractions a float of single precision holds exactly, as FalkorDB's toFloat reads text)
for movie, (gross, opened) in {
    "m:matrix": ("467.25", "1999-03-31"),
    "m:reloaded": ("741.75", "2003-05-15"),
    "m:johnny": ("52.5", "1995-05-26"),
    "m:castaway": ("429.5", "2000-12-22"),
    "m:cloud": ("130.25", "2012-10-26"),
    "m:thatthing": ("34", "1996-10-04"),
}.items():
    MOVIES[movie] |= {"gross": gross, "opened": opened}
ACTED_IN = [
    ("p:keanu", "m:matrix"),
    ("p:keanu", "m:reloaded"),
    ("p:keanu", "m:johnny"),
    ("p:carrie", "m:matrix"),
    ("p:carrie", "m:reloaded"),
    ("p:tom", "m:castaway"),
    ("p:tom", "m:cloud"),
    ("p:tom", "m:thatthing"),
]
DIRECTED = [("p:lana", "m:matrix"), ("p:lana", "m:reloaded"), ("p:lana", "m:cloud"), ("p:tom", "m:thatthing")]
REVIEWED = [("p:jessica", "m:matrix", 95), ("p:jessica", "m:cloud", 68), ("p:jessica", "m:reloaded", 61)]

NODES = [NodeRecord(i, ("Person",), dict(p)) for i, p in PEOPLE.items()] + [
    NodeRecord(i, ("Movie",), dict(m)) for i, m in MOVIES.items()
]
RELS = (
    [RelationshipRecord(p, m, "ACTED_IN") for p, m in ACTED_IN]
    + [RelationshipRecord(p, m, "DIRECTED") for p, m in DIRECTED]
    + [RelationshipRecord(p, m, "REVIEWED", {"rating": r}) for p, m, r in REVIEWED]
)


def load(store):
    store.load_nodes(NODES)
    store.load_relationships(RELS)
