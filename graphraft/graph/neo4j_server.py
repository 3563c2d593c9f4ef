"""A real Neo4j 5 Community server that GraphRAFT starts itself: ``graphraft neo4j start``.

The jars come from Maven Central, pinned by ``graphraft/data/neo4j/pom.xml`` and resolved
once by Maven into ``GRAPHRAFT_HOME/cache/neo4j`` (nothing is built; ``java`` and ``mvn`` must
be installed). The server is Neo4j's own entry point (``org.neo4j.server.CommunityEntryPoint``)
started with the JVM flags Neo4j's launcher passes and a configuration written here: Bolt on
127.0.0.1 at a free port (kept across restarts while it stays free), HTTP off, no usage
report, authentication on with a generated password kept in ``DATA_DIR/password`` (readable
by the user only), data and logs under the data directory, a heap and page cache for a small
machine. The lifecycle promises (one server per data directory, a start that returns when it
answers, a clean stop, a crash noticed) are ``LocalServer``'s.

Every command then uses it as any Neo4j: ``NEO4J_URI=bolt://127.0.0.1:PORT`` and
``NEO4J_PASSWORD_FILE=DATA_DIR/password`` (``graphraft neo4j env`` prints both).
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import socket
import subprocess
import tempfile
import xml.etree.ElementTree as ElementTree
from importlib import resources
from pathlib import Path

from filelock import FileLock, Timeout

from graphraft.errors import ConfigurationError, DatabaseUnavailableError, InputFileError
from graphraft.graph.local_server import (
    LocalServer,
    ServerInfo,
    free_port,
    generate_password,
    port_taken,
    write_atomically,
)

logger = logging.getLogger(__name__)

ENTRY_POINT = "org.neo4j.server.CommunityEntryPoint"
ADMIN_TOOL = "org.neo4j.cli.AdminTool"
USERNAME = "neo4j"
PASSWORD_FILE = "password"
#: the database of Neo4j Community (one user database)
DATABASE = "neo4j"
PORT_FILE = "bolt.port"
MIN_JAVA = 17
INSTALL_HINT = (
    "install them (Debian: apt-get install openjdk-17-jre-headless maven), "
    "or run Neo4j with docker compose (README: three ways to a Neo4j)"
)

# What Neo4j 5's own launcher passes (its neo4j.conf's server.jvm.additional, plus the
# bootloader's -Dfile.encoding); heap sizes are added from the settings.
JVM_FLAGS = [
    "-XX:+UseG1GC",
    "-XX:-OmitStackTraceInFastThrow",
    "-XX:+AlwaysPreTouch",
    "-XX:+UnlockExperimentalVMOptions",
    "-XX:+TrustFinalNonStaticFields",
    "-XX:+DisableExplicitGC",
    "-Djdk.nio.maxCachedBufferSize=1024",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Djdk.tls.ephemeralDHKeySize=2048",
    "-Djdk.tls.rejectClientInitiatedRenegotiation=true",
    "-XX:FlightRecorderOptions=stackdepth=256",
    "-XX:+UnlockDiagnosticVMOptions",
    "-XX:+DebugNonSafepoints",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--enable-native-access=ALL-UNNAMED",
    "-Dlog4j2.disable.jmx=true",
    "-Dfile.encoding=UTF-8",
]


def pom_path() -> Path:
    return Path(str(resources.files("graphraft") / "data" / "neo4j" / "pom.xml"))


def neo4j_version() -> str:
    """The pinned Neo4j version (the pom's ``neo4j.version`` property)."""
    root = ElementTree.parse(pom_path()).getroot()
    found = root.find("{http://maven.apache.org/POM/4.0.0}properties/{http://maven.apache.org/POM/4.0.0}neo4j.version")
    if found is None or not found.text:
        raise ConfigurationError(f"{pom_path()} does not pin neo4j.version")
    return found.text.strip()


def java_command() -> str:
    """``java`` (JAVA_HOME's first), checked to be version 17 or newer."""
    home = os.environ.get("JAVA_HOME")
    java = str(Path(home) / "bin" / "java") if home and (Path(home) / "bin" / "java").exists() else shutil.which("java")
    if java is None:
        raise DatabaseUnavailableError(
            f"graphraft neo4j needs Java {MIN_JAVA}+ and `java` was not found: {INSTALL_HINT}"
        )
    try:
        shown = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30).stderr
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise DatabaseUnavailableError(f"cannot run {java} -version: {exc}") from None
    match = re.search(r'version "(\d+)(?:\.(\d+))?', shown)
    major = int(match.group(1)) if match else 0
    if major == 1 and match.group(2):  # "1.8" is Java 8
        major = int(match.group(2))
    if major < MIN_JAVA:
        raise DatabaseUnavailableError(
            f"graphraft neo4j needs Java {MIN_JAVA}+; {java} is {(shown.splitlines() or ['?'])[0]}: {INSTALL_HINT}"
        )
    return java


