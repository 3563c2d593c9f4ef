"""`python -m graphraft.train` and `graphraft train`: the same command."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.console import Console

from graphraft.cli.common import run_guarded
from graphraft.cli.options import with_config_flags
from graphraft.config import load_settings
from graphraft.errors import InvalidInputError
from graphraft.training.config import TrainConfig
from graphraft.training.trainer import train


@with_config_flags(TrainConfig, skip=("task",))
def train_cli(
    task: Annotated[str, typer.Argument(help="l1 (question -> Cypher) or l2 (answer selection).")],
    config: Annotated[Optional[Path], typer.Option("--config", help="A YAML file from training/.")] = None,
    resume: Annotated[bool, typer.Option("--resume", help="Continue from the last checkpoint.")] = False,
    self_train: Annotated[
        Optional[Path],
        typer.Option(
            "--self-train",
            help="L1: a text file of questions without answers, one a line; L1 labels them with its own "
            "queries and is trained again on the labels it is sure of (the --self-train-* settings).",
        ),
    ] = None,
    overrides: dict | None = None,
) -> None:
    """Fine-tune L1 or L2 with LoRA (TRL SFTTrainer) on synthesized data; saves an adapter with metadata.
    Every setting of training/*.yaml is also a flag (a flag wins over the file)."""
    if self_train is not None:
        overrides = {**(overrides or {}), "self_train.questions": self_train}
    train_command(task, config, resume=resume, overrides=overrides)


def train_command(
    task: str,
    config_path: Path | None = None,
    resume: bool = False,
    overrides: dict | None = None,
    config: TrainConfig | None = None,
) -> dict[str, Any]:
    console = Console(stderr=True)
    if task not in ("l1", "l2"):
        raise InvalidInputError(f"unknown task {task!r}: choose l1 or l2")
    if config is None:
        config = TrainConfig.from_yaml(config_path, task=task, **(overrides or {}))
    settings = load_settings(graph=config.graph)

    def report(entry):
        if "note" in entry:
            console.print(entry["note"])
        elif "step" in entry:
            console.print(f"step {entry['step']}/{entry['of']}: loss {entry['loss']:.4f}")
        else:  # an epoch's scores, once (summary.json keeps them)
            console.print(", ".join(f"{k} {v:.4f}" if isinstance(v, float) else f"{k} {v}" for k, v in entry.items()))

    if config.self_train.questions is not None:
        return self_train_command(config, settings, resume, report, console)
    summary = train(config, settings, resume=resume, progress_callback=report)
    loss = (
        f"loss {summary['first_loss']:.4f} -> {summary['last_loss']:.4f}, " if summary["first_loss"] is not None else ""
    )
    console.print(
        f"[bold]{task} trained[/]: {summary['train_examples']:,} examples, {summary['steps']} steps, "
        f"{loss}{summary['train_runtime_s']:.0f}s training, {summary['total_s']:.0f}s in all"
    )
    console.print(f"adapter: {summary['adapter']}")
    return summary


def self_train_command(config: TrainConfig, settings, resume: bool, report, console: Console) -> dict[str, Any]:
    from graphraft.training.self_training import self_train

    result = self_train(config, settings, resume=resume, progress_callback=report)
    for entry in result["rounds"]:
        kept = f", {entry['kept']:,} of {entry['questions']:,} questions labelled" if "kept" in entry else ""
        dropped = (
            ", dropped: " + ", ".join(f"{k} {v}" for k, v in entry["dropped"].items()) if entry.get("dropped") else ""
        )
        exact = entry.get("exact_match_generated_validation")
        trained = f", exact match {exact:.3f} on the data's validation" if exact is not None else ""
        stop = f"; stopped: {entry['stopped']}" if "stopped" in entry else ""
        console.print(f"round {entry['round']}{kept}{dropped}{trained}{stop}")
    console.print(f"adapter: {result['adapter']} (from {result['best_round_adapter']})")
    return result


def main() -> None:
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)
    app.command(help=train_cli.__doc__)(train_cli)
    run_guarded(app)
