"""The `graphraft` command, run as a user runs it (a subprocess)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys

import pytest

from cli_run import one_line_error
from cli_run import run as run_command


def run(args, env_extra, check_code=0):
    proc = run_command(args, env_extra)
    assert proc.returncode == check_code, (proc.returncode, proc.stdout, proc.stderr)
    return proc


def assert_one_line_error(proc, *fragments):
    line = one_line_error(proc)
    for fragment in fragments:
        assert fragment in line, line


@pytest.fixture
def env(tmp_path, server):
    """A fresh home that talks to the session's server."""
    return {
        "GRAPHRAFT_HOME": str(tmp_path / "home"),
        **server.env(),
        "GRAPHRAFT_EMBEDDER": "none",
    }


def test_load_files_then_schema_json_then_query(tmp_path, env):
    (tmp_path / "n.csv").write_text("id,labels,name\na,Person,Ann\nb,City,Oslo\n")
    (tmp_path / "r.csv").write_text("source,target,type\na,b,LIVES_IN\n")
    args = [
        "load",
        "files",
        "--nodes",
        str(tmp_path / "n.csv"),
        "--relationships",
        str(tmp_path / "r.csv"),
        "--graph",
        "cli-files",
        "--replace",
    ]
    first = run(args, env)
    assert "created 2 nodes and 1 relationships" in " ".join(first.stdout.split())
    again = run(args[:-1], env)
    assert "created 0 nodes and 0 relationships" in " ".join(again.stdout.split())
    # the graph loaded last is the default for later commands
    schema = json.loads(run(["schema", "--json"], env).stdout)
    assert schema["labels"] == {"City": 1, "Person": 1}
    assert schema["patterns"] == [{"source": "Person", "type": "LIVES_IN", "target": "City", "count": 1}]
    assert schema["names"] == {"City": "name", "Person": "name"}
    city = {"type": "string", "sampled": 1, "values": ["Oslo"], "numeric": False, "dates": False, "unique": True}
    assert schema["properties"]["City"] == {"name": city}
    # and as a table: each label with the property that names it and its properties
    table = " ".join(run(["schema"], env).stdout.split())
    assert "City │ 1 │ name │ name (string, unique: Oslo)" in table
    rows = json.loads(
        run(["query", "MATCH (p:Person)-[:LIVES_IN]->(c) RETURN p.name AS p, c.name AS c", "--json"], env).stdout
    )
    assert rows == [{"p": "Ann", "c": "Oslo"}]


def test_a_write_through_query_is_refused(tmp_path, env):
    (tmp_path / "n.jsonl").write_text('{"id": "a", "labels": ["P"], "properties": {"name": "A"}}\n')
    run(["load", "files", "--nodes", str(tmp_path / "n.jsonl"), "--graph", "cli-ro", "--replace"], env)
    proc = run(["query", "MATCH (n) DETACH DELETE n", "--graph", "cli-ro"], env, check_code=1)
    assert_one_line_error(proc, "refused a write on the read-only path")
    rows = json.loads(run(["query", "MATCH (n) RETURN count(n) AS c", "--graph", "cli-ro", "--json"], env).stdout)
    assert rows == [{"c": 1}]


def test_missing_file_is_one_line(tmp_path, env):
    proc = run(["load", "files", "--nodes", str(tmp_path / "nope.csv")], env, check_code=2)
    assert_one_line_error(proc, "nope.csv", "file not found")


def test_malformed_line_is_reported_as_file_and_line(tmp_path, env):
    (tmp_path / "n.jsonl").write_text('{"id": "a", "labels": ["P"]}\n{oops\n')
    proc = run(["load", "files", "--nodes", str(tmp_path / "n.jsonl")], env, check_code=2)
    assert_one_line_error(proc, "n.jsonl:2: invalid JSON")


def test_metaqa_path_without_kb_is_one_line(tmp_path, env):
    proc = run(["load", "metaqa", "--path", str(tmp_path)], env, check_code=2)
    assert_one_line_error(proc, "kb.txt", "not found")


def test_unknown_graph_is_one_line(env):
    proc = run(["query", "MATCH (n) RETURN n", "--graph", "never-loaded"], env, check_code=1)
    assert_one_line_error(proc, "graph 'never-loaded' does not exist")


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_unreachable_falkordb_is_one_line(tmp_path):
    port = _closed_port()
    proc = run(["schema"], {"GRAPHRAFT_HOME": str(tmp_path), "GRAPHRAFT_FALKORDB_PORT": str(port)}, check_code=3)
    assert_one_line_error(proc, f"cannot reach FalkorDB at 127.0.0.1:{port}")


