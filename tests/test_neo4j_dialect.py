"""Every query GraphRAFT can send to Neo4j, checked by Neo4j's own Cypher parser and semantic
analysis (the npm package @neo4j-cypher/language-support, pinned in tests/neo4j_dialect/;
`make test` installs it): every shape the renderer produces (1/2/3 hops, bridges, the
``rN <> rM`` and ``t <> a`` conditions, names with quotes, backslashes and other scripts,
labels and types that need backticks), the enumeration templates, and every read, write and
admin query the Neo4j store sends. No Neo4j server is needed; none runs on these machines."""

from __future__ import annotations

import contextlib
import itertools
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from subprocess import PIPE

import pytest

from graphraft.errors import GraphNotFoundError
from graphraft.graph.naming import NamingRule
from graphraft.graph.neo4j_store import Neo4jStore, clear_query, index_name
from graphraft.graph.records import NodeRecord, RelationshipRecord, WriteStats, graph_label
from graphraft.synthesis.from_graph import GenerationConfig, GraphQuestionGenerator
from graphraft.synthesis.patterns import AnchorRef, Pattern, Step, render
from graphraft.synthesis.templates import template

CHECKER = Path(__file__).parent / "neo4j_dialect"

NAMES = [
    "Tom Hanks",
    'He said "hi"',
    "O'Brien \\ back\\slash",
    "Zoë 東京 🎬",
    "line\nbreak",
    '"}) MATCH (n) DETACH DELETE n //',
]
LABELS = [("Person",), ("Film Noir",), ("Фильм", "Movie"), ("Genre-2",)]
TYPES = ["STARRED_ACTORS", "HAS GENRE", "DIRECTED_BY", "x`y".replace("`", "")]


