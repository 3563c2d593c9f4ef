"""Question/answer files in the two formats GraphRAFT reads.

- JSONL: ``{"question": "...", "answers": ["..."], "hops": 2, "type": "..."}`` per line
  (``answer_ids`` optional; hops and type optional).
- TSV (MetaQA style): ``question<TAB>answer1|answer2``.

A ``[bracketed]`` span in the question marks its topic entity."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from graphraft.errors import InputFileError
from graphraft.graph.loaders.metaqa import _MENTION, QAItem, split_of


def read_question_file(path: Path, split: str | None = None, validation_fraction: float = 0.1) -> Iterator[QAItem]:
    path = Path(path)
    if not path.is_file():
        raise InputFileError(f"{path}: question file not found")
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputFileError(f"{path}: cannot read: {exc}") from None
    is_jsonl = path.suffix.lower() in (".jsonl", ".ndjson", ".json")
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        if is_jsonl:
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputFileError(f"{path}:{number}: invalid JSON: {exc.msg}") from None
            if not isinstance(row, dict) or not isinstance(row.get("question"), str):
                raise InputFileError(f"{path}:{number}: expected an object with a 'question' string")
            answers = row.get("answers", [])
            if isinstance(answers, str):
                answers = [answers]
            if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
                raise InputFileError(f"{path}:{number}: 'answers' must be a list of strings")
            question, hops, qtype = row["question"].strip(), row.get("hops"), row.get("type")
            extra = {"answer_ids": row["answer_ids"]} if "answer_ids" in row else {}
        else:
            question, sep, joined = line.partition("\t")
            if not sep:
                raise InputFileError(f"{path}:{number}: expected 'question<TAB>answer|answer'")
            question, answers, hops, qtype, extra = question.strip(), joined.split("|"), None, None, {}
        if not question:
            raise InputFileError(f"{path}:{number}: empty question")
        item_split = split_of(question, validation_fraction)
        if split is not None and item_split != split:
            continue
        found = _MENTION.search(question)
        yield QAItem(
            qid=f"{path.stem}-{number}",
            question=question,
            mention=found.group(1).strip() if found else None,
            answers=tuple(a.strip() for a in answers if a.strip()),
            hops=int(hops) if hops is not None else 0,
            qtype=qtype,
            split=item_split,
            line=number,
            source=str(path),
            extra=extra,
        )
