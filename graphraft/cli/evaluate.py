"""`graphraft eval`: score GraphRAFT and the baselines on a question set."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from graphraft.cli.options import ConfigFileOption, L1AdapterOption, L2AdapterOption, ModelOption, with_config_flags
from graphraft.cli.synthesize import (
    DatasetOption,
    GraphOption,
    HopsOption,
    LimitOption,
    MetaqaPathOption,
    QuestionsOption,
    SplitOption,
    WordingOption,
    parse_hops,
)
from graphraft.errors import ConfigurationError, InvalidInputError
from graphraft.evaluation.config import EvaluationConfig
from graphraft.graph.loaders.question_sets import Split, Wording, graph_for, load_items, question_set_name
from graphraft.inference.config import AskConfig


@with_config_flags(EvaluationConfig)
def eval_command(
    dataset: DatasetOption = None,
    questions: QuestionsOption = None,
    metaqa_path: MetaqaPathOption = None,
    wording: WordingOption = Wording.vanilla,
    split: SplitOption = Split.validation,
    hops: HopsOption = None,
    limit: LimitOption = None,
    graph: GraphOption = None,
    config: ConfigFileOption = None,
    l1_adapter: L1AdapterOption = None,
    l2_adapter: L2AdapterOption = None,
    model: ModelOption = None,
    output: Annotated[Optional[Path], typer.Option(help="Report folder (default outputs/eval/NAME-SPLIT).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    overrides: dict | None = None,
) -> None:
    """Run GraphRAFT and the baselines on the same questions; write report.md, report.json and
    metrics.png with Hit@1, Hit@5, Recall@20, MRR and P/R/F1 per hop, latency and failures."""
    from rich.console import Console

    from graphraft.cli.common import RichProgress
    from graphraft.config import load_settings
    from graphraft.evaluation.runner import METHODS, evaluate, variants, write_report
    from graphraft.graph.embeddings import make_embedder
    from graphraft.inference.pipeline import GraphRAFT

    options = EvaluationConfig.from_yaml(config, **(overrides or {}))
    chosen = [m.strip() for m in options.methods.split(",") if m.strip()]
    unknown = [m for m in chosen if m not in METHODS]
    if unknown or not chosen:
        raise InvalidInputError(
            f"--methods: unknown {', '.join(unknown) or '(none given)'}; choose from {', '.join(METHODS)}"
        )
    items = options.variant(load_items(dataset, questions, metaqa_path, split, parse_hops(hops), limit, wording))
    if not items:
        raise InvalidInputError("no questions to evaluate (check --split, --hops and the file)")
    settings = load_settings(base_model=model, l1_adapter=l1_adapter, l2_adapter=l2_adapter)
    if "graphraft" in chosen and not settings.l2_adapter:
        raise ConfigurationError(
            "the graphraft method needs an L2 adapter: pass --l2-adapter (or drop it from --methods)"
        )
    if {"graphraft", "no-l2", "free"} & set(chosen) and not settings.l1_adapter:
        raise ConfigurationError("graphraft, no-l2 and free need an L1 adapter: pass --l1-adapter")
    graph_name = graph_for(graph, dataset, questions, settings)
    name = f"{question_set_name(dataset, questions, wording)}-{split.value}"
    folder = output or Path("outputs") / "eval" / name
    console = Console(stderr=True)
    pipeline = GraphRAFT(settings, graph=graph_name, config=options.narrowed(AskConfig))
    try:
        free, base = variants(pipeline)
        embedder = make_embedder(settings) if "vector" in chosen else None
        if "vector" in chosen and embedder is None:
            raise ConfigurationError("the vector method needs an embedder (GRAPHRAFT_EMBEDDER=local or openai)")

        report = evaluate(
            items,
            pipeline,
            chosen,
            base_pipeline=base,
            free_pipeline=free,
            embedder=embedder,
            title=f"{name} on graph {graph_name}",
            progress=RichProgress(),
        )
    finally:
        pipeline.close()
    report.settings = {
        "graph": graph_name,
        "split": split.value,
        "hops": hops or "all",
        "limit_per_hop": limit,
        "beams": pipeline.num_beams,
        "wording": wording.value,
        "unmarked": options.unmarked,
        "typos_seed": options.typos,
        "base_model": settings.base_model,
        "l1_adapter": str(settings.l1_adapter) if settings.l1_adapter else None,
        "l2_adapter": str(settings.l2_adapter) if settings.l2_adapter else None,
    }
    paths = write_report(report, folder)
    if as_json:
        typer.echo(json.dumps(report.to_dict(), indent=2))
        return
    node_metrics = report.table() if report.node_questions() else {}
    for method in report.methods:
        executed = report.execution_accuracy(method)
        parts = [f"execution accuracy {executed['all']['accuracy'] * 100:5.1f}"] if executed else []
        parts += [f"{k} {v * 100:5.1f}" for k, v in node_metrics.get(method, {}).items()]
        console.print(f"{method:<10} " + "  ".join(parts))
    console.print(f"report: {paths['markdown']} (plot {paths['plot'].name}, data {paths['json'].name})")
