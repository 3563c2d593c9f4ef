"""Bad input, table-driven, through the `graphraft` command as a user runs it: each case gets a
one-line error that names the file and line (or the value), a non-zero exit, and the graph
already loaded keeps every node and relationship (the bad loads use --replace, the worst case:
a file is checked completely before anything is deleted or written)."""

from __future__ import annotations

import json

import pytest

from cli_run import one_line_error, run

GRAPH = "bad-inputs"
NODES = (
    '{"id": "p1", "labels": ["Person"], "properties": {"name": "Tom Hanks"}}\n'
    '{"id": "m1", "labels": ["Movie"], "properties": {"name": "Big", "year": 1988}}\n'
)
RELS = '{"source": "m1", "target": "p1", "type": "STARRED"}\n'


@pytest.fixture(scope="module")
def loaded(server, tmp_path_factory):
    """A small graph loaded through the command; the cases below must leave it as it is."""
    folder = tmp_path_factory.mktemp("bad-inputs")
    env = {
        "GRAPHRAFT_HOME": str(folder / "home"),
        **server.env(),
        "GRAPHRAFT_EMBEDDER": "none",
    }
    (folder / "nodes.jsonl").write_text(NODES)
    (folder / "rels.jsonl").write_text(RELS)
    proc = run(
        [
            "load",
            "files",
            "--nodes",
            str(folder / "nodes.jsonl"),
            "--relationships",
            str(folder / "rels.jsonl"),
            "--graph",
            GRAPH,
            "--replace",
        ],
        env,
    )
    assert proc.returncode == 0, proc.stderr
    store = server.store(GRAPH)
    yield folder, env, store
    store.clear()
    store.close()


def counts(store) -> tuple[int, int, int]:
    indexes = len(store.read("CALL db.indexes() YIELD label RETURN label"))
    return store.count_nodes(), store.count_relationships(), indexes


# (case, nodes file name and text, relationships file name and text or None, what the error names)
LOAD_CASES = [
    (
        "reserved property id",
        "n.jsonl",
        '{"id": "a", "labels": ["P"], "properties": {"id": "x"}}\n',
        None,
        ["n.jsonl:1", "'id' is reserved"],
    ),
    (
        "reserved property name_norm",
        "n.jsonl",
        NODES + '{"id": "a", "labels": ["P"], "properties": {"name_norm": "x"}}\n',
        None,
        ["n.jsonl:3", "'name_norm' is reserved"],
    ),
    (
        "reserved property embedding",
        "n.jsonl",
        '{"id": "a", "labels": ["P"], "properties": {"embedding": [1.0]}}\n',
        None,
        ["n.jsonl:1", "'embedding' is reserved"],
    ),
    (
        "reserved column in a CSV",
        "n.csv",
        "id,labels,name,name_norm\na,P,A,a\n",
        None,
        ["n.csv:1", "'name_norm' is reserved"],
    ),
    ("empty nodes file", "n.jsonl", "", None, ["n.jsonl", "no nodes in the file"]),
    ("blank-lines-only nodes file", "n.csv", "id,labels,name\n\n\n", None, ["n.csv", "no nodes in the file"]),
    ("empty relationships file", "n.jsonl", NODES, ("r.jsonl", ""), ["r.jsonl", "no relationships in the file"]),
    (
        "backtick in a property key",
        "n.jsonl",
        '{"id": "a", "labels": ["P"], "properties": {"na`me": "x"}}\n',
        None,
        ["n.jsonl:1", "backtick"],
    ),
    ("backtick in a label", "n.jsonl", NODES + '{"id": "a", "labels": ["Pe`rson"]}\n', None, ["n.jsonl:3", "backtick"]),
    (
        "backtick in a relationship type",
        "n.jsonl",
        NODES,
        ("r.csv", "source,target,type\nm1,p1,STAR`RED\n"),
        ["r.csv:2", "backtick"],
    ),
    ("backtick in a CSV column", "n.csv", "id,labels,na`me\na,P,x\n", None, ["n.csv:1", "backtick"]),
    (
        "control character in a label",
        "n.jsonl",
        '{"id": "a", "labels": ["P\\u0007"]}\n',
        None,
        ["n.jsonl:1", "control character"],
    ),
    (
        "reserved entity label",
        "n.jsonl",
        '{"id": "a", "labels": ["__Entity__"]}\n',
        None,
        ["n.jsonl:1", "__Entity__ is reserved"],
    ),
    ("empty label", "n.csv", "id,labels\na,\n", None, ["n.csv:2", "cannot be empty"]),
    ("duplicate node id", "n.jsonl", NODES + NODES, None, ["n.jsonl:3", "duplicate node id 'p1'"]),
    ("duplicate CSV column", "n.csv", "id,labels,name,name\na,P,x,y\n", None, ["n.csv:1", "name", "more than once"]),
    ("missing CSV column", "n.csv", "identifier,labels\na,P\n", None, ["n.csv:1", "lacks column(s) id"]),
    ("ragged CSV row", "n.csv", "id,labels,name\na,P\n", None, ["n.csv:2", "expected 3 columns, found 2"]),
    (
        "nested property value",
        "n.jsonl",
        '{"id": "a", "labels": ["P"], "properties": {"x": {"y": 1}}}\n',
        None,
        ["n.jsonl:1", "properties.x"],
    ),
    ("invalid JSON on a later line", "n.jsonl", NODES + "{oops\n", None, ["n.jsonl:3", "invalid JSON"]),
    ("not UTF-8", "n.csv", b"id,labels,name\na,P,\xff\xfe\n", None, ["n.csv", "not UTF-8"]),
    ("unknown format", "n.txt", "whatever\n", None, ["n.txt", "unknown format"]),
    (
        "relationship without a type",
        "n.jsonl",
        NODES,
        ("r.jsonl", '{"source": "m1", "target": "p1"}\n'),
        ["r.jsonl:1", "type"],
    ),
]


