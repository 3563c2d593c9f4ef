"""The embedded FalkorDB server: lifecycle, persistence, crashes, ports."""

from __future__ import annotations

import json
import os
import signal
import socket
import time

import pytest

from graphraft.errors import PortInUseError
from graphraft.graph.embedded import EmbeddedServer
from graphraft.graph.falkor import FalkorDBStore
from graphraft.graph.local_server import pid_alive
from graphraft.graph.records import NodeRecord


@pytest.fixture
def private_server(tmp_path):
    embedded = EmbeddedServer(tmp_path / "data")
    yield embedded
    embedded.stop()


def test_start_is_idempotent_and_stop_ends_the_process(private_server):
    info, started = private_server.start()
    assert started
    again, started_again = private_server.start()
    assert not started_again and again == info
    assert private_server.status() == info
    assert private_server.stop()
    assert not pid_alive(info.pid)
    assert private_server.status() is None
    assert not private_server.stop()


def test_data_survives_a_restart(private_server):
    info, _ = private_server.start()
    store = FalkorDBStore("persist", port=info.port)
    store.load_nodes([NodeRecord("n1", ("Thing",), {"name": "kept across restarts"})])
    store.close()
    private_server.stop()

    info2, started = private_server.start()
    assert started and info2.pid != info.pid
    store = FalkorDBStore("persist", port=info2.port)
    assert store.nodes_by_name("kept across restarts")[0]["id"] == "n1"
    store.close()


def test_stale_state_after_a_crash_is_replaced(private_server):
    info, _ = private_server.start()
    os.kill(info.pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while pid_alive(info.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    # The state file still names the dead process ...
    assert json.loads(private_server.state_path.read_text())["pid"] == info.pid
    # ... status notices, and start brings up a new server.
    assert private_server.status() is None
    new, started = private_server.start()
    assert started and new.pid != info.pid


def test_a_taken_port_is_refused_with_a_clear_error(tmp_path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        with pytest.raises(PortInUseError, match=f"port {port} is already in use"):
            EmbeddedServer(tmp_path / "data", port=port).start()


def test_a_garbled_state_file_counts_as_not_running_and_start_replaces_it(tmp_path):
    server = EmbeddedServer(tmp_path)
    server.state_path.write_text("{not json")
    assert server.status() is None
    try:
        info, started = server.start()
        assert started and json.loads(server.state_path.read_text())["pid"] == info.pid
    finally:
        server.stop()
