"""`python -m graphraft.synthesize` and `graphraft synthesize`: the same command."""

from __future__ import annotations

import hashlib
import json
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from graphraft.errors import InputFileError


class Dataset(str, Enum):
    metaqa = "metaqa"
    demo = "demo"


class Split(str, Enum):
    train = "train"
    validation = "validation"
    all = "all"


# The question-set options `synthesize` and `eval` share.
DatasetOption = Annotated[Optional[Dataset], typer.Option(help="A dataset GraphRAFT knows.")]
QuestionsOption = Annotated[Optional[Path], typer.Option(help="Your own questions: JSONL or question<TAB>a|b lines.")]
MetaqaPathOption = Annotated[Optional[Path], typer.Option(help="MetaQA folder (default ../shared/datasets/metaqa).")]
SplitOption = Annotated[Split, typer.Option(help="Which part of the deterministic split.")]
HopsOption = Annotated[Optional[str], typer.Option(help="Only these question hops, e.g. '1,2'.")]
LimitOption = Annotated[Optional[int], typer.Option(min=1, help="At most N questions per hop (a stable sample).")]
GraphOption = Annotated[Optional[str], typer.Option("--graph", "-g", help="Graph (default: the dataset's, else the last loaded).")]


def question_set_name(dataset: Dataset | None, questions: Path | None) -> str:
    return questions.stem if questions is not None else dataset.value


def graph_for(graph: str | None, dataset: Dataset | None, questions: Path | None, settings) -> str:
    """--graph, else the dataset's own graph, else the graph loaded last."""
    from graphraft.graph import current_graph

    return graph or (dataset.value if dataset is not None and questions is None else current_graph(settings))


def load_items(dataset: Dataset | None, questions: Path | None, metaqa_path: Path | None, split: Split,
               hops: list[int] | None, limit: int | None):
    """The questions to work on, filtered by split and hops; ``limit`` per hop, a stable sample."""
    from graphraft.graph.loaders.demo import demo_files
    from graphraft.graph.loaders.metaqa import default_metaqa_dir, read_questions
    from graphraft.graph.loaders.questions import read_question_file

    wanted = None if split == Split.all else split.value
    if questions is not None:
        items = list(read_question_file(questions, split=wanted))
    elif dataset == Dataset.metaqa:
        root = metaqa_path or default_metaqa_dir()
        if root is None:
            raise InputFileError("MetaQA not found: pass --metaqa-path DIR")
        items = list(read_questions(Path(root), hops=tuple(hops or (1, 2, 3)), split=wanted))
    elif dataset == Dataset.demo:
        items = list(read_question_file(demo_files()[2], split=wanted))
    else:
        raise InputFileError("say which questions: --dataset metaqa|demo or --questions FILE")
    if hops:
        items = [item for item in items if item.hops in hops]
    if limit is not None:
        by_hop: dict[int, list] = {}
        for item in items:
            by_hop.setdefault(item.hops, []).append(item)
        stable = lambda item: hashlib.sha1(item.qid.encode()).hexdigest()  # noqa: E731
        items = [item for hop in sorted(by_hop) for item in sorted(by_hop[hop], key=stable)[:limit]]
    return items


