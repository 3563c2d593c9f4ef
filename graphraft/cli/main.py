"""The ``graphraft`` command. Every user mistake ends in one line on stderr and a non-zero exit."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from graphraft.cli.common import run_guarded, settings_from
from graphraft.cli.evaluate import eval_command
from graphraft.cli.neo4j import neo4j_app
from graphraft.cli.options import (
    ConfigFileOption,
    ExtractorOption,
    L1AdapterOption,
    L2AdapterOption,
    ModelOption,
    with_config_flags,
)
from graphraft.cli.synthesize import synthesize_command
from graphraft.cli.train import train_cli, train_command
from graphraft.config import Settings
from graphraft.errors import InputFileError, InvalidInputError
from graphraft.inference.config import AskConfig

app = typer.Typer(
    help="GraphRAFT: answer questions over a knowledge graph with grounded Cypher.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode=None,
)
db_app = typer.Typer(help="Manage the embedded FalkorDB server.", no_args_is_help=True)
load_app = typer.Typer(
    help="Load a knowledge graph (idempotent: loading twice duplicates nothing).", no_args_is_help=True
)
app.add_typer(db_app, name="db")
app.add_typer(load_app, name="load")
app.add_typer(neo4j_app, name="neo4j")

out = Console()
err = Console(stderr=True)

GraphOption = Annotated[
    Optional[str],
    typer.Option("--graph", "-g", help="Graph name (a FalkorDB key, a label in Neo4j); default: the last loaded."),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON for machines.")]


_settings = settings_from


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


# ------------------------------------------------------------------------------ db
def _server(ctx: typer.Context, data_dir: Path | None, port: int | None):
    from graphraft.graph import embedded_server

    settings = _settings(ctx, embedded_data_dir=data_dir, embedded_port=port)
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


# ------------------------------------------------------------------------------ load
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
    _load(_settings(ctx), graph, nodes, rels, embed, replace)


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
    _load(_settings(ctx), graph, read_nodes(nodes_file), read_relationships(rels_file), embed, replace)


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
    _load(_settings(ctx), graph, node_rows, rel_rows, embed, replace)


# ------------------------------------------------------------------------------ schema / query
@app.command("schema")
def schema_cmd(
    ctx: typer.Context,
    graph: GraphOption = None,
    as_json: JsonOption = False,
    refresh: Annotated[bool, typer.Option("--refresh", help="Ignore the cached schema.")] = False,
) -> None:
    """Print labels, relationship types and (label)-[type]->(label) patterns with counts."""
    from graphraft.graph import open_store

    with open_store(_settings(ctx), graph) as store:
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
    labels = Table("label", "nodes", title="Labels")
    for label, count in schema.labels.items():
        labels.add_row(label, f"{count:,}")
    types = Table("relationship type", "count", title="Relationship types")
    for rel_type, count in schema.relationship_types.items():
        types.add_row(rel_type, f"{count:,}")
    patterns = Table("pattern", "count", title="Patterns")
    for pattern in schema.patterns:
        patterns.add_row(str(pattern), f"{pattern.count:,}")
    for table in (labels, types, patterns):
        out.print(table)


@app.command("query")
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
    with open_store(_settings(ctx), graph) as store:
        rows = store.read_untrusted(cypher)
    if as_json:
        out.print_json(json.dumps(rows, default=str))
        return
    print_rows(rows, limit)


def print_rows(rows: list[dict], limit: int = 25) -> None:
    if not rows:
        out.print("(no rows)")
        return
    table = Table(*rows[0].keys())
    for row in rows[:limit]:
        table.add_row(*(str(v) for v in row.values()))
    out.print(table)
    if len(rows) > limit:
        out.print(f"... {len(rows) - limit} more rows")


@app.command("embed")
def embed_cmd(ctx: typer.Context, graph: GraphOption = None) -> None:
    """Prepare a graph's names: the exact-match key and indexes, and name embeddings (with the
    vector index) for nodes that lack them; a graph you loaded yourself works after this."""
    from graphraft.cli.common import RichProgress
    from graphraft.graph import open_store
    from graphraft.graph.embeddings import embed_missing_names, make_embedder

    settings = _settings(ctx)
    with open_store(settings, graph) as store:  # a missing graph fails before a model loads
        embedder = make_embedder(settings)
        if embedder is None:
            raise InvalidInputError("no embedder configured (GRAPHRAFT_EMBEDDER=none)")
        keyed = store.prepare_names()
        count = embed_missing_names(store, embedder, progress=RichProgress())
        store.sync()
    out.print(f"embedded {count:,} names" + (f"; {keyed:,} names keyed for exact matching" if keyed else ""))


app.command("synthesize")(synthesize_command)
app.command("eval")(eval_command)


app.command("train")(train_cli)


def _engine(ctx, graph, config, overrides, model, extractor, l1_adapter, l2_adapter):
    """The pipeline `ask` and `serve` answer with: settings from the global options and these
    flags, asking settings from --config and the AskConfig flags."""
    from graphraft.inference.pipeline import GraphRAFT

    settings = _settings(ctx, base_model=model, extractor=extractor, l1_adapter=l1_adapter, l2_adapter=l2_adapter)
    return GraphRAFT(settings, graph=graph, config=AskConfig.from_yaml(config, **(overrides or {})))


@app.command("ask")
@with_config_flags(AskConfig, skip=("group",))
def ask_cmd(
    ctx: typer.Context,
    question: Annotated[str, typer.Argument(help="The question, e.g. 'who directed [Black Snake Moan]'.")],
    graph: GraphOption = None,
    as_json: JsonOption = False,
    config: ConfigFileOption = None,
    model: ModelOption = None,
    l1_adapter: L1AdapterOption = None,
    l2_adapter: L2AdapterOption = None,
    extractor: ExtractorOption = None,
    show: Annotated[int, typer.Option(help="Answers to print.")] = 10,
    overrides: dict | None = None,
) -> None:
    """Answer a question: the answers, the Cypher that found them, the evidence and timings.

    Only queries enumerated around the question's entities can be written (constrained
    decoding), and they run on the read-only path."""
    if not question.strip():
        raise InvalidInputError("the question is empty")
    engine = _engine(ctx, graph, config, overrides, model, extractor, l1_adapter, l2_adapter)
    try:
        answer = engine.ask(question)
    finally:
        engine.close()
    if as_json:
        out.print_json(answer.model_dump_json())
    else:
        print_answer(answer, show)
    if answer.message:
        raise typer.Exit(1)


@app.command("serve")
@with_config_flags(AskConfig, skip=("group",))
def serve_cmd(
    ctx: typer.Context,
    host: Annotated[str, typer.Option(help="Interface to listen on (0.0.0.0: every one).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port to listen on.")] = 8000,
    graph: GraphOption = None,
    config: ConfigFileOption = None,
    model: ModelOption = None,
    l1_adapter: L1AdapterOption = None,
    l2_adapter: L2AdapterOption = None,
    extractor: ExtractorOption = None,
    timeout_s: Annotated[
        Optional[float],
        typer.Option(min=0.001, help="A request's deadline in seconds (default: GRAPHRAFT_ASK_TIMEOUT_S)."),
    ] = None,
    overrides: dict | None = None,
) -> None:
    """Serve GraphRAFT over HTTP: POST /ask, GET /schema, GET /health; OpenAPI docs at /docs.
    The models load once, before the first request."""
    import logging

    import uvicorn

    from graphraft.serving.app import create_app

    engine = _engine(ctx, graph, config, overrides, model, extractor, l1_adapter, l2_adapter)
    logging.getLogger("graphraft.serving").setLevel(logging.INFO)  # a request log line per question
    err.print(f"serving {engine.store.description} on http://{host}:{port} (docs: http://{host}:{port}/docs)")
    try:
        uvicorn.run(create_app(engine, timeout_s), host=host, port=port, log_level="info")
    finally:
        engine.close()


def print_answer(answer, show: int = 10, evidence_lines: int | None = None) -> None:
    for note in answer.notes:
        err.print(f"note: {escape(note)}", highlight=False, soft_wrap=True)
    if answer.message:
        err.print(escape(answer.message))
        return
    names = ", ".join(a.name for a in answer.answers[:show])
    more = f" (+{len(answer.answers) - show} more)" if len(answer.answers) > show else ""
    out.print(f"[bold]Answers[/] ({answer.selected_by}): {escape(names)}{more}")
    out.print("[bold]Cypher[/] (score order, read-only):")
    for number, query in enumerate(answer.queries, 1):
        status = f"{query.results} results" if query.error is None else f"error: {query.error}"
        out.print(f"  {number}. {escape(query.cypher)}  [{status}, {query.seconds * 1000:.0f} ms]", highlight=False)
    anchors = ", ".join(f"{a['name']} ({a['method']})" for a in answer.anchors)
    out.print(f"[bold]Anchors:[/] {escape(anchors)}; {answer.candidates} candidate queries")
    out.print("[bold]Evidence:[/]")
    lines = answer.evidence.splitlines()
    shown = lines if evidence_lines is None else lines[:evidence_lines]
    more = len(lines) - len(shown)
    out.print(escape("\n".join(shown)) + (f"\n  ... ({more} more lines)" if more else ""), highlight=False)
    timings = ", ".join(f"{k} {v:.2f}s" for k, v in answer.timings.items())
    out.print(f"[bold]Timings:[/] {timings}")


# ------------------------------------------------------------------------------ demo
@app.command("demo")
def demo_cmd(
    ctx: typer.Context,
    outputs: Annotated[Path, typer.Option(help="Where synthesis and training outputs go.")] = Path("outputs"),
    retrain: Annotated[bool, typer.Option("--retrain", help="Train the adapters again even if done.")] = False,
    from_graph: Annotated[
        bool, typer.Option("--from-graph", help="Train on questions generated from the graph, none given.")
    ] = False,
    graph: Annotated[
        Optional[str], typer.Option("--graph", "-g", help="--from-graph: your loaded graph instead of the demo's.")
    ] = None,
) -> None:
    """The whole story on the shipped demo graph: load it, synthesize training pairs, train L1
    and L2 briefly on the CPU, and answer three questions with their Cypher and evidence.
    A second run reuses what the first finished. --from-graph: no question/answer pairs at all,
    the training questions are generated from the graph (the demo's, or yours with --graph)."""
    from graphraft import demo
    from graphraft.cli.common import RichProgress
    from graphraft.graph import open_store, remember_graph
    from graphraft.graph.loaders.demo import DEMO_GRAPH
    from graphraft.inference.pipeline import GraphRAFT

    started = time.perf_counter()
    if graph is not None and not from_graph:
        raise InvalidInputError("--graph is for --from-graph (the demo's own questions are about the demo graph)")
    graph = graph or DEMO_GRAPH
    paths = demo.DemoPaths(outputs, graph if from_graph else None)
    if graph == DEMO_GRAPH:
        out.rule("1/4  load the demo graph")
        load_demo(ctx, graph=DEMO_GRAPH, embed=True, replace=False)
    else:
        out.rule(f"1/4  the graph {graph}")
    settings = _settings(ctx, graph=graph)
    with open_store(settings, graph) as store:
        remember_graph(settings, graph)
        print_schema(store.description, store.schema())
        if from_graph:
            out.rule("2/4  generate training questions from the graph (no question/answer pairs)")
            summary = demo.generate(store, settings, paths, progress=RichProgress())
        else:
            out.rule("2/4  synthesize (question, Cypher) training pairs")
            summary = demo.synthesize(store, settings, paths, progress=RichProgress())
        out.print(
            f"{paths.synthesis}: {summary.questions:,} questions, {summary.skipped_done:,} already done, "
            f"{summary.written:,} written ({summary.kept:,} of them with a best query)"
        )
    retrain = retrain or summary.written > 0  # new training pairs: the adapters are out of date
    adapters: dict[str, Path | None] = {}
    for task in ("l1", "l2"):
        out.rule(f"3/4  train {task.upper()} " + ("(question -> Cypher)" if task == "l1" else "(answer selection)"))
        # L2 learns from evidence that opens with L1's query, so a new L1 means a new L2
        config = demo.training_config(task, paths, **({"l1_adapter": adapters["l1"]} if task == "l2" else {}))
        adapters[task] = None if retrain else demo.finished_adapter(config)
        if adapters[task] is not None:
            out.print(f"reusing {adapters[task]} (trained with these settings; --retrain to train again)")
            continue
        result = train_command(task, config=config)
        adapters[task] = Path(result["adapter"])
        retrain = True  # what follows a newly trained adapter is trained again
    out.rule("4/4  ask")
    settings = _settings(ctx, graph=graph, l1_adapter=adapters["l1"], l2_adapter=adapters["l2"])
    engine = GraphRAFT(settings, graph=graph)
    # the demo's own questions (real ones, never trained on), else generated validation questions
    examples = demo.example_questions() if graph == DEMO_GRAPH else demo.generated_examples(paths)
    right = 0
    try:
        for example in examples:
            out.print(f"\n[bold]Q: {escape(example['question'])}[/]  ({example['hops']}-hop)")
            answer = engine.ask(example["question"])
            print_answer(answer, show=10, evidence_lines=8)
            ok = demo.answered_right(answer, example["answers"])
            right += ok
            out.print(
                ("[green]matches[/]" if ok else "[red]differs from[/]")
                + f" the expected answer: {escape(', '.join(example['answers']))}"
            )
    finally:
        engine.close()
    out.print(f"\n{right}/{len(examples)} answered as expected; done in {time.perf_counter() - started:.0f}s")


def main() -> None:
    run_guarded(app)
