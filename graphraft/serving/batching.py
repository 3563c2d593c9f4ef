"""Questions that arrive together are answered together.

One worker thread owns the pipeline (its model and the L1/L2 adapters it switches between are
shared state, so questions never run on it side by side). It takes the first waiting question,
waits up to ``window_s`` for others, and answers up to ``max_batch`` of them with one
``GraphRAFT.ask_each`` call: L1 searches them in shared forward calls, which on a CPU answers
more questions a second than one at a time. Questions that arrive while a batch runs form the
next one. Each question keeps its own deadline and its own outcome."""

from __future__ import annotations

import logging
import queue
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field

from graphraft.deadline import Deadline
from graphraft.inference.pipeline import GraphRAFT

logger = logging.getLogger(__name__)


@dataclass
class Pending:
    question: str
    deadline: Deadline
    beams: int | None
    max_hops: int | None
    future: Future = field(default_factory=Future)

    @property
    def options(self) -> tuple[int | None, int | None]:
        return self.beams, self.max_hops


class QuestionBatcher:
    def __init__(self, engine: GraphRAFT, window_s: float = 0.02, max_batch: int = 8):
        self.engine, self.window_s, self.max_batch = engine, window_s, max(1, max_batch)
        self._queue: queue.Queue[Pending | None] = queue.Queue()
        self._worker: threading.Thread | None = None
        self._start_lock = threading.Lock()
        #: sizes of the batches answered so far (for the log and the tests)
        self.batch_sizes: list[int] = []

    def submit(
        self, question: str, deadline: Deadline, beams: int | None = None, max_hops: int | None = None
    ) -> Future:
        """Queue a question; the future holds its Answer, or raises the error that ended it."""
        with self._start_lock:
            if self._worker is None or not self._worker.is_alive():
                self._worker = threading.Thread(target=self._run, name="graphraft-batcher", daemon=True)
                self._worker.start()
        pending = Pending(question, deadline, beams, max_hops)
        self._queue.put(pending)
        return pending.future

    def waiting(self) -> int:
        """Questions queued and not yet taken into a batch."""
        return self._queue.qsize()

    def close(self, timeout: float = 5.0) -> None:
        """Stop the worker once the batch it runs is done (questions still queued are cancelled)."""
        with self._start_lock:
            worker, self._worker = self._worker, None
        if worker is not None:
            self._queue.put(None)
            worker.join(timeout)

    # ------------------------------------------------------------------ the worker
    def _run(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                self._cancel_waiting()
                return
            batch = [first]
            closing = False
            window_ends = time.monotonic() + self.window_s
            while len(batch) < self.max_batch:
                try:
                    item = self._queue.get(timeout=max(0.0, window_ends - time.monotonic()))
                except queue.Empty:
                    break
                if item is None:
                    closing = True
                    break
                batch.append(item)
            # one call per set of options (beams, hops): they shape L1's search
            for options in dict.fromkeys(item.options for item in batch):
                self._answer([item for item in batch if item.options == options])
            if closing:
                self._cancel_waiting()
                return

    def _answer(self, batch: list[Pending]) -> None:
        live = [item for item in batch if item.future.set_running_or_notify_cancel()]
        if not live:
            return
        self.batch_sizes.append(len(live))
        beams, max_hops = live[0].options
        try:
            results = self.engine.ask_each(
                [item.question for item in live],
                [item.deadline for item in live],
                beams=beams,
                max_hops=max_hops,
            )
        except Exception as exc:  # a fault, not a question's error: every question of the batch gets it
            logger.exception("a batch of %d questions failed", len(live))
            for item in live:
                item.future.set_exception(exc)
            return
        for item, result in zip(live, results, strict=True):
            if isinstance(result, BaseException):
                item.future.set_exception(result)
            else:
                item.future.set_result(result)

    def _cancel_waiting(self) -> None:
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return
            if item is not None:
                item.future.cancel()