def lint(items: list[dict], processes: int = 2) -> list[list[str]]:
    """Each item's errors, the items split among ``processes`` parsers run side by side."""
    if shutil.which("node") is None or not (CHECKER / "node_modules").is_dir():
        pytest.skip("the Neo4j parser is not installed: `make test` runs npm ci in tests/neo4j_dialect")
    size = -(-len(items) // processes)
    chunks = [items[i : i + size] for i in range(0, len(items), size)]
    found: list[list[str]] = []
    with contextlib.ExitStack() as files:
        procs = []
        for chunk in chunks:  # each reads its items from a file, so that all run at once
            source = files.enter_context(tempfile.TemporaryFile("w+", encoding="utf-8"))
            json.dump(chunk, source)
            source.seek(0)
            command = ["node", "lint.mjs"]
            procs.append(subprocess.Popen(command, stdin=source, stdout=PIPE, stderr=PIPE, text=True, cwd=CHECKER))
        for proc in procs:
            stdout, stderr = proc.communicate(timeout=600)
            assert proc.returncode == 0, stderr
            found += json.loads(stdout)
    return found


def skeleton(text: str) -> str:
    """A query's text with its literals, plain keys, labels and variables' numbers blurred: two
    queries of one skeleton are built by the same clauses (the parser need read only one)."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', "S", text)
    text = re.sub(r"\b\d+(\.\d+)?\b", "N", text)
    text = re.sub(r"\b(n|r)N\b", r"\1", text)
    text = re.sub(r":[A-Za-z_]+", ":L", text)
    text = re.sub(r"\.[a-z_]+", ".k", text)
    return re.sub(r"\b(ASC|DESC)\b", "D", text)


def rendered_shapes() -> list[str]:
    """The renderer's output over hops, directions, targets, bridges, repeated types (which
    add ``rN <> rM``), targets that may equal an anchor (``t <> a``) and awkward names."""
    queries = set()
    for hops in (1, 2, 3):
        for types in itertools.product(TYPES[:2], repeat=hops):
            for outgoing in itertools.product((True, False), repeat=hops):
                for target in range(1, hops + 1):
                    steps = tuple(
                        Step(t, o, LABELS[(i + 1) % len(LABELS)]) for i, (t, o) in enumerate(zip(types, outgoing))
                    )
                    anchor = AnchorRef(f"person:{NAMES[(hops + target) % len(NAMES)]}", LABELS[hops % len(LABELS)])
                    queries.add(render(Pattern(anchor, steps, target)))
                    if target < hops:  # the path ends at a second anchor: a bridge
                        end = AnchorRef(f"b:{NAMES[target]}", steps[-1].labels)
                        queries.add(render(Pattern(anchor, steps, target, end)))
    # every awkward name as an anchor id, and a target whose labels allow it to be the anchor
    for name in NAMES:
        anchor = AnchorRef(name, ("Person",))
        queries.add(render(Pattern(anchor, (Step("KNOWS", True, ("Person",)),), 1)))
    return sorted(queries)


def language_shapes() -> list[str]:
    """The language's clauses over paths: every combination test_language builds, and filters,
    properties and orders on keys that need backticks with literals that need escaping."""
    from test_language import _queries

    from graphraft.synthesis.language import Filter, Order, Projection, Query, render_query

    queries, seen = set(), set()
    for text in map(render_query, _queries()):
        # a query whose path, conditions or returned part (RETURN or WITH, ORDER BY, LIMIT) is of a
        # skeleton not yet read: each part's text comes from its own clauses, and the parser reads
        # every skeleton of each (not every product of them: thousands of queries)
        path, conditions, returned = re.fullmatch(r"(MATCH .*?)(?: WHERE (.*?))?( (?:RETURN|WITH) .*)", text).groups()
        parts = {(0, skeleton(path)), (1, skeleton(conditions or "")), (2, skeleton(returned))}
        if not parts <= seen:
            queries.add(text)
            seen |= parts
    path = Pattern(AnchorRef(None, ("Film Noir",)), (Step("HAS GENRE", True, ("Genre-2",)),), 1)
    for name in NAMES:
        for op in ("=", "<>", "CONTAINS", "STARTS WITH"):
            filters = (Filter(0, "original title", op, name), Filter(1, "since", "<", 1950, relationship=True))
            queries.add(render_query(Query(path, filters, Projection(("unit price",)), Order("unit price", True), 5)))
    queries.add(render_query(Query(path, (Filter(1, "weight", ">=", 2.5),), Projection(aggregate="avg", key="weight"))))
    queries.add(render_query(Query(path, (), Projection(aggregate="sum", key="unit price", group=0), Order("sum"))))
    return sorted(queries)


class RecordingNeo4jStore(Neo4jStore):
    """The Neo4j store's own methods, with reads and writes recorded instead of sent (the
    query text is what is checked; no database answers)."""

    def __init__(self):  # no driver: nothing is sent
        self.query_timeout_ms, self.batch_size, self.cache_dir, self._schema = 10_000, 5_000, None, None
        self._name_counts = None
        # a given naming property too: its text goes into the prepare query
        self.naming = NamingRule({"Film Noir": "original title"})
        self.write_timeout_ms, self.database, self.description = 300_000, None, "recording"
        self.identity = self.server = self.description
        self.graph_name, self.catalog = "Film Noir's", None
        self.entity_label = self.graph_label = graph_label(self.graph_name)
        self.vector_index = index_name("vector", self.graph_name)
        self.sent: list[dict] = []

    def _read(self, query, params, timeout_ms):
        self.sent.append({"query": query, "parameters": params or {}})
        if "RETURN key, value" in query:  # a property with one value: its values are asked for too
            return [{"key": "year", "value": 1950}]
        if "labels(a) AS source" in query:
            return [{"source": ["Film Noir"], "target": ["Film Noir"], "c": 1}]
        if "RETURN label, count" in query:
            return [{"label": "Film Noir", "c": 1}]
        if "AS type, count" in query or "type(r) AS type" in query:
            return [{"type": "HAS GENRE", "c": 1}]
        if "AS key" in query or "AS degree" in query:
            return []
        if "count(" in query:
            return [{"c": 1}]
        if "AS current" in query:  # a node whose name is to be prepared: the write is sent too
            return [{"id": "n1", "labels": ["Film Noir"], "current": None, "key": None, "props": [["name", "Zoë"]]}]
        if "db.labels()" in query:
            return [{"label": "Film Noir"}]
        if "db.relationshipTypes()" in query:
            return [{"relationshipType": "HAS GENRE"}]
        return []

    def write(self, query, params=None):
        self.sent.append({"query": query, "parameters": params or {}})
        if "AS matched" in query:  # as if every row's node were there
            return [{"matched": len((params or {}).get("rows", []))}], WriteStats()
        return [], WriteStats()


def store_queries() -> list[dict]:
    store = RecordingNeo4jStore()
    store.load_nodes([NodeRecord("n1", ("Film Noir", "Movie"), {"name": "Zoë", "year": 1950})])
    store.load_relationships([RelationshipRecord("n1", "n1", "HAS GENRE", {"since": 1})])
    store.set_embeddings([("n1", [0.1, 0.2, 0.3])])
    store.nearest_names([0.1, 0.2, 0.3], k=3)
    store.has_vector_index()
    store.nodes_by_name("Zoë")
    store.names_containing(["zoë"])
    store.nodes_by_id(["n1"])
    store.nodes_without_embedding()
    store.prepare_names()
    store.schema(refresh=True)
    store.name_counts()
    # cold start's own reads: the anchors of each label, their degrees, a bridge's second anchor
    generator = GraphQuestionGenerator(store, GenerationConfig())
    generator.anchors()
    generator._degrees(["n1"])
    generator._partner(AnchorRef("n1", ("Film Noir",)), {"n2": "Zoë"})
    store.graphs()
    with contextlib.suppress(GraphNotFoundError):  # nothing answers: the graph looks missing
        store.require_graph()
    return store.sent + [{"query": clear_query(store.entity_label), "parameters": {}}]


def template_queries() -> list[dict]:
    parameters = {"anchor": "a", "other": "b", "cap": 500, "answer_ids": [], "answer_names": [], "anchors": ["a"]}
    names = sorted(p.stem for p in (Path(__file__).parents[1] / "queries").glob("*.cypher"))
    assert len(names) >= 5
    return [{"query": template(name), "parameters": parameters} for name in names]


def test_every_query_shape_and_store_query_parses_as_neo4j_cypher():
    shapes = rendered_shapes()
    language = language_shapes()
    items = [{"query": q, "parameters": {}} for q in shapes + language] + template_queries() + store_queries()
    # the shapes cover relationship conditions, back-quoted names, the target-anchor condition, bridges
    assert len(shapes) > 150 and any("[r1:" in q and "[r2:" in q for q in shapes) and any("`" in q for q in shapes)
    assert any(re.search(r"WHERE n\d <> a", q) for q in shapes) and any("(b:" in q for q in shapes)
    assert len(language) > 300 and all(any(word in q for q in language) for word in ("ORDER BY", "LIMIT", "STARTS"))
    errors = {item["query"]: found for item, found in zip(items, lint(items)) if found}
    assert errors == {}


def test_the_checker_finds_what_neo4j_would_refuse():
    """The check is not vacuous: Neo4j's analysis rejects a broken rendering."""
    good = render(Pattern(AnchorRef("x", ("Person",)), (Step("KNOWS", True, ("Person",)),), 1))
    broken = [
        good.replace("RETURN DISTINCT n1.id", "RETURN DISTINCT u.id"),  # an undefined variable
        good.replace(" RETURN", " WHERE RETURN"),  # a dangling WHERE
        good.replace(":KNOWS", ":`KNOWS"),  # an unclosed backtick
        "MATCH (a:Person {id: $anchor}) RETURN a.id AS id",  # a parameter never passed
    ]
    assert all(query != good for query in broken)
    found = lint([{"query": q, "parameters": {}} for q in [good, *broken]])
    assert found[0] == [] and all(found[1:]), found
