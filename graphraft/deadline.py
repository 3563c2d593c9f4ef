"""An overall time limit for one operation (answering a question), shared by its stages:
each stage checks it, and each database call gets at most what is left of it.

``within(deadline)`` makes it the limit of every database read on this thread (and in this
context) until the block ends: ``GraphStore.read`` cuts each call's own limit to what is left,
so resolution, the name dictionary, enumeration and execution all stop at the deadline without
each being handed it."""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Iterator
from contextvars import ContextVar

from graphraft.errors import DeadlineExceededError


class Deadline:
    def __init__(self, seconds: float | None, what: str = "answering the question"):
        self.seconds, self.what = seconds, what
        self._end = time.monotonic() + seconds if seconds is not None else math.inf
        #: the stage last checked: where a database call cut short by the deadline was
        self.stage = "starting"

    def remaining(self) -> float:
        return self._end - time.monotonic()

    def exceeded(self, stage: str | None = None) -> DeadlineExceededError:
        return DeadlineExceededError(
            f"{self.what} took longer than its {self.seconds:g}s limit "
            f"(reached while {stage or self.stage}; raise it with GRAPHRAFT_ASK_TIMEOUT_S)"
        )

    def check(self, stage: str) -> None:
        """Raise DeadlineExceededError, naming the stage it was reached in, once time is up."""
        self.stage = stage
        if self.remaining() <= 0:
            raise self.exceeded(stage)

    def limit_ms(self, timeout_ms: int, stage: str) -> int:
        """A call's own limit, cut to what is left (at least 1 ms)."""
        self.check(stage)
        return max(1, int(min(timeout_ms, self.remaining() * 1000)))


_current: ContextVar[Deadline | None] = ContextVar("graphraft_deadline", default=None)


def current() -> Deadline | None:
    """The deadline database calls are held to here, if any."""
    return _current.get()


@contextlib.contextmanager
def within(deadline: Deadline | None) -> Iterator[Deadline | None]:
    """Hold every database read in this block to ``deadline`` (None: no change)."""
    if deadline is None:
        yield None
        return
    token = _current.set(deadline)
    try:
        yield deadline
    finally:
        _current.reset(token)