def test_unreachable_neo4j_is_one_line(tmp_path):
    port = _closed_port()
    proc = run(["schema"], {"GRAPHRAFT_HOME": str(tmp_path), "NEO4J_URI": f"bolt://127.0.0.1:{port}"}, check_code=3)
    assert_one_line_error(proc, f"cannot reach Neo4j at bolt://127.0.0.1:{port}")


def test_bad_neo4j_uri_is_one_line(tmp_path):
    proc = run(["schema"], {"GRAPHRAFT_HOME": str(tmp_path), "NEO4J_URI": "http://localhost:7474"}, check_code=1)
    assert_one_line_error(proc, "must start with bolt:// or neo4j://")


def test_db_lifecycle_and_a_taken_port(tmp_path):
    env = {"GRAPHRAFT_HOME": str(tmp_path / "home")}
    try:
        started = run(["db", "start"], env)
        assert "started" in started.stdout
        assert "already running" in run(["db", "start"], env).stdout
        status = json.loads(run(["db", "status", "--json"], env).stdout)
        assert status["running"] and status["data_dir"].startswith(str(tmp_path))
        # a command that needs the database finds the running one; a misspelled graph is an error
        proc = run(["schema", "--graph", "nothing-here"], env, check_code=1)
        assert_one_line_error(proc, "graph 'nothing-here' does not exist", f"127.0.0.1:{status['port']}")
        # another program reaches it with what `db env` exports (port and password file), not without
        exports = dict(word.split("=", 1) for word in run(["db", "env"], env).stdout.split()[1:])
        assert exports["GRAPHRAFT_FALKORDB_PORT"] == str(status["port"])
        elsewhere = {"GRAPHRAFT_HOME": str(tmp_path / "elsewhere"), "GRAPHRAFT_FALKORDB_PORT": str(status["port"])}
        proc = run(["schema", "--graph", "nothing-here"], {**elsewhere, **exports}, check_code=1)
        assert_one_line_error(proc, "graph 'nothing-here' does not exist")
        proc = run(["schema", "--graph", "nothing-here"], elsewhere, check_code=3)
        assert_one_line_error(proc, "requires a password: set GRAPHRAFT_FALKORDB_PASSWORD")
        # a port the running server is not on cannot be honoured
        other = _closed_port()
        proc = run(["db", "start", "--port", str(other)], env, check_code=3)
        assert_one_line_error(proc, f"already runs on port {status['port']}", f"not {other}")
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            sock.listen()
            taken = sock.getsockname()[1]
            proc = run(["db", "start", "--data-dir", str(tmp_path / "other"), "--port", str(taken)], env, check_code=3)
            assert_one_line_error(proc, f"port {taken} is already in use")
    finally:
        run(["db", "stop"], env)
    assert json.loads(run(["db", "status", "--json"], env, check_code=1).stdout)["running"] is False


def test_commands_start_the_embedded_database_when_none_is_configured(tmp_path):
    env = {"GRAPHRAFT_HOME": str(tmp_path / "home")}
    try:
        proc = run(["schema", "--graph", "nothing-here"], env, check_code=1)
        assert_one_line_error(proc, "graph 'nothing-here' does not exist", "no graph is loaded there")
        assert json.loads(run(["db", "status", "--json"], env).stdout)["running"]
    finally:
        run(["db", "stop"], env)


@pytest.mark.parametrize(
    "command",
    [
        [],
        ["db"],
        ["load"],
        ["load", "metaqa"],
        ["load", "files"],
        ["schema"],
        ["query"],
        ["demo"],
        ["embed"],
        ["eval"],
        ["ask"],
        ["synthesize"],
        ["train"],
    ],
)
def test_every_command_has_help(command):
    proc = subprocess.run([sys.executable, "-m", "graphraft", *command, "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "Usage:" in proc.stdout


@pytest.mark.parametrize("module, option", [("graphraft.synthesize", "--min-recall"), ("graphraft.train", "--lora-r")])
def test_the_python_m_entry_points_run_their_commands(module, option):
    proc = subprocess.run([sys.executable, "-m", module, "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and f"python -m {module}" in proc.stdout and option in proc.stdout
