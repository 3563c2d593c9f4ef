"""`graphraft demo`: the whole story on the shipped demo graph (or, with --from-graph, yours)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape

from graphraft.cli.ask import print_answer
from graphraft.cli.common import out, settings_from
from graphraft.cli.graph import load_demo, print_schema
from graphraft.cli.train import train_command
from graphraft.errors import InvalidInputError


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
    settings = settings_from(ctx, graph=graph)
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
    settings = settings_from(ctx, graph=graph, l1_adapter=adapters["l1"], l2_adapter=adapters["l2"])
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
