"""A database server GraphRAFT runs itself in a data directory: the embedded FalkorDB
(``embedded.py``) and the Neo4j server started from Maven Central's jars (``neo4j_server.py``).

What every such server guarantees, and how:

- **One server per data directory.** The server process holds an exclusive lock on
  ``DATA_DIR/server.lock`` for its whole life (the descriptor is inherited at start), and
  starts are serialised by ``DATA_DIR/start.lock``: simultaneous commands start one server
  and the others wait for it and use it. A lock held means a server lives, however slowly
  it answers, so ``status`` never forgets a busy server; a lock free means none does,
  whatever a stale ``server.json`` says.
- **A start returns when the server answers**, and a server that exits while starting is
  an error that quotes its log.
- **A stop is clean**: SIGTERM, then the wait until the process and the lock are gone.
- **A crash is noticed**: the next ``status`` finds the lock free and reports no server;
  the next start replaces the stale state.

State (pid, port) lives in ``DATA_DIR/server.json`` so every GraphRAFT command finds the
same server.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import secrets
import signal
import socket
import subprocess
import time
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass
from pathlib import Path

from filelock import FileLock, Timeout

from graphraft.errors import DatabaseUnavailableError, PortInUseError

logger = logging.getLogger(__name__)

STATE_FILE = "server.json"
SERVER_LOCK = "server.lock"  # held by the running server
START_LOCK = "start.lock"  # held while a command starts or stops the server


@dataclass(frozen=True)
class ServerInfo:
    pid: int
    port: int
    host: str = "127.0.0.1"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def port_taken(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return True
        return False


def pid_alive(pid: int) -> bool:
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


def cpu_seconds(pid: int) -> float | None:
    """The CPU time a process has used (Linux's /proc), or None where it cannot be read."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime
    except (OSError, IndexError, ValueError):
        return None


def write_atomically(path: Path, text: str, mode: int | None = None) -> None:
    """Write a small file so that a reader never sees half of it (``mode``: its permissions
    from the start, for a secret)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    with os.fdopen(os.open(tmp, flags, 0o600 if mode is None else mode), "w") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    if mode is None:
        tmp.chmod(0o644)
    os.replace(tmp, path)


def generate_password() -> str:
    """A random password (192 bits) of hex digits only: no character a command line, a config
    file or a URL reads specially (a leading ``-`` made Neo4j's admin tool take it for an option)."""
    return secrets.token_hex(24)


class LocalServer(ABC):
    """Start, find and stop one server process for one data directory."""

    #: how messages name it ("embedded FalkorDB", "Neo4j")
    kind: str = "server"
    #: its log, inside the data directory
    log_name: str = "server.log"
    #: the command that stops it, for messages
    stop_command: str = "graphraft db stop"
    #: how many times a new server that stops answering is killed and started afresh
    start_attempts: int = 1

    def __init__(self, data_dir: Path, port: int = 0, start_timeout: float = 30.0, load_timeout: float = 1800.0):
        self.data_dir = Path(data_dir)
        self.requested_port = port
        # how long a new server may take to answer at all, and to read its data once it does
        self.start_timeout, self.load_timeout = start_timeout, load_timeout

    # ------------------------------------------------------------------ what a server supplies
    @abstractmethod
    def _launch(self, port: int, lock_fd: int) -> subprocess.Popen:
        """Start the process (it must inherit ``lock_fd`` and outlive this command)."""

    @abstractmethod
    def _probe(self, port: int) -> str | None:
        """ "ready", "loading" (answering, still reading its data) or None (no answer yet)."""

    def _prepare(self) -> None:  # noqa: B027 - a hook: nothing to do unless a server says so
        """Make everything the first start needs (configuration, credentials), under the start lock."""

    def _after_start(self, port: int, deadline: float) -> None:  # noqa: B027 - a hook, as above
        """Work to do once the new server answers, before the start is reported."""

    def _choose_port(self) -> int:
        return self.requested_port or free_port()

    # ------------------------------------------------------------------ paths
    @property
    def state_path(self) -> Path:
        return self.data_dir / STATE_FILE

    @property
    def log_path(self) -> Path:
        return self.data_dir / self.log_name

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
            return info if info is not None and pid_alive(info.pid) else None
        if info is not None and pid_alive(info.pid) and self._probe(info.port) == "ready":
            return info  # started by a version without the lock: still the one to use
        return None

    def crashed(self) -> bool:
        """Whether a server was started here and died without being stopped."""
        return self.status() is None and self._read_state() is not None

    # ------------------------------------------------------------------ start / stop
    def _start_lock(self) -> FileLock:
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            self.data_dir.chmod(0o700)  # the data and any credentials are the user's alone
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
                            f"the {self.kind} server for {self.data_dir} already runs on port {running.port} "
                            f"(pid {running.pid}), not {self.requested_port}; stop it first ({self.stop_command})"
                        )
                    return running, False
                self._prepare()
                attempt = 1
                while (info := self._start_new(last=attempt >= self.start_attempts)) is None:
                    logger.warning("%s stopped answering while starting; starting it again", self.kind)
                    attempt += 1
                return info, True
        except Timeout:
            raise DatabaseUnavailableError(
                f"another command has been starting or stopping the server in {self.data_dir} for "
                f"{self._lock_wait:.0f}s; if none runs, remove {self.data_dir / START_LOCK}"
            ) from None

    def _start_new(self, last: bool = True) -> ServerInfo | None:
        """Launch the server and wait until it is ready. A server that stays silent for
        start_timeout (not even "still loading") without using the CPU is killed: then None, or
        an error if ``last``."""
        port = self._choose_port()
        if port_taken(port):
            raise PortInUseError(f"port {port} is already in use; choose another port")
        lock = (self.data_dir / SERVER_LOCK).open("a")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)  # only status checks compete, for an instant
            proc = self._launch(port, lock.fileno())
        finally:
            lock.close()  # our copy; the server's keeps the lock
        started = time.monotonic()
        deadline = started + self.start_timeout
        worked = cpu_seconds(proc.pid)
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                err = (proc.stderr.read() or b"").decode(errors="replace").strip() if proc.stderr else ""
                raise DatabaseUnavailableError(
                    f"{self.kind} exited with code {proc.returncode}: "
                    f"{(err.splitlines() or [''])[-1] or self._log_tail()} (log: {self.log_path})"
                )
            state = self._probe(port)
            now_worked = cpu_seconds(proc.pid)
            busy = now_worked is not None and worked is not None and now_worked > worked + 0.25
            if state == "loading" or busy:
                # A server reading its data answers "loading" now and then, or works silently
                # (FalkorDB builds a large graph's indexes without answering for a while); one
                # silent and idle for start_timeout is stuck (FalkorDB 4.16 can deadlock while
                # loading, under load) and is started again.
                deadline = min(started + self.load_timeout, max(deadline, time.monotonic() + self.start_timeout))
                worked = now_worked if busy else worked
            elif state == "ready":
                self._after_start(port, time.monotonic() + self.load_timeout)
                info = ServerInfo(pid=proc.pid, port=port)
                write_atomically(self.state_path, json.dumps(asdict(info)))
                return info
            time.sleep(0.05)
        proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=10)  # it holds the server lock until it is gone
        if not last:
            return None
        raise DatabaseUnavailableError(
            f"{self.kind} did not become ready on port {port} within {deadline - started:.0f}s (log: {self.log_path})"
        )

    def stop(self, timeout: float = 60.0) -> bool:
        """Stop the server cleanly (SIGTERM). Returns False if none was running."""
        try:
            with self._start_lock():
                info = self.status()
                if info is None:
                    self.state_path.unlink(missing_ok=True)
                    return False
                with contextlib.suppress(ProcessLookupError):
                    os.kill(info.pid, signal.SIGTERM)
                deadline = time.monotonic() + timeout
                # the lock is free once the server and any child it forked are gone
                while time.monotonic() < deadline and (pid_alive(info.pid) or self._lock_held()):
                    time.sleep(0.05)
                if pid_alive(info.pid):
                    raise DatabaseUnavailableError(f"{self.kind} (pid {info.pid}) did not stop within {timeout:.0f}s")
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