@pytest.mark.parametrize("case, nodes_name, nodes_text, rels, fragments", LOAD_CASES, ids=[c[0] for c in LOAD_CASES])
def test_a_bad_file_is_one_line_and_changes_nothing(loaded, tmp_path, case, nodes_name, nodes_text, rels, fragments):
    folder, env, store = loaded
    before = counts(store)
    default_before = (folder / "home" / "current_graph.json").read_text()
    nodes = tmp_path / nodes_name
    nodes.write_bytes(nodes_text if isinstance(nodes_text, bytes) else nodes_text.encode())
    args = ["load", "files", "--nodes", str(nodes), "--graph", GRAPH, "--replace"]
    if rels:
        (tmp_path / rels[0]).write_text(rels[1])
        args += ["--relationships", str(tmp_path / rels[0])]
    proc = run(args, env)
    assert proc.returncode == 2, (case, proc.stdout, proc.stderr)
    line = one_line_error(proc)
    for fragment in fragments:
        assert fragment in line, (case, line)
    assert counts(store) == before
    assert (folder / "home" / "current_graph.json").read_text() == default_before


def test_a_csv_with_a_byte_order_mark_loads(loaded, tmp_path):
    """Spreadsheet programs save CSV with a UTF-8 byte-order mark; it is not part of the header."""
    _, env, _ = loaded
    (tmp_path / "n.csv").write_bytes("id,labels,name\na,Person,Åsa\n".encode("utf-8-sig"))
    (tmp_path / "r.csv").write_bytes("source,target,type\na,a,KNOWS\n".encode("utf-8-sig"))
    proc = run(
        [
            "load",
            "files",
            "--nodes",
            str(tmp_path / "n.csv"),
            "--relationships",
            str(tmp_path / "r.csv"),
            "--graph",
            "bom",
            "--replace",
        ],
        env,
    )
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(
        run(
            ["query", "MATCH (n:Person)-[:KNOWS]->(n) RETURN n.id AS id, n.name AS name", "--graph", "bom", "--json"],
            env,
        ).stdout
    )
    assert rows == [{"id": "a", "name": "Åsa"}]


