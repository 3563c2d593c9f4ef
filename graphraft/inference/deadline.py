"""An overall time limit for one operation (answering a question), shared by its stages:
each stage checks it, and each database call gets at most what is left of it."""

from __future__ import annotations

import math
import time

from graphraft.errors import DeadlineExceededError


class Deadline:
    def __init__(self, seconds: float | None, what: str = "answering the question"):
        self.seconds, self.what = seconds, what
        self._end = time.monotonic() + seconds if seconds is not None else math.inf

    def remaining(self) -> float:
        return self._end - time.monotonic()

    def check(self, stage: str) -> None:
        """Raise DeadlineExceededError, naming the stage it was reached in, once time is up."""
        if self.remaining() <= 0:
            raise DeadlineExceededError(
                f"{self.what} took longer than its {self.seconds:g}s limit "
                f"(reached while {stage}; raise it with GRAPHRAFT_ASK_TIMEOUT_S)"
            )

    def limit_ms(self, timeout_ms: int, stage: str) -> int:
        """A call's own limit, cut to what is left (at least 1 ms)."""
        self.check(stage)
        return max(1, int(min(timeout_ms, self.remaining() * 1000)))
