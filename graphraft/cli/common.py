"""What every command shares: running a typer app so that a GraphRAFT error is one line on
stderr and an exit code, with the libraries' own noise turned down."""

from __future__ import annotations

import logging
import os
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.progress import Progress as _Bar

from graphraft.errors import GraphRAFTError
from graphraft.progress import ProgressTask

err = Console(stderr=True)

out = Console()

GraphOption = Annotated[
    Optional[str],
    typer.Option("--graph", "-g", help="Graph name (a FalkorDB key, a label in Neo4j); default: the last loaded."),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON for machines.")]


def _quiet_libraries() -> None:
    """Our own progress bars are enough; the libraries' load bars and notices are noise here."""
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")
    # deprecation notices about the libraries' own internals are not the user's to act on
    warnings.filterwarnings("ignore", category=FutureWarning)
    warnings.filterwarnings("ignore", category=UserWarning, module=r"(transformers|trl|peft|torch)\.")


def run_guarded(application) -> None:
    """Run a typer app: GraphRAFT errors become one line on stderr and an exit code. The
    library's log messages show at GRAPHRAFT_LOG_LEVEL (default WARNING; INFO says more)."""
    _quiet_libraries()
    level = os.environ.get("GRAPHRAFT_LOG_LEVEL", "WARNING").upper()
    logging.basicConfig(
        level=level if level in logging.getLevelNamesMapping() else "WARNING",
        format="%(levelname)s %(name)s: %(message)s",
    )
    if level != "DEBUG":  # the Neo4j driver logs each lost connection that the error line then reports
        logging.getLogger("neo4j").setLevel(logging.CRITICAL)
    try:
        application()
    except GraphRAFTError as exc:
        one_line = " ".join(str(exc).split())  # driver messages can span lines
        err.print(f"[red]error:[/] {escape(one_line)}", highlight=False, soft_wrap=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)


class RichProgress:
    """Progress bars on stderr for the CLI."""

    def __init__(self) -> None:
        self._make = lambda: _Bar(
            TextColumn("{task.description:<16}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=False,
        )

    @contextmanager
    def task(self, description: str, total: int | None) -> Iterator[ProgressTask]:
        bar = self._make()  # one bar per task, so finished bars are not drawn again
        with bar:
            task_id = bar.add_task(description, total=total)

            class _Task:
                def advance(self, amount: int = 1) -> None:
                    bar.advance(task_id, amount)

            yield _Task()


def settings_from(ctx, **overrides):
    """The settings of a command: the global flags (kept on the typer context), then the
    command's own flags (None: not given)."""
    from graphraft.config import load_settings

    base = dict(ctx.obj or {})
    base.update({k: v for k, v in overrides.items() if v is not None})
    return load_settings(**base)
