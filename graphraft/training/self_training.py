"""Self-training L1 on questions without answers (issue 28): a team has its graph and the
questions its users type, not their answers.

    graphraft train l1 --config training/l1_cpu.yaml --self-train questions.txt

Round 0 trains L1 on the configured data (questions generated from the graph, say), or takes
an adapter trained on it before (``start``). Each round
then labels every question with L1's top query, searched under the constraint as `ask` does
(``asked_type_first``: the first of its queries in `ask`'s order, the paths answering the label the
question asks for first, the margin below taken within them), and keeps a label only when

1. the query runs and returns something (on the read-only path, within the query timeout);
2. L1 is sure of it: its score beats the second query's by ``margin`` (summed log-probabilities);
3. the question's wording agrees with it: no other query L1 wrote reads closer to the question,
   by more than ``wording_slack`` (MiniLM cosine similarity between the question and each query
   put in the schema's words: its path as a noun phrase — the closest of its readings — and the
   labels, types and keys it names). With ``wording_center`` each query's similarity counts less
   its shape's mean over the whole round (``Labeller.centers``): some shapes read close to every
   question, and what tells is how much closer this question is than questions are as a rule.

With ``relabel: longer`` a question is labelled instead with the query L1 wrote that reads
closest to it, where that one returns something, is longer than the top query and reads closer
(L1 leans to short queries; ``longer-unsure``: only where L1 is not sure; ``closest``: longer or as
long, another choice of relationship types where L1's top query copies its confusions). A label is decided from
what its row keeps of L1's queries (``Labeller.decide``), so a rerun with other settings decides
the rows again without asking L1 again.

The kept labels join the data (``share`` of the examples) and L1 is trained again from the base
model. With ``reshape``, the data's generated questions are first made again with the shapes the
kept labels ask (the prior re-estimated every round, ``reshaped_data``). Rounds go on while the
labels move: up to ``rounds``, and only while a round gives at least ``min_gain`` of the questions
a label they did not have (a new one, or another query: ``labels_moved``); with no answer known,
labels that no longer change are the sign that another round cannot teach L1 anything. No answer
is read anywhere: the question file is plain text, and a label is L1's query, never a result
compared with anything.

Each round is a folder under the output directory (``round-0``, ``round-1``, ...) with its
adapter, and for labelling rounds ``labels.jsonl`` (synthesis rows: the kept ones ``ok``, the
others ``dropped`` with the reason). A rerun reuses what is done: a round whose adapter was trained
with the same settings, the labels already written. ``self_train.json`` reports every round; the
last useful round's adapter is copied to ``OUTPUT_DIR/adapter``."""

from __future__ import annotations

import json
import math
import re
import shutil
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from graphraft.deadline import Deadline
from graphraft.errors import GraphRAFTError, InputFileError
from graphraft.graph.embeddings import cosine
from graphraft.graph.local_server import write_atomically
from graphraft.inference.query_order import answers_label, asked_phrase, nearest_label
from graphraft.sampling import stable_hash
from graphraft.synthesis.language import Query
from graphraft.synthesis.patterns import Pattern
from graphraft.synthesis.rows import AnchorRow, SynthesisRow, done_qids, read_rows, read_usable
from graphraft.synthesis.verbalise import Verbaliser, words_of
from graphraft.training.config import DataSource, TrainConfig

LABELS = "labels.jsonl"
REPORT = "self_train.json"
#: schema names in a query's text: labels and relationship types after ``:``, keys after ``.``
_NAMES = re.compile(r"[:.]`?([A-Za-z_][A-Za-z0-9_]*)")