def resolve_classpath(cache_dir: Path, timeout_s: float = 900.0) -> str:
    """The server's classpath: Maven resolves the pinned pom once into ``cache_dir`` (its own
    local repository), later calls read the file it wrote."""
    version = neo4j_version()
    cache_dir = Path(cache_dir)
    classpath_file = cache_dir / f"classpath-{version}.txt"

    def cached() -> str | None:
        try:
            text = classpath_file.read_text().strip()
        except OSError:
            return None
        jars = text.split(os.pathsep)
        return text if jars and all(Path(jar).is_file() for jar in jars) else None

    if (found := cached()) is not None:
        return found
    mvn = shutil.which("mvn")
    if mvn is None:
        raise DatabaseUnavailableError(
            f"graphraft neo4j needs Maven to fetch Neo4j {version} once and `mvn` was not found: {INSTALL_HINT}"
        )
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        with FileLock(cache_dir / "resolve.lock", timeout=timeout_s + 60):
            if (found := cached()) is not None:  # another command resolved it meanwhile
                return found
            pom = cache_dir / f"pom-{version}.xml"
            shutil.copyfile(pom_path(), pom)
            logger.info("fetching Neo4j %s with Maven into %s (once)", version, cache_dir)
            command = [
                mvn,
                "-q",
                "-B",
                "-f",
                str(pom),
                f"-Dmaven.repo.local={cache_dir / 'maven'}",
                "dependency:build-classpath",
                f"-Dmdep.outputFile={classpath_file}",
            ]
            proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s)
            if proc.returncode != 0 or (found := cached()) is None:
                lines = [ln for ln in (proc.stdout + proc.stderr).splitlines() if "ERROR" in ln] or ["no classpath"]
                raise DatabaseUnavailableError(f"Maven could not fetch Neo4j {version}: {lines[0].strip()}")
            return found
    except subprocess.TimeoutExpired:
        raise DatabaseUnavailableError(f"Maven did not fetch Neo4j {version} within {timeout_s:.0f}s") from None
    except Timeout:
        raise DatabaseUnavailableError(f"another command has been fetching Neo4j into {cache_dir} too long") from None
    except OSError as exc:
        raise DatabaseUnavailableError(f"cannot fetch Neo4j into {cache_dir}: {exc}") from None


def read_password_file(path: Path) -> str:
    try:
        return Path(path).read_text().strip()
    except OSError as exc:
        raise ConfigurationError(f"cannot read the Neo4j password file {path}: {exc.strerror}") from None


