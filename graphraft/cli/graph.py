"""The commands on a graph: `graphraft load metaqa|demo|files`, `schema`, `query` and `embed`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.table import Table
from rich.text import Text

from graphraft.cli.common import GraphOption, JsonOption, err, out, settings_from
from graphraft.config import Settings
from graphraft.errors import InputFileError, InvalidInputError

load_app = typer.Typer(
    help="Load a knowledge graph (idempotent: loading twice duplicates nothing).", no_args_is_help=True
)


def _load(settings: Settings, graph: str, nodes, relationships, embed: bool, replace: bool) -> None:
    from graphraft.cli.common import RichProgress
    from graphraft.graph import open_store, remember_graph
    from graphraft.graph.embeddings import make_embedder
    from graphraft.graph.loaders import load_graph

    embedder = make_embedder(settings) if embed else None
    with open_store(settings, graph, create=True) as store:
        if replace:
            store.clear()
        report = load_graph(store, nodes, relationships, embedder=embedder, progress=RichProgress())
        remember_graph(settings, graph)
        w = report.writes
        out.print(
            f"loaded into {store.description}: {report.nodes:,} nodes, {report.relationships:,} relationships "
            f"in {report.seconds:.1f}s; created {w.nodes_created:,} nodes and {w.relationships_created:,} "
            f"relationships, set {w.properties_set:,} properties, embedded {report.embedded:,} names"
        )
        if report.missing_endpoints:
            err.print(
                f"warning: {report.missing_endpoints:,} relationships skipped: source or target id not in the graph"
            )


EmbedOption = Annotated[bool, typer.Option("--embed/--no-embed", help="Compute name embeddings.")]
ReplaceOption = Annotated[bool, typer.Option("--replace", help="Delete the graph before loading.")]


@load_app.command("metaqa")
def load_metaqa(
    ctx: typer.Context,
    path: Annotated[
        Optional[Path], typer.Option(help="MetaQA folder with kb.txt (default: ../shared/datasets/metaqa).")
    ] = None,
    graph: Annotated[str, typer.Option("--graph", "-g", help="Graph name.")] = "metaqa",
    embed: EmbedOption = True,
    replace: ReplaceOption = False,
) -> None:
    """Load the MetaQA movie knowledge graph (133,582 triples)."""
    from graphraft.graph.loaders.metaqa import default_metaqa_dir, read_kb

    root = path or default_metaqa_dir()
    if root is None:
        raise InputFileError("MetaQA not found: pass --path DIR (the folder that holds kb.txt)")
    nodes, rels = read_kb(Path(root) / "kb.txt")
    _load(settings_from(ctx), graph, nodes, rels, embed, replace)


@load_app.command("demo")
def load_demo(
    ctx: typer.Context,
    graph: Annotated[str, typer.Option("--graph", "-g")] = "demo",
    embed: EmbedOption = True,
    replace: ReplaceOption = False,
) -> None:
    """Load the demo graph shipped with GraphRAFT (books, authors, publishers, ...)."""
    from graphraft.graph.loaders.demo import demo_files
    from graphraft.graph.loaders.files import read_nodes, read_relationships

    nodes_file, rels_file, _ = demo_files()
    _load(settings_from(ctx), graph, read_nodes(nodes_file), read_relationships(rels_file), embed, replace)


@load_app.command("files")
def load_files(
    ctx: typer.Context,
    nodes: Annotated[Path, typer.Option("--nodes", help="Nodes file (.csv or .jsonl).")],
    relationships: Annotated[
        Optional[Path], typer.Option("--relationships", help="Relationships file (.csv or .jsonl).")
    ] = None,
    graph: Annotated[str, typer.Option("--graph", "-g")] = "graphraft",
    embed: EmbedOption = True,
    replace: ReplaceOption = False,
) -> None:
    """Load your own graph from CSV or JSONL files (format: README, 'Loading your own graph')."""
    from graphraft.graph.loaders.files import read_nodes, read_relationships

    node_rows = read_nodes(nodes)
    rel_rows = read_relationships(relationships) if relationships else []
    _load(settings_from(ctx), graph, node_rows, rel_rows, embed, replace)


def schema_cmd(
    ctx: typer.Context,
    graph: GraphOption = None,
    as_json: JsonOption = False,
    refresh: Annotated[bool, typer.Option("--refresh", help="Ignore the cached schema.")] = False,
) -> None:
    """Print labels, relationship types and (label)-[type]->(label) patterns with counts."""
    from graphraft.graph import open_store

    with open_store(settings_from(ctx), graph) as store:
        schema = store.schema(refresh=refresh)
        if as_json:
            out.print_json(schema.model_dump_json())
            return
        print_schema(store.description, schema)


def print_schema(where: str, schema) -> None:
    if not schema.labels:
        out.print(f"{where}: the graph is empty (load one with `graphraft load demo`)")
        return
    out.print(f"[bold]{where}[/]: {schema.node_count:,} nodes, {schema.relationship_count:,} relationships")
    # names from the database are cells of Text, never markup
    labels = Table("label", "nodes", "named by", "properties", title="Labels")
    for label, count in schema.labels.items():
        found = schema.properties.get(label, {})
        described = ", ".join(
            f"{key} ({info.type}{' of numbers' if info.numeric else ' of dates' if info.dates else ''}"
            f"{', unique' if info.unique else ''}"
            f"{': ' + ' | '.join(map(str, info.values)) if info.few else ''})"
            for key, info in found.items()
        )
        labels.add_row(Text(label), f"{count:,}", Text(schema.names.get(label) or "-"), Text(described))
    types = Table("relationship type", "count", title="Relationship types")
    for rel_type, count in schema.relationship_types.items():
        types.add_row(Text(rel_type), f"{count:,}")
    patterns = Table("pattern", "count", title="Patterns")
    for pattern in schema.patterns:
        patterns.add_row(Text(str(pattern)), f"{pattern.count:,}")
    for table in (labels, types, patterns):
        out.print(table)


def query_cmd(
    ctx: typer.Context,
    cypher: Annotated[str, typer.Argument(help="A read-only Cypher query.")],
    graph: GraphOption = None,
    as_json: JsonOption = False,
    limit: Annotated[int, typer.Option(help="Rows to print.")] = 25,
) -> None:
    """Run one read-only Cypher query (writes are refused) and print the rows."""
    from graphraft.graph import open_store

    if not cypher.strip():
        raise InvalidInputError("empty query")
    with open_store(settings_from(ctx), graph) as store:
        rows = store.read_untrusted(cypher)
    if as_json:
        out.print_json(json.dumps(rows, default=str))
        return
    print_rows(rows, limit)


def print_rows(rows: list[dict], limit: int = 25) -> None:
    if not rows:
        out.print("(no rows)")
        return
    # values and column names as Text: a value holding `[red]` or `[1999]` prints as it is
    table = Table()
    for key in rows[0]:
        table.add_column(Text(str(key)))
    for row in rows[:limit]:
        table.add_row(*(Text(str(v)) for v in row.values()))
    out.print(table)
    if len(rows) > limit:
        out.print(f"... {len(rows) - limit} more rows")


def embed_cmd(ctx: typer.Context, graph: GraphOption = None) -> None:
    """Prepare a graph's names: the exact-match key and indexes, and name embeddings (with the
    vector index) for nodes that lack them; a graph you loaded yourself works after this."""
    from graphraft.cli.common import RichProgress
    from graphraft.graph import open_store
    from graphraft.graph.embeddings import embed_missing_names, make_embedder

    settings = settings_from(ctx)
    with open_store(settings, graph) as store:  # a missing graph fails before a model loads
        embedder = make_embedder(settings)
        if embedder is None:
            raise InvalidInputError("no embedder configured (GRAPHRAFT_EMBEDDER=none)")
        keyed = store.prepare_names()
        count = embed_missing_names(store, embedder, progress=RichProgress())
        store.sync()
    out.print(f"embedded {count:,} names" + (f"; {keyed:,} names keyed for exact matching" if keyed else ""))
