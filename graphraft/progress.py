"""A small progress interface so library code reports progress without printing itself
(the command line renders it with rich: graphraft.cli.common.RichProgress)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Protocol


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
