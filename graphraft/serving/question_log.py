"""`serve --log-questions FILE`: the questions users ask, kept (opt-in) for self-training.

Each answered question is appended to a text file, one a line, whitespace folded: the file
`graphraft train l1 --self-train FILE` reads (issue 28). Only the question's text is written: no
answer, no client, no time. The file is created readable by its owner only (0600) and is never
truncated: a restarted server appends, and self-training reads each question once."""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

from graphraft.errors import InputFileError

logger = logging.getLogger(__name__)


class QuestionLog:
    def __init__(self, path: Path):
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            handle = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        except OSError as exc:
            raise InputFileError(f"{self.path}: cannot write the question log ({exc.strerror})") from None
        self._file = os.fdopen(handle, "a", encoding="utf-8")
        self._lock = threading.Lock()
        self._failed = False

    def add(self, question: str) -> None:
        """Append one question (a failing disk is logged once; the question is still answered)."""
        line = " ".join(question.split())
        if not line:
            return
        with self._lock:
            try:
                self._file.write(line + "\n")
                self._file.flush()
            except (OSError, ValueError) as exc:
                if not self._failed:
                    logger.warning("%s: a question could not be logged (%s)", self.path, exc)
                self._failed = True

    def close(self) -> None:
        with self._lock:
            self._file.close()
