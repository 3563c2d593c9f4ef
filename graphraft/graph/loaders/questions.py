"""Questions, whichever source they come from: the question item every stage reads
(`QAItem`), the stable train/validation split, the ``[bracketed]`` topic mention, and the
question/answer files GraphRAFT reads in two formats:

- JSONL: ``{"question": "...", "answers": ["..."], "hops": 2, "type": "..."}`` per line
  (``answer_ids`` optional; hops and type optional). A question answered by values rather than
  nodes carries its gold result as ``"rows": [[value, ...], ...]`` (a node as its name; scored by
  execution accuracy), optionally its ``cypher`` and ``category``; ``split`` overrides the hash.
  Where the gold query ends in a ``LIMIT`` with no ``ORDER BY`` (an arbitrary pick), ``"any_of"``
  may hold its rows without the LIMIT: as many distinct rows of them as ``rows`` has are then
  scored right too, beside the strict score.
- TSV (MetaQA style): ``question<TAB>answer1|answer2``.

A ``[bracketed]`` span in the question marks its topic entity."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from graphraft.errors import InputFileError
from graphraft.graph.loaders.files import jsonl_rows, text_lines

#: a ``[bracketed]`` mention; group 1 is the name inside
BRACKETED = re.compile(r"\[([^\[\]]+)\]")


@dataclass(frozen=True)
class QAItem:
    """One question with its answers, from a data set, a file or the graph itself."""

    qid: str  # stable across runs: where the question comes from
    question: str
    mention: str | None  # the first [bracketed] name, if any
    answers: tuple[str, ...]
    hops: int  # 0: not given
    qtype: str | None
    split: str
    line: int = 0
    source: str = ""
    extra: dict = field(default_factory=dict, compare=False)


def split_of(question: str, validation_fraction: float = 0.1) -> str:
    """Deterministic train/validation split by a hash of the question text."""
    digest = int(hashlib.sha1(question.encode("utf-8")).hexdigest()[:8], 16)
    return "validation" if digest < validation_fraction * 0x1_0000_0000 else "train"


def bracketed_mention(question: str) -> str | None:
    """The first ``[bracketed]`` name in a question."""
    found = BRACKETED.search(question)
    return found.group(1).strip() if found else None


def read_question_file(path: Path, split: str | None = None, validation_fraction: float = 0.1) -> Iterator[QAItem]:
    path = Path(path)
    if not path.is_file():
        raise InputFileError(f"{path}: question file not found")
    rows = _jsonl_questions(path) if path.suffix.lower() in (".jsonl", ".ndjson", ".json") else _tsv_questions(path)
    for number, question, answers, hops, qtype, extra in rows:
        if not question:
            raise InputFileError(f"{path}:{number}: empty question")
        item_split = extra.get("split") or split_of(question, validation_fraction)
        if split is not None and item_split != split:
            continue
        yield QAItem(
            qid=extra.pop("id", None) or f"{path.stem}-{number}",
            question=question,
            mention=bracketed_mention(question),
            answers=tuple(a.strip() for a in answers if a.strip()),
            hops=int(hops) if hops is not None else 0,
            qtype=qtype,
            split=item_split,
            line=number,
            source=str(path),
            extra=extra,
        )


def _jsonl_questions(path: Path) -> Iterator[tuple]:
    for number, row in jsonl_rows(path):
        if not isinstance(row.get("question"), str):
            raise InputFileError(f"{path}:{number}: expected an object with a 'question' string")
        answers = row.get("answers", [])
        if isinstance(answers, str):
            answers = [answers]
        if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
            raise InputFileError(f"{path}:{number}: 'answers' must be a list of strings")
        extra = {
            key: row[key] for key in ("id", "answer_ids", "rows", "any_of", "cypher", "category", "split") if key in row
        }
        if not isinstance(extra.get("id", ""), str) or extra.get("id") == "":
            raise InputFileError(f"{path}:{number}: 'id' must be a non-empty string")
        if "rows" in extra and not (
            isinstance(extra["rows"], list) and all(isinstance(r, list) for r in extra["rows"]) and extra["rows"]
        ):
            raise InputFileError(f"{path}:{number}: 'rows' must be a non-empty list of rows (lists of values)")
        if "any_of" in extra and not (
            "rows" in extra
            and isinstance(extra["any_of"], list)
            and all(isinstance(r, list) for r in extra["any_of"])
            and extra["any_of"]
        ):
            raise InputFileError(f"{path}:{number}: 'any_of' must be a non-empty list of rows, beside 'rows'")
        if extra.get("split") not in (None, "train", "validation"):
            raise InputFileError(f"{path}:{number}: 'split' must be train or validation")
        yield number, row["question"].strip(), answers, row.get("hops"), row.get("type"), extra


def _tsv_questions(path: Path) -> Iterator[tuple]:
    for number, line in text_lines(path):
        question, sep, joined = line.partition("\t")
        if not sep:
            raise InputFileError(f"{path}:{number}: expected 'question<TAB>answer|answer'")
        yield number, question.strip(), joined.split("|"), None, None, {}