MISSPELLED = "bad-inputs-typo"
COMMAND_CASES = [
    (
        "schema on a misspelled graph",
        ["schema", "--graph", MISSPELLED],
        1,
        [f"graph '{MISSPELLED}' does not exist", GRAPH],
    ),
    (
        "query on a misspelled graph",
        ["query", "MATCH (n) RETURN n", "--graph", MISSPELLED],
        1,
        [f"graph '{MISSPELLED}' does not exist"],
    ),
    ("embed on a misspelled graph", ["embed", "--graph", MISSPELLED], 1, [f"graph '{MISSPELLED}' does not exist"]),
    (
        "ask on a misspelled graph",
        ["ask", "who is [Tom Hanks]", "--graph", MISSPELLED],
        1,
        [f"graph '{MISSPELLED}' does not exist"],
    ),
    (
        "synthesize on a misspelled graph",
        ["synthesize", "--questions", "QUESTIONS", "--graph", MISSPELLED, "--output", "OUT"],
        1,
        [f"graph '{MISSPELLED}' does not exist"],
    ),
    ("an empty question", ["ask", "   ", "--graph", GRAPH], 2, ["the question is empty"]),
    ("an empty query", ["query", " ", "--graph", GRAPH], 2, ["empty query"]),
    ("a write through query", ["query", "MATCH (n) SET n.x = 1", "--graph", GRAPH], 1, ["refused a write"]),
    ("a second statement", ["query", "MATCH (n) RETURN n; CREATE (:X)", "--graph", GRAPH], 1, [GRAPH]),
    ("an invalid setting", ["--timeout-ms", "0", "schema", "--graph", GRAPH], 1, ["query_timeout_ms"]),
    (
        "a missing question file",
        ["synthesize", "--questions", "NOPE", "--graph", GRAPH, "--output", "OUT"],
        2,
        ["nope.jsonl", "not found"],
    ),
]


@pytest.mark.parametrize("case, args, code, fragments", COMMAND_CASES, ids=[c[0] for c in COMMAND_CASES])
def test_a_bad_command_is_one_line_and_changes_nothing(loaded, tmp_path, case, args, code, fragments):
    _, env, store = loaded
    before = counts(store)
    (tmp_path / "q.jsonl").write_text('{"question": "who is in [Big]", "answers": ["Tom Hanks"]}\n')
    replace = {
        "QUESTIONS": str(tmp_path / "q.jsonl"),
        "NOPE": str(tmp_path / "nope.jsonl"),
        "OUT": str(tmp_path / "out.jsonl"),
    }
    proc = run([replace.get(a, a) for a in args], env)
    assert proc.returncode == code, (case, proc.stdout, proc.stderr)
    line = one_line_error(proc)
    for fragment in fragments:
        assert fragment in line, (case, line)
    assert counts(store) == before
    assert not (tmp_path / "out.jsonl").exists()


def test_asking_a_graph_without_name_embeddings_falls_back_to_text_and_says_so(loaded, tiny_model_dir):
    """Loaded with --no-embed there is no vector index: a misspelled name is matched by text,
    not answered with a raw procedure error."""
    _, env, _ = loaded
    local = {**env, "GRAPHRAFT_EMBEDDER": "local"}  # an embedder is there; the graph has no index
    proc = run(
        [
            "ask",
            "which films did [Tom Hank] star in",
            "--graph",
            GRAPH,
            "--model",
            str(tiny_model_dir),
            "--extractor",
            "marked",
            "--max-hops",
            "1",
            "--json",
        ],
        local,
    )
    assert proc.returncode == 0, proc.stderr
    answer = json.loads(proc.stdout)
    assert [(a["name"], a["method"]) for a in answer["anchors"]] == [("Tom Hanks", "text")]
    assert [a["name"] for a in answer["answers"]] == ["Big"]
    assert any("no name embeddings" in note for note in answer["notes"])
    # a name that matches nothing says so in words, with the reason
    proc = run(
        [
            "ask",
            "which films did [Zzyzx Qwerty] star in",
            "--graph",
            GRAPH,
            "--model",
            str(tiny_model_dir),
            "--extractor",
            "marked",
        ],
        local,
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "no entity of the question was found" in proc.stderr and "no name embeddings" in proc.stderr
