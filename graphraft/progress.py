"""A small progress interface so library code reports progress without printing itself."""

from __future__ import annotations

from contextlib import AbstractContextManager, contextmanager
from typing import Iterator, Protocol


class ProgressTask(Protocol):
    def advance(self, amount: int = 1) -> None: ...


class Progress(Protocol):
    def task(self, description: str, total: int | None) -> AbstractContextManager[ProgressTask]: ...


class _Silent:
    def advance(self, amount: int = 1) -> None:
        pass


class SilentProgress:
    """The default for the Python API: report nothing."""

    @contextmanager
    def task(self, description: str, total: int | None) -> Iterator[ProgressTask]:
        yield _Silent()


class RichProgress:
    """Progress bars on stderr for the CLI."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress as _Bar, TextColumn,
                                   TimeElapsedColumn, TimeRemainingColumn)

        self._make = lambda: _Bar(
            TextColumn("{task.description:<16}"), BarColumn(), MofNCompleteColumn(),
            TimeElapsedColumn(), TimeRemainingColumn(), console=Console(stderr=True), transient=False,
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
