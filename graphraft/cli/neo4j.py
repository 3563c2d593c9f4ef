"""`graphraft neo4j start|stop|status|env`: the Neo4j 5 server GraphRAFT runs from Maven
Central's jars (``graphraft.graph.neo4j_server``)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console

from graphraft.cli.common import settings_from

neo4j_app = typer.Typer(
    help="Run a Neo4j 5 Community server from Maven Central's jars (needs Java 17+ and Maven).",
    no_args_is_help=True,
)
out = Console(highlight=False)

DataDirOption = Annotated[
    Optional[Path], typer.Option("--data-dir", help="The server's data folder (default: HOME/neo4j).")
]
PortOption = Annotated[Optional[int], typer.Option("--port", help="Bolt port (default: a free one, kept after).")]


def _server(ctx: typer.Context, data_dir: Path | None, port: int | None = None):
    from graphraft.graph import managed_neo4j

    return managed_neo4j(settings_from(ctx, neo4j_data_dir=data_dir, neo4j_port=port))


def _exports(server, info) -> str:
    return f"export NEO4J_URI={server.uri(info)} NEO4J_PASSWORD_FILE={shlex.quote(str(server.password_path))}"


@neo4j_app.command("start")
def start(ctx: typer.Context, data_dir: DataDirOption = None, port: PortOption = None) -> None:
    """Start the server (a no-op when it already runs); the first start fetches Neo4j with Maven."""
    server = _server(ctx, data_dir, port)
    info, started = server.start()
    verb = "started" if started else "already running"
    out.print(f"Neo4j {verb}: {server.uri(info)} (pid {info.pid}, data {server.data_dir})")
    out.print(f"every command uses it with:\n  {_exports(server, info)}")


@neo4j_app.command("load-dump")
def load_dump(
    ctx: typer.Context,
    dump: Annotated[Path, typer.Argument(help="A Neo4j 5 database dump (neo4j-admin database dump).")],
    data_dir: DataDirOption = None,
) -> None:
    """Replace the (stopped) server's database with a dump; start it after."""
    server = _server(ctx, data_dir)
    server.load_dump(dump)
    out.print(f"loaded {dump} into the Neo4j in {server.data_dir}; `graphraft neo4j start` serves it")


@neo4j_app.command("stop")
def stop(ctx: typer.Context, data_dir: DataDirOption = None) -> None:
    """Stop the server cleanly."""
    server = _server(ctx, data_dir)
    out.print("Neo4j stopped" if server.stop() else "Neo4j is not running")


@neo4j_app.command("status")
def status(
    ctx: typer.Context,
    data_dir: DataDirOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON for machines.")] = False,
) -> None:
    """Say whether the server runs, where, and whether it died without a stop (exit 1 if not running)."""
    server = _server(ctx, data_dir)
    info = server.status()
    crashed = info is None and server.crashed()
    if as_json:
        out.print_json(
            json.dumps(
                {
                    "running": info is not None,
                    "uri": server.uri(info) if info else None,
                    "pid": info.pid if info else None,
                    "data_dir": str(server.data_dir),
                    "password_file": str(server.password_path),
                    "crashed": crashed,
                }
            )
        )
    elif info:
        out.print(f"running: {server.uri(info)} (pid {info.pid}, data {server.data_dir})")
    elif crashed:
        out.print(f"not running: it stopped without `graphraft neo4j stop` (log: {server.log_path})")
    else:
        out.print(f"not running (data {server.data_dir})")
    if info is None:
        raise typer.Exit(1)


@neo4j_app.command("env")
def env(ctx: typer.Context, data_dir: DataDirOption = None) -> None:
    """Print the exports that point every command at the running server: eval "$(graphraft neo4j env)"."""
    from graphraft.errors import DatabaseUnavailableError

    server = _server(ctx, data_dir)
    info = server.status()
    if info is None:
        raise DatabaseUnavailableError(f"Neo4j is not running in {server.data_dir}: graphraft neo4j start")
    print(_exports(server, info))