def read_questions(path: Path) -> list[tuple[str, str]]:
    """(qid, question) for each line of a text file of questions, blank lines and ``#`` comments
    left out, each question once; the qid is a hash of the text (stable across reruns)."""
    path = Path(path)
    if not path.is_file():
        raise InputFileError(f"{path}: question file not found")
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError:
        raise InputFileError(f"{path}: not a UTF-8 text file of questions, one a line") from None
    questions = dict.fromkeys(line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#"))
    if not questions:
        raise InputFileError(f"{path}: no questions (one a line)")
    return [(f"self-{stable_hash(q)[:12]}", q) for q in questions]


def query_wording(structure: Pattern | Query | None, cypher: str, names: dict[str, str]) -> str:
    """A query in the schema's words: its path read as a noun phrase with the anchors by the
    question's mentions (``names``: node id -> mention), then the words of every label,
    relationship type and property key its text names."""
    return query_wordings(structure, cypher, names, readings=1)[0]


def query_wordings(
    structure: Pattern | Query | None, cypher: str, names: dict[str, str], readings: int, schema_words: bool = True
) -> list[str]:
    """``query_wording`` with the path in each of its first ``readings`` readings (the verbaliser's
    phrases: "the movies directed by X", "the movies X directed", ...); ``schema_words=False``
    leaves out the words of the labels, types and keys it names (the phrases alone)."""
    pattern = structure.pattern if isinstance(structure, Query) else structure
    phrases = [""]
    if isinstance(pattern, Pattern) and pattern.steps and pattern.target and not pattern.anchor.is_label_root:
        other = names.get(pattern.end_anchor.id, "") if pattern.end_anchor is not None else None
        phrases = Verbaliser().phrases_for(pattern, names.get(pattern.anchor.id, ""), other)[:readings]
    named = " ".join(" ".join(words_of(name)) for name in dict.fromkeys(_NAMES.findall(cypher)) if name != "id")
    named = named if schema_words or phrases == [""] else ""
    return [" ".join(part for part in (phrase, named) if part) for phrase in phrases]


#: readings of each query compared with the question (the closest counts): a query's wording is
#: the verbaliser's, and a question may be worded as any of them
WORDING_READINGS = 8


def closest_readings(embed: Callable[[list[str]], list[list[float]]], question: str, wordings) -> list[float]:
    """For each query's readings (``query_wordings``), the cosine similarity of the closest to
    the question; one call of ``embed`` for all."""
    question_vector, *vectors = embed([question, *(text for texts in wordings for text in texts)])
    rest = iter(vectors)
    return [max(cosine(question_vector, next(rest)) for _ in texts) for texts in wordings]


class Labeller:
    """Labels questions with L1's top query, keeping those that pass the checks (see above).
    ``pipeline``: a GraphRAFT with the L1 adapter to label with (its store runs the queries);
    ``embed``: texts -> vectors (None: no wording check)."""

    def __init__(self, pipeline, config: TrainConfig, embed: Callable[[list[str]], list[list[float]]] | None):
        self.pipeline, self.config, self.settings, self.embed = pipeline, config, config.self_train, embed
        self.max_hops = config.max_hops
        self._label_vectors: dict[str, list[float]] = {}  # asked_type_first: the labels' names embedded

    @property
    def decisions(self) -> dict[str, Any]:
        """The settings a label is decided by (a row decided by others is decided again)."""
        keys = ("margin", "wording_slack", "relabel", "wording_schema_words", "wording_center", "asked_type_first")
        return {key: getattr(self.settings, key) for key in keys}

    @property
    def wording_check(self) -> bool:
        """A wording check is made: an embedder and a slack."""
        return self.embed is not None and self.settings.wording_slack is not None

    @property
    def centering(self) -> bool:
        """``wording_center`` applies (to a wording check)."""
        return self.settings.wording_center and self.wording_check

    def label(self, questions: list[tuple[str, str]], round_: int, batch: int = 16) -> Iterator[SynthesisRow]:
        for start in range(0, len(questions), batch):
            part = questions[start : start + batch]
            # L1 searches the batch together, so its questions share the time `ask` gives each,
            # summed: one question's limit for the whole batch dropped every question of a batch
            # that a busy machine slowed past it (160 of 528 in one run)
            limit = self.pipeline.settings.ask_timeout_s * len(part)
            shared = Deadline(limit, f"labelling a batch of {len(part)} questions")
            answers = self.pipeline.ask_each(
                [q for _, q in part], [shared] * len(part), beams=self.settings.queries, max_hops=self.max_hops
            )
            for (qid, question), answer in zip(part, answers):
                yield self._row(qid, question, answer, round_)

    def _row(self, qid: str, question: str, answer, round_: int) -> SynthesisRow:
        started = time.perf_counter()
        if isinstance(answer, GraphRAFTError):
            return _row(qid, question, None, round_, reason=str(answer))
        queries = answer.queries
        if not queries:
            return _row(qid, question, answer, round_, reason=answer.message or "L1 wrote no query")
        structures = [answer.structure_of(q.cypher) for q in queries]
        # every query L1 wrote, best first: what the label is decided from (now, or again later)
        source: dict[str, Any] = {"kind": "self-train", "round": round_}
        source["queries"] = [_written(q, s) for q, s in zip(queries, structures)]
        row = self.decide(_row(qid, question, answer, round_, None, structures[0], queries[0].cypher, source))
        row.timings = {"total": round(time.perf_counter() - started + answer.timings.get("total", 0.0), 5)}
        return row

    def decide(self, row: SynthesisRow, centers: dict[str, float] | None = None) -> SynthesisRow:
        """Keep, drop or (``relabel``) choose among the queries L1 wrote for ``row``'s question,
        from what the row keeps of them (``source.queries``), so that a label file can be decided
        again under other settings without asking L1 again. A query not run before runs here.
        ``centers`` (``wording_center``): each shape's mean similarity, taken from each query's."""
        source = dict(row.source or {})
        written = [dict(q) for q in source["queries"]]
        structures = [written_structure(q) for q in written]
        for key in ("margin", "wording", "closest_other", "relabelled", "decided"):
            source.pop(key, None)
        if not self.settings.asked_type_first:
            source.pop("asked_label", None)
        source["queries"] = list(written)  # as L1 wrote them, best first
        grouped = len(written)  # the queries the margin is taken within, first in ``written``
        if self.settings.asked_type_first:
            written, structures, grouped = self._asked_type_order(row, source, written, structures)
        source["second"] = written[1]["cypher"] if len(written) > 1 else None
        reason = self._ran(written[0], structures[0])
        margin = written[0]["score"] - written[1]["score"] if grouped > 1 else math.inf
        source["margin"] = round(margin, 4) if grouped > 1 else None
        sure = margin >= self.settings.margin
        if reason is None and not sure:
            reason = f"L1 was not sure: its top query beat the second by {margin:.2f} < {self.settings.margin:g}"
        chosen = 0
        if self.wording_check and len(written) > 1:
            similarity = self._similarity(row, source, written, structures)
            if centers is not None:  # how much closer than questions are to the shape as a rule
                similarity = less_shape_means(similarity, structures, centers)
            closest = max(range(1, len(similarity)), key=similarity.__getitem__)
            source["wording"] = round(similarity[0], 4)
            source["closest_other"] = round(similarity[closest], 4)
            if reason is None and similarity[closest] - similarity[0] > self.settings.wording_slack:
                centered = ", each less its shape's mean" if centers is not None else ""
                reason = (
                    f"another query reads closer to the question ({similarity[closest]:.2f} vs "
                    f"{similarity[0]:.2f}{centered}): {written[closest]['cypher']}"
                )
            relabel = self.settings.relabel
            if relabel in ("longer", "closest") or (relabel == "longer-unsure" and not sure):
                longer = self._longer(written, structures, similarity, same_length=relabel == "closest")
                if longer is not None:
                    hops = (hops_of(structures[0]), hops_of(structures[longer]))
                    which = "a longer query" if hops[1] > hops[0] else "another query as long"
                    source["relabelled"] = {
                        "from": written[0]["cypher"],
                        "why": f"{which} ({hops[0]} -> {hops[1]} hops) reads closer to the question "
                        f"({similarity[longer]:.2f} vs {similarity[0]:.2f})",
                    }
                    chosen, reason = longer, None
        source["decided"] = self.decisions
        structure = structures[chosen]
        pattern = structure.pattern if isinstance(structure, Query) else structure
        kept = reason is None
        return row.model_copy(
            update={
                "status": "ok" if kept else "dropped",
                "reason": reason,
                "cypher": written[chosen]["cypher"] if kept else None,
                "pattern": pattern.to_dict() if kept and pattern is not None else None,
                "query": structure.to_dict() if kept and isinstance(structure, Query) else None,
                "hops": hops_of(structure),
                "hits": written[chosen].get("rows", 0),  # what L1's query returned (no answer to hit)
                "total": written[chosen].get("rows", 0),
                "source": source,
            }
        )

    def _asked_type_order(self, row: SynthesisRow, source: dict[str, Any], written, structures):
        """``asked_type_first``: L1's path queries with those whose answers have the label the
        question asks for first (``query_order.asked_type_order``, as `ask` tries them), and how
        many do (the group L1's margin is taken within; all of them where none does or the
        question asks for no label). Queries of the language are left in L1's order."""
        if len(written) < 2 or self.embed is None or not all(isinstance(s, Pattern) for s in structures):
            return written, structures, len(written)
        if "asked_label" not in source:  # kept in the row: it depends on the question alone
            phrase = asked_phrase(row.question, [anchor.mention for anchor in row.anchors])
            labels = self.pipeline.store.schema().labels
            source["asked_label"] = nearest_label(phrase, labels, self.embed, self._label_vectors)
        answers = [answers_label(s, source["asked_label"]) for s in structures]
        if not any(answers):
            return written, structures, len(written)
        order = sorted(range(len(written)), key=lambda i: 0 if answers[i] else 1)
        return [written[i] for i in order], [structures[i] for i in order], sum(answers)

    def _ran(self, written: dict[str, Any], structure: Pattern | Query | None) -> str | None:
        """Why a query L1 wrote cannot be a label (None: it can): run first where it was not
        (recorded in ``written``)."""
        if structure is None:
            return "its query is not a candidate"
        if "rows" not in written:
            from graphraft.inference.generation import GeneratedQuery
            from graphraft.inference.retrieval import execute

            language = structure if isinstance(structure, Query) else None
            query = GeneratedQuery(written["cypher"], written["score"], 0, language)
            patterns = {written["cypher"]: structure} if language is None else None
            timeout_ms = self.pipeline.settings.query_timeout_ms
            run = execute(self.pipeline.store, [query], timeout_ms=timeout_ms, patterns=patterns).runs[0]
            written.update(rows=len(run.rows) if run.rows else len(run.node_ids), error=run.error)
        if written.get("error"):
            return f"its query failed: {written['error']}"
        if not written["rows"]:
            return "its query returned nothing"
        return None

    def _similarity(self, row: SynthesisRow, source: dict[str, Any], written, structures) -> list[float]:
        """Each query's closest reading to the question (MiniLM cosine similarity, to 4 places),
        kept in ``source``'s ``written`` queries (each one's ``similarity``, with the words they were
        compared with: ``similarity_words``) and taken from there when those words are the same."""
        words = self.settings.wording_schema_words
        if source.get("similarity_words") == words and all("similarity" in q for q in written):
            return [q["similarity"] for q in written]
        names = {a.id: a.mention for a in row.anchors}
        texts = [query_wordings(s, q["cypher"], names, WORDING_READINGS, words) for q, s in zip(written, structures)]
        similarity = [round(value, 4) for value in closest_readings(self.embed, row.question, texts)]
        for query, value in zip(written, similarity):
            query["similarity"] = value
        source["similarity_words"] = words
        return similarity

    def centers(self, rows: list[SynthesisRow]) -> dict[str, float]:
        """``wording_center``'s means (``shape_means``) over every query L1 wrote for ``rows``,
        their similarities computed where the rows do not keep them (and kept there)."""
        for row in rows:
            written = (row.source or {}).get("queries") or []
            if len(written) > 1:
                self._similarity(row, row.source, written, [written_structure(q) for q in written])
        return shape_means(rows)

    def _longer(self, written, structures, similarity: list[float], same_length: bool = False) -> int | None:
        hops = [hops_of(s) for s in structures]
        return longer_query(similarity, hops, lambda i: self._ran(written[i], structures[i]) is None, same_length)


def longer_query(
    similarity: list[float], hops: list[int], returns: Callable[[int], bool], same_length: bool = False
) -> int | None:
    """``relabel: longer``'s choice among the queries L1 wrote (best first): the one that reads
    closest to the question (``similarity``) of those that return something (``returns(i)``, asked
    closest first), where it is longer than the top one (``same_length``: or as long, ``relabel:
    closest``) and reads closer than it; None: the top query stands."""
    for i in sorted(range(1, len(similarity)), key=lambda i: -similarity[i]):
        if similarity[i] <= similarity[0]:
            return None  # the top query reads closest of those that could be chosen
        if returns(i):
            return i if hops[i] > hops[0] or (same_length and hops[i] == hops[0]) else None
    return None


def written_structure(written: dict[str, Any]) -> Pattern | Query | None:
    if written.get("query"):
        return Query.from_dict(written["query"])
    return Pattern.from_dict(written["pattern"]) if written.get("pattern") else None


def shape_of(structure: Pattern | Query | None) -> str:
    """A query without its anchors' ids and its values: the path's labels and types (and for the
    query language, its clauses), what ``wording_center`` averages over."""
    if structure is None:
        return ""
    if isinstance(structure, Query):
        clauses = structure.to_dict()
        clauses.pop("pattern")
        for item in clauses.get("filters", []):
            item.pop("value", None)
        return structure.pattern.shape + json.dumps(clauses, sort_keys=True)
    return structure.shape


def shape_means(rows: Iterable[SynthesisRow]) -> dict[str, float]:
    """Each shape's mean similarity to the question over the queries the rows keep with one
    (``similarity``, as ``wording_center`` decides them)."""
    by_shape: dict[str, list[float]] = {}
    for row in rows:
        for written in (row.source or {}).get("queries") or []:
            if "similarity" in written:
                by_shape.setdefault(shape_of(written_structure(written)), []).append(written["similarity"])
    return {shape: sum(values) / len(values) for shape, values in by_shape.items()}


def less_shape_means(similarity: list[float], structures, means: dict[str, float]) -> list[float]:
    """Each query's similarity less its shape's mean (``shape_means``; 0 for a shape without one)."""
    return [value - means.get(shape_of(structure), 0.0) for value, structure in zip(similarity, structures)]


def hops_of(structure: Pattern | Query | None) -> int:
    """A query's path length (0 for none)."""
    pattern = structure.pattern if isinstance(structure, Query) else structure
    return len(pattern.steps) if pattern is not None else 0


def _written(query, structure: Pattern | Query | None) -> dict[str, Any]:
    """One query L1 wrote, as a label row keeps it: its text, score and structure, and what it
    returned where it ran (rows, error)."""
    kind = "query" if isinstance(structure, Query) else "pattern"
    written = {"cypher": query.cypher, "score": round(query.score, 4), kind: structure.to_dict() if structure else None}
    if query.ran:
        written.update(rows=query.rows, error=query.error)
    return written


def _row(
    qid: str,
    question: str,
    answer,
    round_: int,
    reason: str | None,
    structure: Pattern | Query | None = None,
    cypher: str | None = None,
    source: dict[str, Any] | None = None,
    results: int = 0,
    timings: dict[str, float] | None = None,
) -> SynthesisRow:
    """A labelling outcome as a synthesis row: no answers (none is known), L1's query as the
    target when kept, the reason when not. Every row is a training row (validation stays the
    configured data's)."""
    anchors = [AnchorRow(**a) for a in answer.anchors] if answer is not None else []
    kept = reason is None and structure is not None
    pattern = structure.pattern if isinstance(structure, Query) else structure
    return SynthesisRow(
        qid=qid,
        question=question,
        hops=hops_of(structure),
        qtype="self-train",
        split="train",
        answers=[],
        answer_ids=[],
        mentions=list(answer.mentions) if answer is not None else [],
        anchors=anchors,
        status="ok" if kept else "dropped",
        reason=None if kept else reason,
        cypher=cypher if kept else None,
        pattern=pattern.to_dict() if kept and pattern is not None else None,
        query=structure.to_dict() if kept and isinstance(structure, Query) else None,
        hits=results,  # what L1's query returned (there is no answer to hit)
        total=results,
        precision=0.0,
        recall=0.0,
        alternatives=[],
        closest=None,
        enumerated=answer.candidates if answer is not None else 0,
        timeouts=[],
        hubs_skipped=0,
        source=source or {"kind": "self-train", "round": round_},
        timings=timings or {},
    )


# ---------------------------------------------------------------------------------- rounds
def round_config(
    config: TrainConfig, round_: int, labels: Path | None, data: list[DataSource] | None = None
) -> TrainConfig:
    """Round ``round_``'s training: the configured data (or ``data``) plus the kept labels at
    their share, into its own folder."""
    data = list(config.data if data is None else data)
    if labels is not None:
        data.append(DataSource(path=labels, share=config.self_train.share))
    return config.model_copy(
        update={"data": data, "output_dir": Path(config.output_dir) / f"round-{round_}"}, deep=True
    )


def self_train(
    config: TrainConfig,
    settings,
    resume: bool = False,
    progress_callback=None,
    make_pipeline=None,
    make_embed=None,
) -> dict[str, Any]:
    """Train, label, train again, as the module says; returns the report also written to
    ``OUTPUT_DIR/self_train.json``. ``make_pipeline(settings, adapter)`` and ``make_embed()``
    build the labelling pipeline and the embedder (defaults: GraphRAFT on the config's graph,
    the configured embedder)."""
    from graphraft.training.trainer import train, trained_with

    notify = progress_callback or (lambda entry: None)
    questions = read_questions(config.self_train.questions)
    config = settled(config, notify)
    if config.self_train.reshape:
        reshaping(config)  # its mistakes before any work
    out = Path(config.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    make_pipeline = make_pipeline or _pipeline(config)
    embed = (make_embed or _embedder(settings, config))()
    rounds: list[dict[str, Any]] = []
    previous: dict[str, str] = {}

    def trained_before(round_: int, labels: Path | None, data: list[DataSource] | None = None) -> dict | None:
        round_cfg = round_config(config, round_, labels, data)
        summary_file = Path(round_cfg.output_dir) / "summary.json"
        if summary_file.exists():
            summary = json.loads(summary_file.read_text())
            if trained_with(summary, round_cfg):
                return summary
        return None

    def trained(round_: int, labels: Path | None, data: list[DataSource] | None = None) -> dict[str, Any]:
        round_cfg = round_config(config, round_, labels, data)
        if (summary := trained_before(round_, labels, data)) is not None:
            notify({"note": f"round {round_}: trained before, reused ({summary['adapter']})"})
            return summary
        notify({"note": f"round {round_}: training on {', '.join(map(str, round_cfg.data))}"})
        return train(round_cfg, settings, resume=resume, progress_callback=progress_callback)

    start = config.self_train.start
    if start is not None:
        from graphraft.inference.adapters import check_metadata

        check_metadata(start, "l1", config.base_model)
        summary = {"adapter": str(start), "train_examples": None, "total_s": 0.0, "history": []}
        notify({"note": f"round 0: {start}, trained before"})
    else:
        summary = trained(0, None)
    rounds.append(_round_report(0, summary, None))
    best = summary
    for round_ in range(1, config.self_train.rounds + 1):
        labels = out / f"round-{round_}" / LABELS
        labels.parent.mkdir(parents=True, exist_ok=True)
        pipeline = make_pipeline(settings, Path(best["adapter"]))
        rows = label_file(pipeline, config, questions, labels, round_, notify, embed)
        kept = {row.qid: row.cypher for row in rows if row.usable}
        report = labels_report(rows, kept, previous)
        if not kept:
            rounds.append({"round": round_, **report, "stopped": "no label was kept"})
            break
        if round_ > 1 and (moved := labels_moved(report)) < max(1, config.self_train.min_gain * len(questions)):
            rounds.append({"round": round_, **report, "stopped": f"the labels moved for {moved} questions only"})
            break
        data = None
        if config.self_train.reshape:
            data = reshaped_sources(config, labels.parent)
            if trained_before(round_, labels, data) is None or not data[-1].path.exists():
                data = reshaped_data(config, settings, labels, labels.parent, notify)
            report = {**report, **generated_report(data[-1].path)}
        summary = trained(round_, labels, data)
        rounds.append({**_round_report(round_, summary, labels), **report})
        best, previous = summary, kept
        _write_report(out, config, questions, rounds, best)
    adapter = out / "adapter"
    if adapter.exists():
        shutil.rmtree(adapter)
    shutil.copytree(best["adapter"], adapter)
    return _write_report(out, config, questions, rounds, best, adapter)


GENERATED = "generated.jsonl"


def reshaped_sources(config: TrainConfig, folder: Path) -> list[DataSource]:
    """A ``reshape`` round's data: the configured files not made from the graph as they are, and
    in place of those made from it, ``folder``/generated.jsonl at the share the rest leaves."""
    made, kept, share, _ = reshaping(config)
    return [*kept, DataSource(path=folder / GENERATED, share=share, graph=made.graph)]


def reshaped_data(config: TrainConfig, settings, labels: Path, folder: Path, notify) -> list[DataSource]:
    """``reshape``: the configured files `synthesize --from-graph` made, made again with the same
    settings but their shapes drawn as often as ``labels`` (the kept ones) ask them, into
    ``folder``/generated.jsonl; as many training questions as their share of the examples (the
    rest, after the labels' and the other files' shares), so that the trainer takes them all, in
    the prior's proportions, and their validation questions beside. Returns the round's data
    (``reshaped_sources``)."""
    from graphraft.graph import open_store
    from graphraft.synthesis.from_graph import GenerationConfig, generate, generator_for
    from graphraft.synthesis.synthesizer import changed_settings

    made, _, share, first = reshaping(config)
    # a tenth of the questions made go to validation (split by a hash): enough more that the
    # training rows fill the share, and a few for validation however small the share
    count = math.ceil(share * config.max_train_examples / 0.9) + 10
    fields = {k: v for k, v in first.items() if k in GenerationConfig.model_fields}
    prior = {
        "shape_prior": asked_shapes(labels, folder / SHAPES, config.self_train)
        if config.self_train.reshape_unsure
        else labels,
        "prior_hops": config.self_train.reshape_hops,
        "prior_types": config.self_train.reshape_types,
        "prior_smoothing": config.self_train.reshape_smoothing,
    }
    generation = GenerationConfig(**{**fields, "count": count, **prior})
    data = reshaped_sources(config, folder)
    output = data[-1].path
    with open_store(settings, made.graph or config.graph) as store:
        if first.get("graph") not in (None, store.identity):
            raise InputFileError(
                f"self_train.reshape: {made.path} was made on {first['graph']}, not on {store.identity}"
            )
        generator = generator_for(store, settings, generation)
        meta = {"graph": store.identity, **generation.fingerprint()}
        fresh = not output.exists() or bool(changed_settings(output, meta))
        notify({"note": f"{folder.name}: making {count:,} questions from the graph again, shaped as the labels ask"})
        generate(generator, output, overwrite=fresh)
    return data


SHAPES = "shapes.jsonl"


def asked_shapes(labels: Path, output: Path, settings) -> Path:
    """``reshape_unsure``: what the round's questions ask, as the prior's rows (``output``): each kept
    label as it is, and each other question with the query L1 wrote for it that reads closest to it
    (each query's similarity as the labels keep it, less its shape's mean with ``wording_center``) —
    a dropped label's shape counts, the label is still not trained on (this file is a prior only;
    its rows say ``source.shape_only``). A question whose queries keep no similarity is left out."""
    rows = list(read_rows(labels))
    means = shape_means(rows) if settings.wording_center else {}
    asked = [row for row in rows if row.usable]
    for row in rows:
        written = [w for w in (row.source or {}).get("queries") or [] if w.get("similarity") is not None]
        if row.usable or not written:
            continue
        similarity = [w["similarity"] for w in written]
        centered = less_shape_means(similarity, [written_structure(w) for w in written], means)
        closest = written[max(range(len(written)), key=centered.__getitem__)]
        source = {**(row.source or {}), "shape_only": True}
        fields = {"cypher": closest["cypher"], "pattern": closest.get("pattern"), "query": closest.get("query")}
        asked.append(row.model_copy(update={"status": "ok", "reason": None, "source": source, **fields}))
    output.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(output, "".join(row.to_json() + "\n" for row in asked))
    return output


def generated_report(output: Path) -> dict[str, Any]:
    """What a ``reshape`` round made: its questions by hops, and the shapes of the prior it was
    made with (its settings keep them)."""
    from graphraft.synthesis.synthesizer import read_meta

    rows = read_usable(output)
    return {
        "generated": str(output),
        "generated_rows": len(rows),
        "generated_by_hops": {str(h): n for h, n in sorted(Counter(row.hops for row in rows).items())},
        "prior_shapes": len(read_meta(output)["shape_prior"]),
    }


def settled(config: TrainConfig, notify) -> TrainConfig:
    """The settings a run keeps: ``reshape``, on by default, left out (with a note) where
    ``reshaping`` says it cannot run — no data file was made from the graph, or the shares leave it
    no room; set, ``reshaping``'s error stands."""
    if not config.self_train.reshape or "reshape" in config.self_train.model_fields_set:
        return config
    try:
        reshaping(config)
    except InputFileError as error:
        notify({"note": f"self_train.reshape left out: {str(error).removeprefix('self_train.reshape: ')}"})
        return config.model_copy(update={"self_train": config.self_train.model_copy(update={"reshape": False})})
    return config


def reshaping(config: TrainConfig) -> tuple[DataSource, list[DataSource], float, dict[str, Any]]:
    """``reshape``'s plan, checked before any work: the first data file `synthesize --from-graph`
    made (its .meta.json says so; all such files are replaced), the files kept as they are (each
    with a share), the share left to the questions made again, and their settings."""
    from graphraft.synthesis.synthesizer import read_meta

    metas = {source.path: read_meta(source.path) for source in config.data}
    made = [s for s in config.data if metas[s.path].get("source") == "graph"]
    kept = [s for s in config.data if s not in made]
    if not made:
        raise InputFileError(
            "self_train.reshape: none of the data files was made by `synthesize --from-graph` (their "
            ".meta.json says so): there are no generated questions to make again"
        )
    if config.self_train.share + sum(s.share or 0.0 for s in config.data) >= 1.0 - 1e-9:
        raise InputFileError(
            "self_train.reshape: the labels' and the data's shares leave nothing to the questions made again"
        )
    if loose := [str(s.path) for s in kept if s.share is None]:
        raise InputFileError(
            f"self_train.reshape: {', '.join(loose)} has no share (PATH@SHARE): give it one, the questions "
            "made again take the rest of the examples"
        )
    share = 1.0 - config.self_train.share - sum(s.share for s in kept)
    return made[0], kept, share, metas[made[0].path]


def label_file(
    pipeline, config: TrainConfig, questions, path: Path, round_: int, notify, embed=None
) -> list[SynthesisRow]:
    """Label the questions not yet in ``path`` (appending, so an interrupted round resumes),
    decide again the rows decided under other settings (from the queries they keep, without
    asking L1 again), and return every row of the file. Closes ``pipeline``."""
    try:
        labeller = Labeller(pipeline, config, embed)
        done = done_qids(path)
        todo = [(qid, q) for qid, q in questions if qid not in done]
        if todo:
            notify({"note": f"round {round_}: labelling {len(todo):,} questions ({len(done):,} done before)"})
            with path.open("a", encoding="utf-8") as handle:
                for count, row in enumerate(labeller.label(todo, round_), 1):
                    handle.write(row.to_json() + "\n")
                    handle.flush()
                    if count % 100 == 0:
                        notify({"note": f"round {round_}: {count:,}/{len(todo):,} labelled"})
        rows = list(read_rows(path))
        if labeller.centering:
            # every label depends on the whole round's similarities: all are decided again (from
            # the similarities the rows keep)
            notify({"note": f"round {round_}: deciding the labels, each query's similarity less its shape's mean"})
            centers = labeller.centers(rows)
            decided = [labeller.decide(row, centers) if (row.source or {}).get("queries") else row for row in rows]
            if any(a.to_json() != b.to_json() for a, b in zip(decided, rows)):
                write_atomically(path, "".join(row.to_json() + "\n" for row in decided))
            return decided
        stale = [i for i, row in enumerate(rows) if _decided_otherwise(row, labeller.decisions)]
        if stale:
            notify({"note": f"round {round_}: deciding {len(stale):,} labels again under the current settings"})
            for i in stale:
                rows[i] = labeller.decide(rows[i])
            write_atomically(path, "".join(row.to_json() + "\n" for row in rows))
    finally:
        pipeline.close()
    return rows


def _decided_otherwise(row: SynthesisRow, decisions: dict[str, Any]) -> bool:
    """A row that keeps L1's queries, decided under other settings than ``decisions`` (or before
    the settings were recorded)."""
    from graphraft.training.trainer import ADDED_LATER

    source = row.source or {}
    decided = source.get("decided")
    if decided is not None:  # a setting added later counts at its old value in the rows decided before it
        earlier = {
            path[-1]: old for path, old in ADDED_LATER.items() if path[:-1] == ("self_train",) and path[-1] in decisions
        }
        decided = {**earlier, **decided}
    return bool(source.get("queries")) and decided != decisions


def _pipeline(config: TrainConfig):
    def make(settings, adapter: Path):
        from graphraft.inference.pipeline import GraphRAFT

        asked = settings.model_copy(update={"l1_adapter": adapter, "l2_adapter": None, "base_model": config.base_model})
        # the top query runs (its rows decide); the others' scores and texts are all the margin
        # and the wording compare (running them all and fetching every node they returned took
        # 1.11 s a question against 0.77: benchmarks/label_speed.py); L1's own order, best first
        # (the label is L1's top query, the margin its lead): ask's asked-type rule left out
        return GraphRAFT(
            asked, graph=config.graph, language=config.self_train.language, run_queries=1, asked_type_first=False
        )

    return make


def _embedder(settings, config: TrainConfig):
    def make():
        if config.self_train.wording_slack is None and not config.self_train.asked_type_first:
            return None
        from graphraft.graph.embeddings import make_embedder

        embedder = make_embedder(settings)
        return embedder.embed if embedder is not None else None

    return make


def labels_report(rows: list[SynthesisRow], kept: dict[str, str], previous: dict[str, str]) -> dict[str, Any]:
    reasons = Counter(_reason_kind(row.reason) for row in rows if not row.usable)
    hops = Counter(row.hops for row in rows if row.usable)
    return {
        "questions": len(rows),
        "kept": len(kept),
        "kept_by_hops": {str(h): n for h, n in sorted(hops.items())},
        "dropped": dict(reasons.most_common()),
        "changed": sum(1 for qid, cypher in kept.items() if qid in previous and previous[qid] != cypher),
        "new": sum(1 for qid in kept if qid not in previous),
    }


def labels_moved(report: dict[str, Any]) -> int:
    """How many questions a round labelled differently from the round before: a label new to
    the question or another query. (Counting the kept labels' growth instead stopped a round
    whose labels changed for 366 of 1,500 questions — with relabel, 70 % right where the round
    before had 64 % — because 24 fewer were kept.)"""
    return report["changed"] + report["new"]


def _reason_kind(reason: str | None) -> str:
    """A dropped label's reason without its particulars (a query, a score)."""
    return (reason or "unknown").split(":")[0].split(" (")[0]


def _round_report(round_: int, summary: dict[str, Any], labels: Path | None) -> dict[str, Any]:
    last = (summary.get("history") or [{}])[-1]
    return {
        "round": round_,
        "labels": str(labels) if labels else None,
        "adapter": summary["adapter"],
        "train_examples": summary["train_examples"],
        "exact_match_generated_validation": last.get("exact_match"),
        "train_s": summary["total_s"],
    }


def _write_report(out: Path, config, questions, rounds, best, adapter: Path | None = None) -> dict[str, Any]:
    report = {
        "questions_file": str(config.self_train.questions),
        "questions": len(questions),
        "settings": config.self_train.model_dump(mode="json"),
        "rounds": rounds,
        "best_round_adapter": best["adapter"],
        "adapter": str(adapter) if adapter else None,
    }
    (out / REPORT).write_text(json.dumps(report, indent=2))
    return report
