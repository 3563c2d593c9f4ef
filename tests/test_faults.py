"""Faults on real server processes: crashes right after loads, simultaneous starts, a stalled
server. Nothing a command reported as done may be lost, no command may hang."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from graphraft.config import load_settings
from graphraft.errors import DatabaseUnavailableError
from graphraft.graph import open_store
from graphraft.graph.embedded import EmbeddedServer
from graphraft.graph.falkor import FalkorDBStore
from graphraft.graph.local_server import LocalServer, pid_alive
from graphraft.graph.records import NodeRecord

from cli_run import each_fails_in_time, graph_files, kill_hard, one_line_error, run

LOADS = 10


def server_pid(home: Path) -> int:
    return json.loads((home / "falkordb" / "server.json").read_text())["pid"]


def servers_on(data_dir: Path) -> list[int]:
    """redis-server processes whose working directory is this data directory."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            ours = (
                "redis-server" in (proc / "cmdline").read_text()
                and Path(os.readlink(proc / "cwd")) == data_dir.resolve()
            )
            if ours and pid_alive(int(proc.name)):
                found.append(int(proc.name))
        except OSError:
            continue
    return found


def test_kill_9_right_after_each_of_10_loads_loses_nothing(tmp_path):
    """Each load returns, the server is killed at once (no snapshot, no clean exit); the next
    command starts a new server. At the end every graph has all its nodes and relationships."""
    home = tmp_path / "home"
    env = {"GRAPHRAFT_HOME": str(home), "GRAPHRAFT_EMBEDDER": "none"}
    try:
        for n in range(LOADS):
            nodes, rels = graph_files(tmp_path, n)
            proc = run(["load", "files", "--nodes", str(nodes), "--relationships", str(rels), "--graph", f"g{n}"], env)
            assert proc.returncode == 0, proc.stderr
            kill_hard(server_pid(home))
        assert not (home / "falkordb" / "graphraft.rdb").exists()  # no snapshot was ever taken: the log kept it
        for n in range(LOADS):
            schema = json.loads(run(["schema", "--graph", f"g{n}", "--json"], env).stdout)
            assert schema["labels"] == {"Item": 200 + n}
            assert schema["relationship_types"] == {"NEXT": 199 + n}
    finally:
        run(["db", "stop"], env)


def test_a_load_leaves_its_constraint_in_the_snapshot_not_in_the_replayed_log(tmp_path):
    """FalkorDB 4.16 replays a logged GRAPH.CONSTRAINT badly (twice, and it can deadlock a
    start): the load rewrites the log once the constraint stands."""
    home = tmp_path / "home"
    env = {"GRAPHRAFT_HOME": str(home), "GRAPHRAFT_EMBEDDER": "none"}
    try:
        for n in range(2):
            nodes, rels = graph_files(tmp_path, n)
            load = ["load", "files", "--nodes", str(nodes), "--relationships", str(rels), "--graph", f"g{n}"]
            assert run(load, env).returncode == 0
        log = home / "falkordb" / "appendonlydir"
        increments = b"".join(path.read_bytes() for path in log.glob("*.incr.aof"))
        assert b"GRAPH.QUERY" in increments  # the second graph's nodes, written after the rewrite
        assert b"GRAPH.CONSTRAINT" not in increments.upper()
        kill_hard(server_pid(home))
        schema = json.loads(run(["schema", "--graph", "g0", "--json"], env).stdout)
        assert schema["labels"] == {"Item": 200}
    finally:
        run(["db", "stop"], env)


