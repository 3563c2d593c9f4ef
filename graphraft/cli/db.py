"""`graphraft db start|stop|status|env`: the embedded FalkorDB server."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Annotated, Optional

import typer

from graphraft.cli.common import JsonOption, out, settings_from

db_app = typer.Typer(help="Manage the embedded FalkorDB server.", no_args_is_help=True)


def _server(ctx: typer.Context, data_dir: Path | None, port: int | None):
    from graphraft.graph import embedded_server

    settings = settings_from(ctx, embedded_data_dir=data_dir, embedded_port=port)
    return embedded_server(settings)


DataDirOption = Annotated[Optional[Path], typer.Option("--data-dir", help="Server data directory.")]
PortOption = Annotated[Optional[int], typer.Option("--port", help="Port (default: a free one).")]


@db_app.command("start")
def db_start(ctx: typer.Context, data_dir: DataDirOption = None, port: PortOption = None) -> None:
    """Start the embedded server (a no-op when it already runs)."""
    server = _server(ctx, data_dir, port)
    info, started = server.start()
    verb = "started" if started else "already running"
    out.print(f"embedded FalkorDB {verb}: 127.0.0.1:{info.port} (pid {info.pid}, data {server.data_dir})")


@db_app.command("env")
def db_env(ctx: typer.Context, data_dir: DataDirOption = None) -> None:
    """Print the exports that point another program's GraphRAFT at the running server:
    eval "$(graphraft db env)" (commands with the same GRAPHRAFT_HOME find it themselves)."""
    from graphraft.errors import DatabaseUnavailableError

    server = _server(ctx, data_dir, None)
    info = server.status()
    if info is None:
        raise DatabaseUnavailableError(f"the embedded FalkorDB is not running in {server.data_dir}: graphraft db start")
    exports = f"export GRAPHRAFT_FALKORDB_PORT={info.port}"
    if server.password() is not None:
        exports += f" GRAPHRAFT_FALKORDB_PASSWORD_FILE={shlex.quote(str(server.password_path))}"
    print(exports)


@db_app.command("stop")
def db_stop(ctx: typer.Context, data_dir: DataDirOption = None) -> None:
    """Stop the embedded server after it saves a snapshot."""
    server = _server(ctx, data_dir, None)
    out.print("embedded FalkorDB stopped" if server.stop() else "embedded FalkorDB is not running")


@db_app.command("status")
def db_status(ctx: typer.Context, data_dir: DataDirOption = None, as_json: JsonOption = False) -> None:
    """Say whether the embedded server runs, where, and with which data directory."""
    server = _server(ctx, data_dir, None)
    info = server.status()
    if as_json:
        out.print_json(
            json.dumps(
                {
                    "running": info is not None,
                    "port": info.port if info else None,
                    "pid": info.pid if info else None,
                    "data_dir": str(server.data_dir),
                }
            )
        )
    elif info:
        out.print(f"running: 127.0.0.1:{info.port} (pid {info.pid}, data {server.data_dir})")
    else:
        out.print(f"not running (data {server.data_dir})")
    if info is None:
        raise typer.Exit(1)
