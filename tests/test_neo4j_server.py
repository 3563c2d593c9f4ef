"""`graphraft neo4j start|stop|status|env` on a private Neo4j server, and faults on it: two
starts at once leave one server, kill -9 right after a load loses nothing, a crash is noticed,
a stalled server fails every command within its limit and recovers, two graphs in one
database stay apart."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cli_run import each_fails_in_time, graph_files, kill_hard, one_line_error, run
from conftest import neo4j_jars

pytestmark = pytest.mark.neo4j


def java_servers(data_dir: Path) -> list[int]:
    """Neo4j processes started for this data directory."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_text()
        except OSError:
            continue
        if "CommunityEntryPoint" in cmdline and f"--home-dir={data_dir}" in cmdline:
            found.append(int(proc.name))
    return found


@pytest.fixture(scope="module")
def managed(tmp_path_factory):
    """A home of its own whose Neo4j the tests start and stop with the command line (the jars
    from the shared cache); the environment every other command then uses."""
    home = tmp_path_factory.mktemp("neo4j-home")
    env = {
        "GRAPHRAFT_HOME": str(home),
        "GRAPHRAFT_NEO4J_JARS": str(neo4j_jars()),
        "GRAPHRAFT_EMBEDDER": "none",
        "GRAPHRAFT_NEO4J_HEAP": "512m",
        "GRAPHRAFT_NEO4J_PAGECACHE": "128m",
    }
    # two starts at once: one server
    starts = [
        subprocess.Popen(
            [sys.executable, "-m", "graphraft", "neo4j", "start"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**{k: v for k, v in os.environ.items() if not k.startswith(("GRAPHRAFT_", "NEO4J_"))}, **env},
        )
        for _ in range(2)
    ]
    outputs = [proc.communicate(timeout=600) for proc in starts]
    assert all(proc.returncode == 0 for proc in starts), outputs
    yield home, env, outputs
    run(["neo4j", "stop"], env, timeout=120)


def status(env) -> dict:
    return json.loads(run(["neo4j", "status", "--json"], env).stdout)


def client_env(env) -> dict:
    """The exports `graphraft neo4j env` prints, applied."""
    proc = run(["neo4j", "env"], env)
    assert proc.returncode == 0, proc.stderr
    exports = dict(item.split("=", 1) for item in proc.stdout.strip().removeprefix("export ").split())
    return {**env, **exports}


def test_two_starts_leave_one_private_server_on_loopback(managed):
    home, env, outputs = managed
    said = [out for out, _ in outputs]
    assert sum("Neo4j started" in out for out in said) == 1 and sum("already running" in out for out in said) == 1
    info = status(env)
    assert info["running"] and info["uri"].startswith("bolt://127.0.0.1:")
    assert java_servers(home / "neo4j") == [info["pid"]]
    # the password is generated, kept for the user alone; the data folder is private
    password = Path(info["password_file"])
    assert stat.S_IMODE(password.stat().st_mode) == 0o600 and len(password.read_text().strip()) >= 24
    assert stat.S_IMODE((home / "neo4j").stat().st_mode) == 0o700
    config = (home / "neo4j" / "conf" / "neo4j.conf").read_text()
    assert "server.http.enabled=false" in config and "dbms.security.auth_enabled=true" in config
    assert "dbms.usage_report.enabled=false" in config
    # a wrong password is refused: authentication is on
    wrong = {**client_env(env), "NEO4J_PASSWORD": "not-it"}
    proc = run(["schema", "--graph", "none"], {k: v for k, v in wrong.items() if k != "NEO4J_PASSWORD_FILE"})
    assert proc.returncode == 3 and "refused the credentials" in one_line_error(proc)


