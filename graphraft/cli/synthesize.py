"""`python -m graphraft.synthesize` and `graphraft synthesize`: the same command."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from graphraft.cli.common import run_guarded
from graphraft.cli.options import ConfigFileOption, ExtractorOption, with_config_flags
from graphraft.errors import InvalidInputError
from graphraft.graph.loaders.question_sets import (
    Dataset,
    Split,
    Wording,
    as_people_write,
    graph_for,
    load_items,
    question_set_name,
)
from graphraft.synthesis.from_graph import GenerationConfig
from graphraft.synthesis.synthesizer import SynthesisConfig

# The question-set options `synthesize` and `eval` share.
DatasetOption = Annotated[Optional[Dataset], typer.Option(help="A dataset GraphRAFT knows.")]
QuestionsOption = Annotated[Optional[Path], typer.Option(help="Your own questions: JSONL or question<TAB>a|b lines.")]
MetaqaPathOption = Annotated[Optional[Path], typer.Option(help="MetaQA folder (default ../shared/datasets/metaqa).")]
WordingOption = Annotated[
    Wording, typer.Option(help="MetaQA's wording: vanilla (its templates) or ntm (paraphrased; 1-hop).")
]
SplitOption = Annotated[Split, typer.Option(help="Which part of the deterministic split.")]
HopsOption = Annotated[Optional[str], typer.Option(help="Only these question hops, e.g. '1,2'.")]
LimitOption = Annotated[Optional[int], typer.Option(min=1, help="At most N questions per hop (a stable sample).")]
GraphOption = Annotated[
    Optional[str], typer.Option("--graph", "-g", help="Graph (default: the dataset's, else the last loaded).")
]


def parse_hops(text: str | None) -> list[int] | None:
    """'1,2' -> [1, 2]; None or empty -> None (every hop)."""
    if not text:
        return None
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise InvalidInputError(f"--hops takes numbers like '1,2,3', got {text!r}") from None
    if not values or any(v not in (1, 2, 3) for v in values):
        raise InvalidInputError(f"--hops takes 1, 2 and/or 3, got {text!r}")
    return values


@with_config_flags(GenerationConfig)
def synthesize_command(
    dataset: DatasetOption = None,
    questions: Annotated[
        Optional[Path],
        typer.Option(help="Your own questions: JSONL or question<TAB>a|b lines; with --from-graph, how many to make."),
    ] = None,
    from_graph: Annotated[
        bool, typer.Option("--from-graph", help="No questions needed: generate them from the graph (cold start).")
    ] = False,
    metaqa_path: MetaqaPathOption = None,
    wording: WordingOption = Wording.vanilla,
    split: SplitOption = Split.all,
    hops: HopsOption = None,
    limit: LimitOption = None,
    graph: GraphOption = None,
    output: Annotated[
        Optional[Path], typer.Option(help="JSONL to append to (default outputs/synthesis/NAME-SPLIT.jsonl).")
    ] = None,
    extractor: ExtractorOption = None,
    config: ConfigFileOption = None,
    overwrite: Annotated[bool, typer.Option(help="Start the output again instead of resuming it.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    overrides: dict | None = None,
) -> None:
    """Turn question/answer pairs into ranked (question, Cypher) training pairs.

    Rows are appended as they are made; running the same command again resumes and skips
    the questions already done."""
    from graphraft.cli.common import RichProgress
    from graphraft.config import load_settings
    from graphraft.graph import open_store
    from graphraft.synthesis.synthesizer import run_synthesis, synthesizer_for

    if from_graph:
        return _from_graph(questions, dataset, graph, output, extractor, config, overwrite, as_json, overrides or {})
    generation_only = sorted(set(overrides or {}) - set(SynthesisConfig.model_fields))
    if generation_only:
        flags = ", ".join("--" + key.replace("_", "-") for key in generation_only)
        raise InvalidInputError(f"{flags}: only with --from-graph")
    config = GenerationConfig.from_yaml(config, **(overrides or {})).narrowed(SynthesisConfig)
    items = load_items(dataset, questions, metaqa_path, split, parse_hops(hops), limit, wording)
    items = as_people_write(items, config.unmarked, config.typos)
    settings = load_settings(extractor=extractor)
    graph_name = graph_for(graph, dataset, questions, settings)
    name = question_set_name(dataset, questions, wording)
    output = output or Path("outputs") / "synthesis" / f"{name}-{split.value}.jsonl"
    with open_store(settings, graph_name) as store:
        if store.count_nodes() == 0:
            raise InvalidInputError(f"{store.description} is empty: load the graph first (graphraft load ...)")
        synthesizer = synthesizer_for(store, settings, config)
        meta = {"graph": store.identity, "extractor": settings.extractor, **config.fingerprint()}
        summary = run_synthesis(synthesizer, items, output, meta, overwrite=overwrite, progress=RichProgress())
    _report(summary, output, config, as_json)


def _report(summary, output: Path, config: SynthesisConfig, as_json: bool) -> None:
    from rich.console import Console

    console = Console(stderr=True)
    report = summary.to_dict()
    output.with_suffix(output.suffix + ".summary.json").write_text(json.dumps(report, indent=2))
    if as_json:
        typer.echo(json.dumps(report, indent=2))
        return
    console.print(f"[bold]synthesis[/] -> {output}")
    console.print(
        f"questions: {report['questions']:,} ({report['already_done']:,} already done, "
        f"{report['written']:,} written in {report['seconds']:.1f}s, "
        f"{report['questions_per_second']:.1f}/s); kept {report['kept']:,}"
    )
    for hop, figures in report["recall1_by_hop"].items():
        console.print(
            f"  {hop}-hop: recall-1 query for {figures['recall1']:,}/{figures['questions']:,} "
            f"({figures['percent']:.2f}%)"
        )
    for reason, count in sorted(report["dropped"].items(), key=lambda kv: -kv[1]):
        console.print(f"  dropped {count:,}: {reason}")
    console.print(
        f"  questions with a query timeout: {report['questions_with_timeouts']:,}; "
        f"with hub nodes not expanded (cap {config.fanout_cap}): {report['questions_with_hubs_skipped']:,}"
    )


def _from_graph(questions, dataset, graph, output, extractor, config_file, overwrite, as_json, overrides) -> None:
    """`synthesize --from-graph`: questions generated from the graph, written as synthesis rows."""
    from graphraft.cli.common import RichProgress
    from graphraft.config import load_settings
    from graphraft.graph import current_graph, open_store
    from graphraft.synthesis.from_graph import generate, generator_for
    from graphraft.synthesis.paraphrase import ChatParaphraser

    if dataset is not None:
        raise InvalidInputError("--from-graph makes its own questions: drop --dataset (use --graph for the graph)")
    if questions is not None:
        if not str(questions).isdigit() or int(str(questions)) < 1:
            raise InvalidInputError(
                f"with --from-graph, --questions takes how many to make (a number), got {questions}"
            )
        overrides = {**overrides, "count": int(str(questions))}
    config = GenerationConfig.from_yaml(config_file, **overrides)
    settings = load_settings(extractor=extractor)
    graph_name = graph or current_graph(settings)
    output = output or Path("outputs") / "synthesis" / f"{graph_name}-from-graph-s{config.seed}.jsonl"
    with open_store(settings, graph_name) as store:
        if store.count_nodes() == 0:
            raise InvalidInputError(f"{store.description} is empty: load the graph first (graphraft load ...)")
        paraphraser = None
        if config.paraphrase:
            paraphraser = ChatParaphraser.from_settings(settings, output.with_suffix(".paraphrases.jsonl"))
        generator = generator_for(store, settings, config, paraphraser)
        summary = generate(generator, output, overwrite=overwrite, progress=RichProgress())
    _report(summary, output, config, as_json)


def main() -> None:
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)
    app.command(help=synthesize_command.__doc__)(synthesize_command)
    run_guarded(app)