class FirstStartStalls(EmbeddedServer):
    """The embedded server, whose first launch is stopped at once (as FalkorDB 4.16 sometimes
    deadlocks while reading its data): silent, neither ready nor exited."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.stalled: list[int] = []

    def _launch(self, port, lock_fd):
        proc = super()._launch(port, lock_fd)
        if not self.stalled:
            os.kill(proc.pid, signal.SIGSTOP)
            self.stalled.append(proc.pid)
        return proc


@pytest.mark.parametrize("attempts", [1, 2])
def test_a_start_that_stays_silent_is_killed_and_tried_again(tmp_path, attempts):
    server = FirstStartStalls(tmp_path / "falkordb", start_timeout=3)
    server.start_attempts = attempts
    try:
        if attempts == 1:
            with pytest.raises(DatabaseUnavailableError, match=r"did not become ready on port .* within 3s"):
                server.start()
            assert server.status() is None
        else:
            info, started = server.start()
            assert started and info.pid != server.stalled[0]
            assert server.status() == info
        assert not pid_alive(server.stalled[0])  # the silent one is gone, not left holding the lock
    finally:
        server.stop()


class SlowToListen(LocalServer):
    """A process that works (or sleeps) for 4 s before it listens on its port: what a server
    building a large graph's indexes (or a deadlocked one) looks like to a start."""

    kind = "slow server"

    def __init__(self, data_dir, how: str):
        super().__init__(data_dir, start_timeout=1.0)
        self.how = how

    def _launch(self, port, lock_fd):
        wait = "end = time.time() + 4\nwhile time.time() < end: pass" if self.how == "works" else "time.sleep(4)"
        script = f"import socket, time\n{wait}\ns = socket.create_server(('127.0.0.1', {port}))\ntime.sleep(600)"
        return subprocess.Popen([sys.executable, "-c", script], pass_fds=(lock_fd,), start_new_session=True)

    def _probe(self, port):
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return "ready"
        return None


@pytest.mark.parametrize("how", ["works", "sleeps"])
def test_a_silent_start_is_waited_for_while_it_works_and_killed_when_idle(tmp_path, how):
    server = SlowToListen(tmp_path / "slow", how)
    server.start_attempts = 1
    try:
        if how == "works":
            info, started = server.start()  # silent four times start_timeout, but busy
            assert started and server.status() == info
        else:
            with pytest.raises(DatabaseUnavailableError, match=r"did not become ready on port .* within \ds"):
                server.start()
            assert server.status() is None
    finally:
        server.stop()


def test_a_lost_graph_is_named_as_lost_not_as_empty(tmp_path):
    home = tmp_path / "home"
    env = {"GRAPHRAFT_HOME": str(home), "GRAPHRAFT_EMBEDDER": "none"}
    nodes, _ = graph_files(tmp_path, 0)
    try:
        assert run(["load", "files", "--nodes", str(nodes), "--graph", "kept"], env).returncode == 0
        assert run(["db", "stop"], env).returncode == 0
        # what a disk failure or a deleted folder would do: the server's files are gone
        data = home / "falkordb"
        for path in [data / "graphraft.rdb", *(data / "appendonlydir").glob("*")]:
            path.unlink(missing_ok=True)
        (data / "appendonlydir").rmdir()
        proc = run(["schema", "--graph", "kept"], env)
        assert proc.returncode == 3
        line = one_line_error(proc)
        assert "graph 'kept' was loaded on" in line and "200 nodes" in line and "lost" in line
    finally:
        run(["db", "stop"], env)


def test_four_simultaneous_starts_leave_one_server(tmp_path):
    home = tmp_path / "home"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("GRAPHRAFT_", "NEO4J_"))},
        "GRAPHRAFT_HOME": str(home),
    }
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "graphraft", "db", "start"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(4)
    ]
    try:
        outputs = [proc.communicate(timeout=120) for proc in procs]
        assert all(proc.returncode == 0 for proc in procs), outputs
        said = [out for out, _ in outputs]
        assert sum("started" in out and "already" not in out for out in said) == 1, said
        assert sum("already running" in out for out in said) == 3, said
        ports = {out.split("127.0.0.1:")[1].split()[0] for out in said}
        assert len(ports) == 1, said
        assert servers_on(home / "falkordb") == [server_pid(home)]
    finally:
        run(["db", "stop"], {"GRAPHRAFT_HOME": str(home)})
    assert servers_on(home / "falkordb") == []