def test_graphs_in_one_database_stay_apart(managed, tmp_path):
    _, env, _ = managed
    client = client_env(env)
    first, second = graph_files(tmp_path, 1), graph_files(tmp_path, 2)
    for graph, (nodes, rels) in (("one", first), ("two", second)):
        proc = run(["load", "files", "--nodes", str(nodes), "--relationships", str(rels), "--graph", graph], client)
        assert proc.returncode == 0, proc.stderr
    before = json.loads(run(["schema", "--graph", "two", "--json"], client).stdout)
    # the same ids in another graph: no clash, and a replace of one leaves the other as it was
    nodes, rels = first
    proc = run(["load", "files", "--nodes", str(nodes), "--graph", "one-again"], client)
    assert proc.returncode == 0, proc.stderr
    proc = run(
        ["load", "files", "--nodes", str(nodes), "--relationships", str(rels), "--graph", "one", "--replace"], client
    )
    assert proc.returncode == 0, proc.stderr
    after = json.loads(run(["schema", "--graph", "two", "--json"], client).stdout)
    assert after == before and after["labels"] == {"Item": 202} and after["relationship_types"] == {"NEXT": 201}
    assert json.loads(run(["schema", "--graph", "one-again", "--json"], client).stdout)["labels"] == {"Item": 201}
    # a misspelled graph: one line that names the graphs there
    proc = run(["schema", "--graph", "onee"], client)
    assert proc.returncode == 1
    line = one_line_error(proc)
    assert "graph 'onee' does not exist" in line and "one, one-again, two" in line


def test_kill_9_right_after_a_load_loses_nothing_and_the_crash_is_noticed(managed, tmp_path):
    _, env, _ = managed
    client = client_env(env)
    nodes, rels = graph_files(tmp_path, 3)
    proc = run(["load", "files", "--nodes", str(nodes), "--relationships", str(rels), "--graph", "k3"], client)
    assert proc.returncode == 0, proc.stderr
    kill_hard(status(env)["pid"])
    info = status(env)
    assert not info["running"] and info["crashed"]
    assert "stopped without `graphraft neo4j stop`" in run(["neo4j", "status"], env).stdout
    proc = run(["schema", "--graph", "k3"], client, timeout=60)
    assert proc.returncode == 3 and "cannot reach Neo4j" in one_line_error(proc)
    assert run(["neo4j", "start"], env, timeout=600).returncode == 0
    assert client_env(env)["NEO4J_URI"] == client["NEO4J_URI"]  # the port is kept
    schema = json.loads(run(["schema", "--graph", "k3", "--json"], client).stdout)
    assert schema["labels"] == {"Item": 203} and schema["relationship_types"] == {"NEXT": 202}


def test_a_stalled_neo4j_fails_every_command_within_its_limit_and_recovers(managed, tmp_path, tiny_model_dir):
    _, env, _ = managed
    client = {
        **client_env(env),
        "GRAPHRAFT_CONNECT_TIMEOUT_S": "2",
        "GRAPHRAFT_QUERY_TIMEOUT_MS": "2000",
        "GRAPHRAFT_WRITE_TIMEOUT_MS": "3000",
        "GRAPHRAFT_ASK_TIMEOUT_S": "20",
    }
    nodes, rels = graph_files(tmp_path, 0)
    load = ["load", "files", "--nodes", str(nodes), "--relationships", str(rels), "--graph", "s"]
    assert run(load, client).returncode == 0
    commands = {
        # free text sees the whole database: the graph's label confines it
        "query": ["query", "MATCH (n:__Graph_s__) RETURN count(n) AS c", "--graph", "s", "--json"],
        "schema": ["schema", "--graph", "s", "--json"],
        "load": load,
        "ask": [
            *("ask", "what comes after [item 0 1]", "--graph", "s", "--model", str(tiny_model_dir)),
            *("--extractor", "marked", "--max-hops", "1", "--json"),
        ],
    }
    pid = status(env)["pid"]
    os.kill(pid, signal.SIGSTOP)
    try:
        for name, args in commands.items():
            started = time.monotonic()
            proc = run(args, client, timeout=120)
            seconds = time.monotonic() - started
            assert proc.returncode == 3, (name, proc.stdout, proc.stderr)
            line = one_line_error(proc)
            assert "Neo4j" in line, name
            assert seconds < 30, (name, seconds)
        assert status(env)["running"]  # stalled, not gone
    finally:
        os.kill(pid, signal.SIGCONT)
    assert json.loads(run(commands["query"], client).stdout) == [{"c": 200}]
    assert run(commands["load"], client).returncode == 0
    assert json.loads(run(commands["ask"], client).stdout)["anchors"][0]["name"] == "item 0 1"


