"""`graphraft ask` and `graphraft serve`: answering, on the command line and over HTTP."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape

from graphraft.cli.common import GraphOption, JsonOption, err, out, settings_from
from graphraft.cli.options import (
    ConfigFileOption,
    ExtractorOption,
    L1AdapterOption,
    L2AdapterOption,
    ModelOption,
    with_config_flags,
)
from graphraft.config import LOOPBACK_HOSTS
from graphraft.errors import InvalidInputError
from graphraft.inference.config import AskConfig


def _engine(ctx, graph, config, overrides, model, extractor, l1_adapter, l2_adapter):
    """The pipeline `ask` and `serve` answer with: settings from the global options and these
    flags, asking settings from --config and the AskConfig flags."""
    from graphraft.inference.pipeline import GraphRAFT

    settings = settings_from(ctx, base_model=model, extractor=extractor, l1_adapter=l1_adapter, l2_adapter=l2_adapter)
    return GraphRAFT(settings, graph=graph, config=AskConfig.from_yaml(config, **(overrides or {})))


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
    api_key_file: Annotated[
        Optional[Path],
        typer.Option(help="A file holding the bearer token clients must send (else GRAPHRAFT_API_KEY[_FILE])."),
    ] = None,
    log_questions: Annotated[
        Optional[Path],
        typer.Option(
            help="Append each answered question's text to this file (0600), one a line, for "
            "`train l1 --self-train` (default: none is kept)."
        ),
    ] = None,
    overrides: dict | None = None,
) -> None:
    """Serve GraphRAFT over HTTP: POST /ask, GET /schema, GET /health; OpenAPI docs at /docs.
    The models load once, before the first request. Without an API key it serves this machine
    only (127.0.0.1); with one, /ask and /schema require it as a bearer token."""
    import logging

    import uvicorn

    from graphraft.serving.app import create_app

    api_key = settings_from(ctx, api_key_file=api_key_file).api_secret()
    if api_key is None and host not in LOOPBACK_HOSTS:
        raise InvalidInputError(
            f"serving on {host} would let anyone who reaches it ask: give --api-key-file "
            "(or GRAPHRAFT_API_KEY), or serve on 127.0.0.1"
        )
    if log_questions is not None:
        from graphraft.serving.question_log import QuestionLog

        QuestionLog(log_questions).close()  # a path it cannot write is said before the models load
    engine = _engine(ctx, graph, config, overrides, model, extractor, l1_adapter, l2_adapter)
    logging.getLogger("graphraft.serving").setLevel(logging.INFO)  # a request log line per question
    err.print(f"serving {engine.store.description} on http://{host}:{port} (docs: http://{host}:{port}/docs)")
    if api_key is None:
        err.print("no API key: this machine only (--api-key-file to serve others)")
    try:
        app = create_app(engine, timeout_s, api_key, log_questions)
        if log_questions is not None:
            err.print(f"keeping the answered questions' text in {log_questions} (for train l1 --self-train)")
        uvicorn.run(app, host=host, port=port, log_level="info")
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
    if answer.values:
        out.print(f"[bold]Values[/] ({len(answer.values)} rows):")
        for row in answer.named_values()[:show]:
            cells = "; ".join(f"{k}: {v}" for k, v in row.items())
            out.print("  " + cells, markup=False, highlight=False, soft_wrap=True)
    out.print("[bold]Cypher[/] (score order, read-only):")
    for number, query in enumerate(answer.queries, 1):
        status = f"{query.results} results" if query.error is None else f"error: {query.error}"
        # literally: the brackets around the status are text, not markup (as markup, an
        # `[error: ...]` vanished from the line)
        line = f"  {number}. {query.cypher}  [{status}, {query.seconds * 1000:.0f} ms]"
        out.print(line, markup=False, highlight=False, soft_wrap=True)
    anchors = ", ".join(f"{a['name']} ({a['method']})" for a in answer.anchors)
    out.print(f"[bold]Anchors:[/] {escape(anchors)}; {answer.candidates} candidate queries")
    out.print("[bold]Evidence:[/]")
    lines = answer.evidence.splitlines()
    shown = lines if evidence_lines is None else lines[:evidence_lines]
    more = len(lines) - len(shown)
    out.print(escape("\n".join(shown)) + (f"\n  ... ({more} more lines)" if more else ""), highlight=False)
    timings = ", ".join(f"{k} {v:.2f}s" for k, v in answer.timings.items())
    out.print(f"[bold]Timings:[/] {timings}")
