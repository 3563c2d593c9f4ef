"""The synthesis row: what synthesis writes for one question, one JSON line each — from
question/answer pairs (`Synthesizer`) or from the graph alone (`GraphQuestionGenerator`) — and
what training, the demo and the benchmarks read. Defined, written and read here only: a row
is a typed record, its fields read by name, and a file that is not rows is a one-line error
naming file:line."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from graphraft.errors import InputFileError
from graphraft.graph.loaders.files import jsonl_rows
from graphraft.synthesis.language import Query, render_query
from graphraft.synthesis.patterns import AnchorRef, Pattern, render


class AnchorRow(BaseModel):
    """A question's anchor: the mention, the node it resolved to, and how (`Anchor.to_dict`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    mention: str
    id: str
    name: str
    labels: list[str]
    method: str  # exact | vector | fuzzy | text | graph (generated questions)
    score: float

    @property
    def ref(self) -> AnchorRef:
        return AnchorRef(self.id, tuple(self.labels))


def _rendered(data: Any) -> Any:
    """A row's query text is the renderer's, from its pattern: a file written by an older
    renderer is read with today's text (the pattern is what synthesis found; the text is only
    how it is written), so training targets stay among the candidates ask enumerates."""
    if isinstance(data, dict) and isinstance(data.get("query"), dict) and data.get("cypher") is not None:
        with contextlib.suppress(KeyError, TypeError, ValueError):  # not a query: validation names the field
            return {**data, "cypher": render_query(Query.from_dict(data["query"]))}
    if isinstance(data, dict) and isinstance(data.get("pattern"), dict) and data.get("cypher") is not None:
        with contextlib.suppress(KeyError, TypeError, ValueError):  # not a pattern: validation names the field
            data = {**data, "cypher": render(Pattern.from_dict(data["pattern"]))}
    return data


class RankedQuery(BaseModel):
    """A candidate query with its score against the question's answers (`Ranked.to_dict`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _text_from_pattern(cls, data: Any) -> Any:
        return _rendered(data)

    cypher: str
    pattern: dict[str, Any]  # Pattern.to_dict()
    hops: int
    hits: int
    total: int
    precision: float
    recall: float


class SynthesisRow(BaseModel):
    """One question's outcome: kept (``status`` ok, with its best query and the equally good
    alternatives) or dropped (with the ``reason``). Both writers set every field (a test checks)."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _text_from_pattern(cls, data: Any) -> Any:
        return _rendered(data)

    qid: str
    question: str
    hops: int
    qtype: str | None  # a question type where the data set gives one
    split: str
    answers: list[str]
    # answer_ids and source are newer than the other fields: their defaults read older files
    answer_ids: list[str] = []  # empty where the answers are given by name
    mentions: list[str]
    anchors: list[AnchorRow]
    status: Literal["ok", "dropped"]
    reason: str | None
    cypher: str | None  # the best query (canonical text from the renderer)
    pattern: dict[str, Any] | None  # its Pattern.to_dict() (a query of the language: its path)
    #: a query of the language beyond a path (filters, values, order, limit): Query.to_dict();
    #: None for a path query. Made from a gold result (``rows``), never from model text.
    query: dict[str, Any] | None = None
    hits: int
    total: int
    precision: float
    recall: float
    alternatives: list[RankedQuery]
    closest: RankedQuery | None  # the top-ranked query even when none was good enough
    enumerated: int
    timeouts: list[str]
    hubs_skipped: int
    source: dict[str, Any] | None = None  # how a generated question was made (None: a given pair)
    timings: dict[str, float]

    @property
    def usable(self) -> bool:
        """A training pair: kept, with a query."""
        return self.status == "ok" and self.cypher is not None

    @property
    def refs(self) -> list[AnchorRef]:
        return [anchor.ref for anchor in self.anchors]

    @property
    def best_pattern(self) -> Pattern:
        if self.pattern is None:
            raise ValueError(f"row {self.qid} has no query")
        return Pattern.from_dict(self.pattern)

    def equally_right(self) -> dict[str, Pattern]:
        """The best query and the alternatives hitting as many answers, in ranking order:
        canonical text -> pattern."""
        if self.cypher is None or self.pattern is None:
            return {}
        tied = [(a.cypher, a.pattern) for a in self.alternatives if a.hits == self.hits]
        return {cypher: Pattern.from_dict(data) for cypher, data in [(self.cypher, self.pattern), *tied]}

    def to_json(self) -> str:
        return self.model_dump_json()


def read_rows(path: Path) -> Iterator[SynthesisRow]:
    """Every row of a synthesis file, in order; a line that is not a row names file:line."""
    for number, data in jsonl_rows(Path(path)):
        yield _row(data, path, number)


def read_usable(path: Path) -> list[SynthesisRow]:
    """The rows of a synthesis file that are training pairs."""
    return [row for row in read_rows(path) if row.usable]


def _row(data: dict[str, Any], path: Path, number: int) -> SynthesisRow:
    try:
        return SynthesisRow.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "row"
        raise InputFileError(
            f"{path}:{number}: not a synthesis row ({where}: {first['msg'].lower()}); "
            "synthesize it again with this version"
        ) from None


def done_qids(path: Path) -> set[str]:
    """qids already written to a synthesis file being resumed; a half-written last line (a
    killed run) is cut off."""
    path = Path(path)
    if not path.exists():
        return set()
    done: set[str] = set()
    with path.open("rb+") as handle:
        good_end = 0
        for number, line in enumerate(iter(handle.readline, b""), 1):
            if not line.endswith(b"\n"):
                break
            if line.strip():
                try:
                    done.add(SynthesisRow.model_validate_json(line).qid)
                except ValidationError:
                    raise InputFileError(
                        f"{path}:{number}: not a synthesis row of this version; use --overwrite"
                    ) from None
            good_end = handle.tell()
        handle.truncate(good_end)
    return done
