"""The ``graphraft`` command, assembled from one module per command group. Every user
mistake ends in one line on stderr and a non-zero exit."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from graphraft.cli.ask import ask_cmd, serve_cmd
from graphraft.cli.common import run_guarded
from graphraft.cli.db import db_app
from graphraft.cli.demo import demo_cmd
from graphraft.cli.evaluate import eval_command
from graphraft.cli.graph import embed_cmd, load_app, query_cmd, schema_cmd
from graphraft.cli.neo4j import neo4j_app
from graphraft.cli.synthesize import synthesize_command
from graphraft.cli.train import train_cli

app = typer.Typer(
    help="GraphRAFT: answer questions over a knowledge graph with grounded Cypher.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode=None,
)


@app.callback()
def main_options(
    ctx: typer.Context,
    neo4j_uri: Annotated[
        Optional[str], typer.Option(help="Neo4j bolt:// or neo4j:// URI (else NEO4J_URI; else embedded).")
    ] = None,
    home: Annotated[Optional[Path], typer.Option(help="State and cache directory (GRAPHRAFT_HOME).")] = None,
    timeout_ms: Annotated[Optional[int], typer.Option(help="Read query time limit in ms.")] = None,
) -> None:
    ctx.obj = {"neo4j_uri": neo4j_uri, "home": home, "query_timeout_ms": timeout_ms}


# the graph and its servers
app.add_typer(db_app, name="db")
app.add_typer(neo4j_app, name="neo4j")
app.add_typer(load_app, name="load")
app.command("schema")(schema_cmd)
app.command("query")(query_cmd)
app.command("embed")(embed_cmd)
# the stages
app.command("synthesize")(synthesize_command)
app.command("train")(train_cli)
app.command("eval")(eval_command)
app.command("ask")(ask_cmd)
app.command("serve")(serve_cmd)
app.command("demo")(demo_cmd)


def main() -> None:
    run_guarded(app)
