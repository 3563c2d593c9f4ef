"""The embedded FalkorDB server: lifecycle, persistence, crashes, ports."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import time
from pathlib import Path

import pytest

from graphraft.errors import DatabaseUnavailableError, PortInUseError
from graphraft.graph import embedded_store
from graphraft.graph.embedded import EmbeddedServer
from graphraft.graph.falkor import FalkorDBStore
from graphraft.graph.local_server import generate_password, pid_alive
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
    store = embedded_store(private_server, "persist", info)
    store.load_nodes([NodeRecord("n1", ("Thing",), {"name": "kept across restarts"})])
    store.close()
    private_server.stop()

    info2, started = private_server.start()
    assert started and info2.pid != info.pid
    store = embedded_store(private_server, "persist", info2)
    assert store.nodes_by_name("kept across restarts")[0]["id"] == "n1"
    store.close()


def test_generated_passwords_are_never_read_as_an_option():
    """Both local servers' passwords come from here; one that began with "-" was taken for an
    option by Neo4j's admin tool (a CI run failed on it, one start in 64)."""
    drawn = {generate_password() for _ in range(2000)}
    assert len(drawn) == 2000
    assert all(len(p) >= 32 and p.isalnum() and p.isascii() for p in drawn)


def test_the_server_is_private_to_its_user_and_asks_for_its_password(private_server):
    info, _ = private_server.start()
    data = private_server.data_dir
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    for secret in (private_server.password_path, data / "redis.conf"):
        assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    password = private_server.password()
    assert password and len(password) >= 24
    # not on the command line, where every local user can read it
    assert password not in Path(f"/proc/{info.pid}/cmdline").read_text()

    # only 127.0.0.1 is served
    def local_addresses(table: str) -> set[str]:
        lines = Path(f"/proc/net/{table}").read_text().splitlines()[1:] if Path(f"/proc/net/{table}").exists() else []
        return {line.split()[1] for line in lines if line.split()[1].endswith(f":{info.port:04X}")}

    assert local_addresses("tcp") == {f"0100007F:{info.port:04X}"}
    assert local_addresses("tcp6") == set()
    # a client without the password, or with another, is refused with a line that says so
    with pytest.raises(DatabaseUnavailableError, match="requires a password: set GRAPHRAFT_FALKORDB_PASSWORD"):
        FalkorDBStore("locked", port=info.port)
    with pytest.raises(DatabaseUnavailableError, match="refused the password"):
        FalkorDBStore("locked", port=info.port, password="not-" + password)
    store = embedded_store(private_server, "locked", info)
    store.load_nodes([NodeRecord("n1", ("Thing",), {"name": "behind a password"})])
    assert store.nodes_by_name("behind a password")[0]["id"] == "n1"
    store.close()
    # the password is kept across restarts: what other programs were given still works
    private_server.stop()
    private_server.start()
    assert private_server.password() == password


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