def synthesize_command(
    dataset: DatasetOption = None,
    questions: QuestionsOption = None,
    metaqa_path: MetaqaPathOption = None,
    split: SplitOption = Split.all,
    hops: HopsOption = None,
    limit: LimitOption = None,
    graph: GraphOption = None,
    output: Annotated[Optional[Path], typer.Option(help="JSONL to append to (default outputs/synthesis/NAME-SPLIT.jsonl).")] = None,
    extractor: Annotated[Optional[str], typer.Option(help="auto | marked | lexical | openai | local.")] = None,
    max_hops: Annotated[int, typer.Option(min=1, max=3, help="Longest pattern to enumerate.")] = 3,
    bridges: Annotated[bool, typer.Option("--bridges/--no-bridges", help="Also join pairs of anchors.")] = True,
    fanout_cap: Annotated[int, typer.Option(min=1, help="Do not expand nodes with more relationships than this.")] = 500,
    timeout_ms: Annotated[int, typer.Option(min=1, help="Time limit per enumeration query.")] = 10_000,
    min_recall: Annotated[float, typer.Option(min=0.0, max=1.0, help="Keep a question only if its best query reaches this recall.")] = 1.0,
    min_precision: Annotated[float, typer.Option(min=0.0, max=1.0, help="... and this precision.")] = 0.0,
    alternatives: Annotated[int, typer.Option(min=0, help="Next-best queries kept per question.")] = 3,
    all_hops: Annotated[bool, typer.Option("--all-hops", help="Enumerate every hop length even after an exact pattern (deeper ties become alternatives, so targets can follow the question's wording).")] = False,
    workers: Annotated[int, typer.Option(min=1, help="Questions worked on in parallel.")] = 2,
    overwrite: Annotated[bool, typer.Option(help="Start the output again instead of resuming it.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Turn question/answer pairs into ranked (question, Cypher) training pairs.

    Rows are appended as they are made; running the same command again resumes and skips
    the questions already done."""
    from rich.console import Console

    from graphraft.config import load_settings
    from graphraft.embeddings import make_embedder
    from graphraft.entities.extract import make_extractor
    from graphraft.entities.resolve import EntityResolver
    from graphraft.enumerate import PatternEnumerator
    from graphraft.graph import open_store
    from graphraft.progress import RichProgress
    from graphraft.synthesize import SynthesisConfig, Synthesizer, run_synthesis

    hop_list = _parse_hops(hops)
    items = load_items(dataset, questions, metaqa_path, split, hop_list, limit)
    settings = load_settings(extractor=extractor)
    graph_name = graph_for(graph, dataset, questions, settings)
    name = question_set_name(dataset, questions)
    output = output or Path("outputs") / "synthesis" / f"{name}-{split.value}.jsonl"
    config = SynthesisConfig(max_hops=max_hops, bridges=bridges, fanout_cap=fanout_cap, timeout_ms=timeout_ms,
                             min_recall=min_recall, min_precision=min_precision, alternatives=alternatives, all_hops=all_hops,
                             workers=workers)
    console = Console(stderr=True)
    with open_store(settings, graph_name) as store:
        if store.count_nodes() == 0:
            raise InputFileError(f"{store.description} is empty: load the graph first (graphraft load ...)")
        resolver = EntityResolver(store, lambda: make_embedder(settings), settings.similarity_floor,
                                  settings.max_candidates)
        synthesizer = Synthesizer(make_extractor(settings.extractor, store, settings), resolver,
                                  PatternEnumerator(store, fanout_cap, timeout_ms), config)
        meta = {"graph": store.identity, "extractor": settings.extractor, **config.fingerprint()}
        summary = run_synthesis(synthesizer, items, output, meta, overwrite=overwrite, progress=RichProgress())
    report = summary.to_dict()
    output.with_suffix(output.suffix + ".summary.json").write_text(json.dumps(report, indent=2))
    if as_json:
        typer.echo(json.dumps(report, indent=2))
        return
    console.print(f"[bold]synthesis[/] -> {output}")
    console.print(f"questions: {report['questions']:,} ({report['already_done']:,} already done, "
                  f"{report['written']:,} written in {report['seconds']:.1f}s, "
                  f"{report['questions_per_second']:.1f}/s); kept {report['kept']:,}")
    for hop, figures in report["recall1_by_hop"].items():
        console.print(f"  {hop}-hop: recall-1 query for {figures['recall1']:,}/{figures['questions']:,} "
                      f"({figures['percent']:.2f}%)")
    for reason, count in sorted(report["dropped"].items(), key=lambda kv: -kv[1]):
        console.print(f"  dropped {count:,}: {reason}")
    console.print(f"  questions with a query timeout: {report['questions_with_timeouts']:,}; "
                  f"with hub nodes not expanded (cap {fanout_cap}): {report['questions_with_hubs_skipped']:,}")


def _parse_hops(text: str | None) -> list[int] | None:
    if not text:
        return None
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise InputFileError(f"--hops takes numbers like '1,2,3', got {text!r}") from None
    if not values or any(v not in (1, 2, 3) for v in values):
        raise InputFileError(f"--hops takes 1, 2 and/or 3, got {text!r}")
    return values


def main() -> None:
    from graphraft.cli import run_guarded

    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)
    app.command(help=synthesize_command.__doc__)(synthesize_command)
    run_guarded(app)