def test_a_neo4j_stalled_mid_session_gives_errors_within_the_limits(managed, tmp_path):
    """Calls on an open connection: a read, a write and clear each end in time."""
    _, env, _ = managed
    client = client_env(env)
    nodes, rels = graph_files(tmp_path, 0)
    load = ["load", "files", "--nodes", str(nodes), "--relationships", str(rels), "--graph", "mid"]
    assert run(load, client).returncode == 0
    from graphraft.config import load_settings
    from graphraft.graph import open_store
    from graphraft.graph.records import NodeRecord

    settings = load_settings(
        neo4j_uri=client["NEO4J_URI"],
        neo4j_password_file=client["NEO4J_PASSWORD_FILE"],
        home=client["GRAPHRAFT_HOME"],
        connect_timeout_s=1.0,
        query_timeout_ms=1000,
        write_timeout_ms=2000,
    )
    store = open_store(settings, "mid")
    assert store.count_nodes() == 200
    calls = {
        "read": (lambda: store.read("MATCH (n) RETURN count(n) AS c"), 1.0),
        "write": (lambda: store.load_nodes([NodeRecord("x", ("Item",), {"name": "x"})]), 2.0),
        "clear": (store.clear, 2.0),
    }
    pid = status(env)["pid"]
    each_fails_in_time(pid, calls, slack=4.0)
    store.close()
    fresh = open_store(settings, "mid")
    assert fresh.count_nodes() == 200 and fresh.count_relationships() == 199
    fresh.close()


def test_a_dump_replaces_the_stopped_servers_database(managed, tmp_path):
    """`graphraft neo4j load-dump`: a dump made with Neo4j's admin tool comes back whole after the
    database was emptied; a running server or a missing dump is a one-line error."""
    import neo4j

    from graphraft.graph.neo4j_server import ADMIN_TOOL, java_command, resolve_classpath

    home, env, _ = managed
    data = home / "neo4j"

    def query(text: str) -> list:
        exports = client_env(env)
        password = Path(exports["NEO4J_PASSWORD_FILE"]).read_text().strip()
        with neo4j.GraphDatabase.driver(exports["NEO4J_URI"], auth=("neo4j", password)) as driver:
            return driver.execute_query(text).records

    def count() -> int:
        return query("MATCH (n) RETURN count(n) AS c")[0]["c"]

    assert run(["neo4j", "start"], env, timeout=300).returncode == 0  # running already, unless run alone
    before = count()
    assert before > 0
    assert run(["neo4j", "stop"], env, timeout=120).returncode == 0
    dumps = tmp_path / "dumps"
    dumps.mkdir()
    admin = [java_command(), "-cp", resolve_classpath(neo4j_jars()), ADMIN_TOOL]
    made = subprocess.run(
        [*admin, "database", "dump", "neo4j", f"--to-path={dumps}"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NEO4J_HOME": str(data), "NEO4J_CONF": str(data / "conf")},
    )
    assert made.returncode == 0, made.stderr
    assert run(["neo4j", "start"], env, timeout=300).returncode == 0
    query("MATCH (n) DETACH DELETE n")
    assert count() == 0
    running = run(["neo4j", "load-dump", str(dumps / "neo4j.dump")], env)
    assert running.returncode != 0 and "is running" in one_line_error(running)
    assert run(["neo4j", "stop"], env, timeout=120).returncode == 0
    missing = run(["neo4j", "load-dump", str(tmp_path / "none.dump")], env)
    assert missing.returncode != 0 and "not found" in one_line_error(missing)
    loaded = run(["neo4j", "load-dump", str(dumps / "neo4j.dump")], env, timeout=300)
    assert loaded.returncode == 0, loaded.stderr
    assert run(["neo4j", "start"], env, timeout=300).returncode == 0
    assert count() == before  # left running: the next test stops it


def test_stop_is_clean_and_status_says_so(managed):
    home, env, _ = managed
    proc = run(["neo4j", "stop"], env, timeout=120)
    assert proc.returncode == 0 and "Neo4j stopped" in proc.stdout
    assert java_servers(home / "neo4j") == []
    proc = run(["neo4j", "status"], env)
    assert proc.returncode == 1 and "not running" in proc.stdout and "without" not in proc.stdout
    assert "Stopped." in (home / "neo4j" / "logs" / "neo4j.log").read_text()