@pytest.fixture
def stalled(tmp_path):
    """A private embedded server with a small graph, tight limits, and a way to stall it."""
    home = tmp_path / "home"
    env = {
        "GRAPHRAFT_HOME": str(home),
        "GRAPHRAFT_EMBEDDER": "none",
        "GRAPHRAFT_CONNECT_TIMEOUT_S": "2",
        "GRAPHRAFT_QUERY_TIMEOUT_MS": "2000",
        "GRAPHRAFT_WRITE_TIMEOUT_MS": "3000",
        "GRAPHRAFT_ASK_TIMEOUT_S": "20",
    }
    nodes, rels = graph_files(tmp_path, 0)
    assert (
        run(["load", "files", "--nodes", str(nodes), "--relationships", str(rels), "--graph", "s"], env).returncode == 0
    )
    pid = server_pid(home)
    yield home, env, pid, (nodes, rels)
    os.kill(pid, signal.SIGCONT)
    run(["db", "stop"], env)


def test_a_stalled_server_fails_every_command_within_its_limit_and_recovers(stalled, tiny_model_dir):
    _, env, pid, (nodes, rels) = stalled
    commands = {
        "query": ["query", "MATCH (n) RETURN count(n) AS c", "--graph", "s", "--json"],
        "schema": ["schema", "--graph", "s", "--json"],
        "load": ["load", "files", "--nodes", str(nodes), "--relationships", str(rels), "--graph", "s"],
        "ask": [
            "ask",
            "what comes after [item 0 1]",
            "--graph",
            "s",
            "--model",
            str(tiny_model_dir),
            "--extractor",
            "marked",
            "--max-hops",
            "1",
            "--json",
        ],
    }
    os.kill(pid, signal.SIGSTOP)
    try:
        for name, args in commands.items():
            started = time.monotonic()
            proc = run(args, env, timeout=120)
            seconds = time.monotonic() - started
            assert proc.returncode == 3, (name, proc.stdout, proc.stderr)
            assert "did not answer within 2s (is the server stalled?)" in one_line_error(proc), name
            # the 2 s limit plus starting Python and importing the libraries (torch for ask)
            assert seconds < 30, (name, seconds)
        # the server is stalled, not gone: status still finds it instead of starting a second one
        status = json.loads(run(["db", "status", "--json"], env).stdout)
        assert status["running"] and status["pid"] == pid
    finally:
        os.kill(pid, signal.SIGCONT)
    assert json.loads(run(commands["query"], env).stdout) == [{"c": 200}]
    assert run(commands["load"], env).returncode == 0
    answer = json.loads(run(commands["ask"], env).stdout)
    assert answer["anchors"][0]["name"] == "item 0 1"


def test_a_server_stalled_mid_session_gives_errors_within_the_limits(stalled, graphraft_home):
    """Calls on an open connection: reads, writes, clear and a whole ask each end in time."""
    home, _, pid, _ = stalled
    settings = load_settings(
        home=home,
        connect_timeout_s=1.0,
        query_timeout_ms=1000,
        write_timeout_ms=2000,
        embedder="none",
        ask_timeout_s=10,
    )
    store = open_store(settings, "s")
    assert isinstance(store, FalkorDBStore) and store.count_nodes() == 200
    from graphraft.inference.pipeline import GraphRAFT
    from graphraft.models import tiny_random_model
    from graphraft.synthesis.mentions import MarkedMentionExtractor

    model, tokenizer = tiny_random_model(graphraft_home, seed=1)
    engine = GraphRAFT(
        settings,
        store=store,
        model=model,
        tokenizer=tokenizer,
        extractor=MarkedMentionExtractor(),
        beams=2,
        max_hops=1,
    )
    calls = {
        "read": (lambda: store.read("MATCH (n) RETURN count(n) AS c"), 1.0 + 1.5),
        "write": (lambda: store.load_nodes([NodeRecord("x", ("Item",), {"name": "x"})]), 2.0),
        "clear": (store.clear, 2.0),
        "ask": (lambda: engine.ask("what comes after [item 0 1]"), 2.5),
    }
    each_fails_in_time(pid, calls, slack=2.0)  # a thread's wake-up on 2 busy cores; a missing limit hangs
    fresh = open_store(settings, "s")
    assert fresh.count_nodes() == 200 and fresh.count_relationships() == 199
    assert [a["name"] for a in engine.ask("what comes after [item 0 1]").anchors] == ["item 0 1"]
    fresh.close()
    engine.close()