class Neo4jServer(LocalServer):
    """Start, find and stop the GraphRAFT-managed Neo4j server for one data directory."""

    kind = "Neo4j"
    log_name = "logs/neo4j.log"
    stop_command = "graphraft neo4j stop"

    def __init__(
        self,
        data_dir: Path,
        jar_cache: Path,
        port: int = 0,
        heap: str = "1g",
        pagecache: str = "512m",
        start_timeout: float = 180.0,
    ):
        super().__init__(data_dir, port=port, start_timeout=start_timeout, load_timeout=start_timeout)
        self.jar_cache = Path(jar_cache)
        self.heap, self.pagecache = heap, pagecache
        for name, value in (("heap", heap), ("page cache", pagecache)):
            if not re.fullmatch(r"\d+[kmgKMG]?", str(value)):
                raise ConfigurationError(f"the Neo4j {name} size must look like 512m or 2g, got {value!r}")

    # ------------------------------------------------------------------ what clients need
    @property
    def password_path(self) -> Path:
        return self.data_dir / PASSWORD_FILE

    def password(self) -> str:
        return read_password_file(self.password_path)

    @staticmethod
    def uri(info: ServerInfo) -> str:
        return f"bolt://{info.host}:{info.port}"

    # ------------------------------------------------------------------ LocalServer hooks
    def _prepare(self) -> None:
        self._java = java_command()
        self._classpath = resolve_classpath(self.jar_cache)
        for folder in ("conf", "data", "logs", "run", "import"):
            (self.data_dir / folder).mkdir(exist_ok=True)
        if not (self.data_dir / "data" / "dbms" / "auth.ini").exists():
            self._set_initial_password()

    def _set_initial_password(self) -> None:
        """A generated password, in a file only the user can read, set with Neo4j's admin tool
        before the first start (its argument travels in a private argument file, not argv)."""
        password = generate_password()
        write_atomically(self.password_path, password + "\n", mode=0o600)
        self._write_config(self._choose_port())
        arguments = self.data_dir / ".admin-args"
        write_atomically(arguments, f"dbms\nset-initial-password\n{password}\n", mode=0o600)
        try:
            proc = subprocess.run(
                [self._java, "-cp", self._classpath, ADMIN_TOOL, f"@{arguments}"],
                capture_output=True,
                text=True,
                timeout=120,
                env=self._env(),
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise DatabaseUnavailableError(f"cannot set the Neo4j password in {self.data_dir}: {exc}") from None
        finally:
            arguments.unlink(missing_ok=True)
        if proc.returncode != 0:
            last = (proc.stderr.strip() or proc.stdout.strip()).splitlines()[-1:] or ["?"]
            raise DatabaseUnavailableError(f"Neo4j's admin tool could not set the password: {last[0]}")

    def load_dump(self, dump: Path, timeout_s: float = 600.0) -> None:
        """Replace the server's database with a Neo4j 5 dump (``neo4j-admin database load``),
        with the server stopped; the dump's graph is then the whole database, as its authors
        built it (give its nodes a graph's label to ask over it: README, "A graph you loaded
        yourself")."""
        dump = Path(dump)
        if not dump.is_file():
            raise InputFileError(f"{dump}: Neo4j dump not found")
        if self.status() is not None:
            raise ConfigurationError(
                f"the Neo4j in {self.data_dir} is running: stop it (graphraft neo4j stop) before loading a dump"
            )
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._prepare()
        self._write_config(self._choose_port())
        with tempfile.TemporaryDirectory(dir=self.data_dir) as folder:
            # the admin tool reads `<database>.dump` from a folder
            os.symlink(dump.resolve(), Path(folder) / f"{DATABASE}.dump")
            command = [
                self._java,
                "-cp",
                self._classpath,
                ADMIN_TOOL,
                "database",
                "load",
                f"--from-path={folder}",
                "--overwrite-destination=true",
                DATABASE,
            ]
            try:
                proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, env=self._env())
            except (OSError, subprocess.TimeoutExpired) as exc:
                raise DatabaseUnavailableError(f"cannot load {dump} into the Neo4j in {self.data_dir}: {exc}") from None
        if proc.returncode != 0:
            lines = [ln.strip() for ln in (proc.stderr + proc.stdout).splitlines() if ln.strip()] or ["?"]
            reason = next((ln for ln in lines if "rror" in ln or "ailed" in ln), lines[-1])
            raise DatabaseUnavailableError(f"Neo4j's admin tool could not load {dump}: {reason}")

    def _choose_port(self) -> int:
        if self.requested_port:
            return self.requested_port
        try:
            previous = int((self.data_dir / PORT_FILE).read_text())
        except (OSError, ValueError):
            previous = 0
        port = previous if previous and not port_taken(previous) else free_port()
        if previous and port != previous:
            logger.warning("Neo4j's previous port %d is taken; it now listens on %d", previous, port)
        write_atomically(self.data_dir / PORT_FILE, str(port))
        return port

    def _env(self) -> dict[str, str]:
        return {**os.environ, "NEO4J_HOME": str(self.data_dir), "NEO4J_CONF": str(self.data_dir / "conf")}

    def _write_config(self, port: int) -> None:
        folder = self.data_dir
        lines = [
            "# Written by graphraft neo4j start at every start; edits are replaced.",
            "server.default_listen_address=127.0.0.1",
            f"server.bolt.listen_address=127.0.0.1:{port}",
            f"server.bolt.advertised_address=127.0.0.1:{port}",
            "server.http.enabled=false",
            "server.https.enabled=false",
            "dbms.security.auth_enabled=true",
            "dbms.usage_report.enabled=false",
            f"server.directories.data={folder / 'data'}",
            f"server.directories.logs={folder / 'logs'}",
            f"server.directories.run={folder / 'run'}",
            f"server.directories.import={folder / 'import'}",
            "dbms.security.allow_csv_import_from_file_urls=false",
            f"server.memory.heap.initial_size={self.heap}",
            f"server.memory.heap.max_size={self.heap}",
            f"server.memory.pagecache.size={self.pagecache}",
            "db.shutdown_transaction_end_timeout=2s",
            # the monitor that ends a transaction past its timeout looks every 2 s by default, so a
            # 50 ms limit could end anywhere up to 2 s late; every 100 ms keeps limits close
            "db.transaction.monitor.check.interval=100ms",
            # keep-alive messages every 2 s while a query runs; the driver takes the hint and gives
            # up on a connection silent for 2 x 2 s (a stalled server) instead of 2 minutes
            "server.bolt.connection_keep_alive=2s",
            "server.bolt.connection_keep_alive_probes=2",
        ]
        write_atomically(folder / "conf" / "neo4j.conf", "\n".join(lines) + "\n")

    def _launch(self, port: int, lock_fd: int) -> subprocess.Popen:
        self._write_config(port)
        # the classpath (200-odd jars) in an argument file keeps `ps` readable
        classpath_args = self.data_dir / "run" / "classpath.args"
        write_atomically(classpath_args, f'-cp "{self._classpath}"\n')
        args = [
            self._java,
            f"-Xms{self.heap}",
            f"-Xmx{self.heap}",
            *JVM_FLAGS,
            f"@{classpath_args}",
            ENTRY_POINT,
            f"--home-dir={self.data_dir}",
            f"--config-dir={self.data_dir / 'conf'}",
        ]
        console = (self.data_dir / "logs" / "console.log").open("ab")
        try:
            # start_new_session: the server outlives this command and ignores its Ctrl-C;
            # pass_fds: the server inherits the lock and holds it until it exits.
            return subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=console,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                cwd=self.data_dir,
                pass_fds=(lock_fd,),
                env=self._env(),
            )
        finally:
            console.close()

    def _probe(self, port: int) -> str | None:
        """ "ready" once Bolt accepts the password and the default database answers."""
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        except OSError:
            return None
        import neo4j
        from neo4j.exceptions import AuthError, Neo4jError, ServiceUnavailable

        try:
            password = self.password()
        except ConfigurationError:
            return None
        try:
            with neo4j.GraphDatabase.driver(
                f"bolt://127.0.0.1:{port}", auth=(USERNAME, password), connection_timeout=2.0
            ) as driver:
                driver.execute_query("RETURN 1")
            return "ready"
        except AuthError:
            raise DatabaseUnavailableError(
                f"the Neo4j in {self.data_dir} refuses the password in {self.password_path}"
            ) from None
        except (ServiceUnavailable, Neo4jError, OSError):
            return None

    def _after_start(self, port: int, deadline: float) -> None:
        logger.info("Neo4j started: bolt://127.0.0.1:%d (data %s)", port, self.data_dir)
