"""`graphraft eval`: the full pipeline and four baselines on the same questions, scored with
the STaRK metrics per hop, with latency, a failure breakdown, a report and a plot.

Methods (one table):
- graphraft     L1 (adapter) under the constraint, then L2 picks the answers
- no-l2         the same queries; the answers are every retrieved node in query-score order
- free          L1 without the constraint: queries run as written (failures counted)
- vector        the nodes whose name embedding is nearest the question's, no query at all
- base          the base model under the constraint, no fine-tuning (paper, Table 2, last row)

Answers are compared by node id when the questions give ids, else by normalised name (as
MetaQA does)."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import quantiles
from typing import Any

from graphraft.errors import DeadlineExceededError
from graphraft.evaluation.config import METHODS
from graphraft.evaluation.execution import (
    QueryResult,
    answer_rows,
    answered_by,
    each_query,
    picked_among_ties,
    same_result,
    some_rows_of,
)
from graphraft.evaluation.metrics import METRIC_NAMES, QuestionScores, average, score_question
from graphraft.progress import Progress, SilentProgress
from graphraft.synthesis.results import result_key
from graphraft.text import normalize_name

METHOD_TITLES = {
    "graphraft": "GraphRAFT (L1 constrained + L2)",
    "no-l2": "without L2 (retrieved nodes in query order)",
    "free": "L1 without the constraint (free generation)",
    "vector": "vector similarity of nodes to the question",
    "base": "base model under the constraint, no fine-tuning",
}
# why a question was missed, named by the stage that failed (the first that applies)
FAILURES = (
    "correct",
    "no anchor",  # L0/resolution found no node
    "gold entity not among anchors",  # resolution anchored other nodes than the question's entity
    "no valid candidate",  # enumeration found no pattern around the anchors
    "query failed to run",  # every query L1 chose failed in the database
    "gold not among candidates",  # no candidate query returns the answers: L1 could not be right
    "gold not among L1's queries",  # (a gold result) none of the queries L1 wrote gives it
    "L1's top query wrong",  # a candidate returns the answers, L1 ranked another first
    "L2 chose another set",  # L1's top query returns the answers, L2 picked other nodes
    "right set, wrong ranking",  # the answers are there, not first
    "timed out",  # no answer within GRAPHRAFT_ASK_TIMEOUT_S, even asked alone
)


#: the execution accuracy's row where a gold LIMIT with no ORDER BY takes any as many of its rows
ANY_ROWS = "all, any rows of an unordered LIMIT"
#: the execution accuracy's row that counts the gold's exact rows only, not another pick among
#: rows tied at the gold's LIMIT by the gold's own order (``Outcome.picked``)
EXACT_ROWS = "all, the gold's exact rows (no other pick among ties)"
#: the execution accuracy's row for an oracle that takes whichever of L1's queries gives the gold
#: result (``Outcome.query_results``): what choosing among them could reach
ANY_QUERY = "all, one of L1's queries gives it (an oracle)"


@dataclass
class Outcome:
    """One method on one question."""

    qid: str
    hops: int
    method: str
    scores: QuestionScores
    seconds: float
    failure: str
    top_query: str | None = None
    failed_queries: int = 0
    queries: int = 0
    mention_known: bool = False  # the question marks its entity, so linking can be judged
    #: with a gold result (rows): whether the answer's rows are it (execution accuracy), and the
    #: categories it is reported under (the question's type, its category)
    execution: bool | None = None
    categories: tuple[str, ...] = ()
    #: the same, where the gold's LIMIT has no ORDER BY, with any as many rows of its result
    #: without the LIMIT counted right too (the question file's ``any_of``)
    execution_any: bool | None = None
    #: right as another pick among rows tied at the gold's LIMIT: the answer's query is ordered
    #: as the gold's and the gold rows are one of its picks (``execution.picked_among_ties``)
    picked: bool = False
    #: each query of the language L1 wrote that ran, against the gold result (``execution.each_query``)
    query_results: tuple[QueryResult, ...] = ()
    #: the query whose result the method answered with: L2's choice (graphraft), else the first
    #: query that returned anything (None: none did)
    answered_by: str | None = None
    #: the question's gold answers are nodes (MetaQA's); False for a gold result of rows alone
    #: (Text2Cypher's), which the node metrics (Hit@k, MRR, F1) leave out
    node_gold: bool = True


@dataclass
class EvalReport:
    title: str
    questions: int
    methods: list[str]
    outcomes: list[Outcome] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)

    def table(self, hops: int | None = None) -> dict[str, dict[str, float]]:
        """method -> averaged node metrics (all hops, or one), over the questions whose gold
        answers are nodes."""
        out = {}
        for method in self.methods:
            chosen = [
                o.scores
                for o in self.outcomes
                if o.method == method and o.node_gold and (hops is None or o.hops == hops)
            ]
            out[method] = average(chosen)
        return out

    def node_questions(self) -> int:
        """How many questions the node metrics are over (their gold answers are nodes)."""
        return len({o.qid for o in self.outcomes if o.node_gold})

    def hops(self) -> list[int]:
        return sorted({o.hops for o in self.outcomes if o.node_gold})

    def latency(self, method: str) -> dict[str, float]:
        seconds = sorted(o.seconds for o in self.outcomes if o.method == method)
        if not seconds:
            return {"p50": 0.0, "p95": 0.0}
        if len(seconds) == 1:
            return {"p50": seconds[0], "p95": seconds[0]}
        cuts = quantiles(seconds, n=100, method="inclusive")
        return {"p50": cuts[49], "p95": cuts[94]}

    def failures(self, method: str) -> dict[str, int]:
        counts = Counter(o.failure for o in self.outcomes if o.method == method)
        return {name: counts.get(name, 0) for name in FAILURES}

    def entity_linking_recall(self, method: str) -> float | None:
        """Of the questions whose entity is known (marked), the share whose entity was among the
        anchors; None for a method without anchors (vector) or with no such question."""
        linked = [o for o in self.outcomes if o.method == method and o.mention_known]
        if method == "vector" or not linked:
            return None
        missed = sum(o.failure in ("no anchor", "gold entity not among anchors") for o in linked)
        return 1.0 - missed / len(linked)

    def execution_accuracy(self, method: str) -> dict[str, dict[str, float]] | None:
        """Of the questions with a gold result: the share whose answer is it, overall and per
        category (None when no question has one)."""
        scored = [o for o in self.outcomes if o.method == method and o.execution is not None]
        if not scored:
            return None
        groups: dict[str, list[bool]] = {"all": [o.execution for o in scored]}
        for outcome in scored:
            for name in outcome.categories:
                groups.setdefault(name, []).append(outcome.execution)
        # shown where it differs for some method: then for every method, side by side
        if any(o.execution_any != o.execution for o in self.outcomes if o.execution is not None):
            groups[ANY_ROWS] = [bool(o.execution_any) for o in scored]
        if any(o.picked for o in self.outcomes):
            groups[EXACT_ROWS] = [o.execution and not o.picked for o in scored]
        if any(o.query_results for o in scored):
            groups[ANY_QUERY] = [o.execution or any(r.right for r in o.query_results) for o in scored]
        return {name: {"accuracy": sum(v) / len(v), "questions": len(v)} for name, v in sorted(groups.items())}

    def failed_query_share(self, method: str) -> float:
        runs = [o for o in self.outcomes if o.method == method]
        total = sum(o.queries for o in runs)
        return sum(o.failed_queries for o in runs) / total if total else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "questions": self.questions,
            "node_questions": self.node_questions(),
            "methods": self.methods,
            "settings": self.settings,
            "overall": self.table(),
            "by_hop": {str(h): self.table(h) for h in self.hops()},
            "latency_s": {m: self.latency(m) for m in self.methods},
            "failures": {m: self.failures(m) for m in self.methods},
            "failed_query_share": {m: self.failed_query_share(m) for m in self.methods},
            "entity_linking_recall": {m: self.entity_linking_recall(m) for m in self.methods},
            "execution_accuracy": {m: self.execution_accuracy(m) for m in self.methods},
        }


# ---------------------------------------------------------------------------------- scoring
def answer_keys(item) -> tuple[set[str], Callable[[dict], str]]:
    """The gold answers and how a predicted node is compared with them: by id when the
    questions carry ids, else by normalised name."""
    ids = item.extra.get("answer_ids") if item.extra else None
    if ids:
        return set(ids), lambda node: node["id"]
    return {normalize_name(a) for a in item.answers}, lambda node: normalize_name(str(node["name"]))


def has_node_gold(item, gold: set[str]) -> bool:
    """Whether the node metrics count the question: its gold answers are nodes, or it has no gold
    result to be scored by instead (Text2Cypher's questions carry rows alone)."""
    return bool(gold) or not (item.extra and "rows" in item.extra)


def classify(
    answer,
    scores: QuestionScores,
    gold: set[str],
    key,
    mention: str | None = None,
    gold_in_candidates: Callable[[], bool] | None = None,
) -> str:
    """Why a question was missed, as the stage that failed (FAILURES, first that applies), or
    'correct' (Hit@1 = 1). ``mention``: the question's marked entity, when known;
    ``gold_in_candidates``: whether some candidate query returns every answer (asked only when
    L1's own queries do not tell)."""
    if scores.hit_at_1 == 1.0:
        return "correct"
    if not answer.anchors:
        return "no anchor"
    if mention and normalize_name(mention) not in {normalize_name(str(a["name"])) for a in answer.anchors}:
        return "gold entity not among anchors"
    if not answer.candidates:
        return "no valid candidate"
    if answer.queries and all(q.error for q in answer.queries):
        return "query failed to run"
    names = {node.id: key(node.model_dump()) for node in answer.retrieved}

    def finds_gold(query) -> bool:
        return bool(gold) and gold <= {names.get(node_id, node_id) for node_id in query.ids}

    if not (answer.queries and finds_gold(answer.queries[0])):
        others = any(finds_gold(query) for query in answer.queries[1:])
        if others or (gold_in_candidates is not None and gold_in_candidates()):
            return "L1's top query wrong"
        return "gold not among candidates" if gold_in_candidates is not None else "L1's top query wrong"
    if answer.selected_by == "l2" and not gold & {key(node.model_dump()) for node in answer.answers}:
        return "L2 chose another set"
    return "right set, wrong ranking"


def candidate_check(pipeline, item) -> Callable[[Any], bool]:
    """``answer -> whether some candidate around its anchors (the queries `ask` chose from)
    returns every answer of the question``, counted in the database; each set of anchors is
    checked once, however many methods miss the question."""
    from graphraft.synthesis.patterns import AnchorRef

    ids = list(item.extra.get("answer_ids", [])) if item.extra else []
    names = [] if ids else sorted(set(item.answers))
    gold_count = len(answer_keys(item)[0])
    known: dict[tuple, bool] = {}

    def check(answer) -> bool:
        anchors = tuple((a["id"], tuple(a["labels"])) for a in answer.anchors)
        if anchors not in known:
            refs = [AnchorRef(anchor_id, labels) for anchor_id, labels in anchors]
            found = pipeline.enumerator.all_patterns(refs, pipeline.max_hops, answer_ids=ids, answer_names=names)
            known[anchors] = any(p.hits >= gold_count for p in found.patterns)
        return known[anchors]

    return check


def outcome_from_answer(
    item,
    method: str,
    answer,
    seconds: float,
    use_selection: bool,
    gold_in_candidates: Callable | None = None,
    store=None,
) -> Outcome:
    """One method's outcome on one question; with ``gold_in_candidates`` (``candidate_check``), a
    missed question whose own queries do not show the answers is checked against every candidate;
    ``store`` names the nodes of a query's result past the answer's node budget (execution
    accuracy compares the whole result)."""
    gold, key = answer_keys(item)
    retrieved = [key(n.model_dump()) for n in answer.retrieved]
    chosen = [key(n.model_dump()) for n in answer.answers] if use_selection else retrieved
    ranked = chosen + [k for k in retrieved if k not in set(chosen)]  # L2's picks first, then the rest
    scores = score_question(ranked, chosen, gold)
    execution, categories, execution_any, picked, each = None, (), None, False, ()
    if item.extra and "rows" in item.extra:
        rows = answer_rows(answer, use_selection, store)
        execution = same_result(rows, item.extra["rows"])
        if not execution:
            picked = execution = picked_among_ties(
                answer, item.extra["rows"], item.extra.get("cypher"), store, use_selection=use_selection
            )
        each = tuple(each_query(answer, item.extra["rows"], item.extra.get("cypher"), store))
        categories = tuple(c for c in (item.qtype, item.extra.get("category")) if c)
        execution_any = execution or (
            "any_of" in item.extra and some_rows_of(rows, item.extra["any_of"], len(result_key(item.extra["rows"])))
        )
    if not has_node_gold(item, gold):  # a gold result alone: the miss by L1's queries' results
        failure = result_failure(answer, execution, each, use_selection)
    else:
        failure = classify(
            answer,
            scores,
            gold,
            key,
            item.mention,
            (lambda: gold_in_candidates(answer)) if gold_in_candidates is not None else None,
        )
    return Outcome(
        item.qid,
        item.hops,
        method,
        scores,
        seconds,
        failure,
        answer.queries[0].cypher if answer.queries else None,
        sum(1 for q in answer.queries if q.error),
        len(answer.queries),
        bool(item.mention),
        execution,
        categories,
        execution_any,
        picked,
        each,
        answered_by(answer, use_selection),
        has_node_gold(item, gold),
    )


def result_failure(answer, execution: bool, each: Sequence[QueryResult], use_selection: bool) -> str:
    """Why a question with a gold result (rows, no gold nodes) was missed, by the stage that
    failed (FAILURES, first that applies; a label-rooted query needs no anchor): no query to
    choose from, every query failed, none of L1's queries gives the gold result, the first that
    returned rows did and L2 chose another, or another query did and L1 ranked it lower."""
    if execution:
        return "correct"
    if not answer.queries:
        return "no valid candidate"
    if all(q.error for q in answer.queries):
        return "query failed to run"
    if not any(r.right for r in each):
        return "gold not among L1's queries"
    first = next((r for r in each if r.rows), None)
    if use_selection and answer.selected_by == "l2" and first is not None and first.right:
        return "L2 chose another set"
    return "L1's top query wrong"


def vector_outcome(item, store, embedder, k: int = 20) -> Outcome:
    gold, key = answer_keys(item)
    started = time.perf_counter()
    nearest = store.nearest_names(embedder.embed([item.question])[0], k)
    seconds = time.perf_counter() - started
    ranked = [key(row) for row, _ in nearest]
    scores = score_question(ranked, ranked[:1], gold)
    return Outcome(
        item.qid,
        item.hops,
        "vector",
        scores,
        seconds,
        "correct" if scores.hit_at_1 else "wrong answer ranking (no query)",
        node_gold=has_node_gold(item, gold),
    )


# ---------------------------------------------------------------------------------- running
def evaluate(
    items: Sequence,
    pipeline,
    methods: Sequence[str] = METHODS,
    base_pipeline=None,
    free_pipeline=None,
    embedder=None,
    title: str = "evaluation",
    progress: Progress | None = None,
    group: int | None = None,
) -> EvalReport:
    """Run every method on every question. ``pipeline`` is the trained GraphRAFT (its L2 is
    used for 'graphraft'); 'free' and 'base' need the pipelines `variants` builds, 'vector'
    an embedder."""
    report = EvalReport(title, len(items), list(methods))
    runs = [("graphraft", pipeline)] if "graphraft" in methods or "no-l2" in methods else []
    runs += [
        (method, other) for method, other in (("free", free_pipeline), ("base", base_pipeline)) if method in methods
    ]
    group = max(1, group or pipeline.config.group)
    with (progress or SilentProgress()).task("questions", len(items)) as task:
        for start in range(0, len(items), group):
            _evaluate_group(report, items[start : start + group], runs, methods, pipeline, embedder, group)
            task.advance(len(items[start : start + group]))
    return report


def _evaluate_group(report, chunk, runs, methods, pipeline, embedder, group) -> None:
    """Every method on one group of questions; their outcomes appended to the report."""
    # L1 searches a group of questions in each forward call (pipeline.ask_many)
    answers = {method: _ask_group(engine, [item.question for item in chunk], group) for method, engine in runs}
    # the trained pipeline's one answer is scored twice: with L2 (graphraft) and without (no-l2)
    scored_as = {"graphraft": [m for m in ("graphraft", "no-l2") if m in methods]}
    store = pipeline.store
    for i, item in enumerate(chunk):
        check = candidate_check(pipeline, item)
        for method, _ in runs:
            answer = answers[method][i]
            if answer is None:
                limit = pipeline.settings.ask_timeout_s
                report.outcomes += [_timed_out(item, name, limit) for name in scored_as.get(method, [method])]
                continue
            seconds = _seconds(answer)
            if method != "graphraft":
                report.outcomes.append(outcome_from_answer(item, method, answer, seconds, False, check, store))
                continue
            if "graphraft" in methods:
                report.outcomes.append(outcome_from_answer(item, "graphraft", answer, seconds, True, check, store))
            if "no-l2" in methods:
                reason = answer.timings.get("reason", 0.0)
                report.outcomes.append(
                    outcome_from_answer(item, "no-l2", answer, seconds - reason, False, check, store)
                )
        if "vector" in methods:
            report.outcomes.append(vector_outcome(item, pipeline.store, embedder))


def _ask_group(engine, questions: list[str], group: int) -> list:
    """The group's answers; a group that runs out of time is asked again a question at a time,
    and a question that runs out alone is None (recorded as timed out), so one slow question
    neither ends the run nor costs the others their answers."""
    try:
        return engine.ask_many(questions, group=group)
    except DeadlineExceededError:
        if len(questions) == 1:  # already alone: asking again would only wait as long again
            return [None]
        answers = []
        for question in questions:
            try:
                answers.append(engine.ask_many([question], group=1)[0])
            except DeadlineExceededError:
                answers.append(None)
        return answers


def _timed_out(item, method: str, seconds: float) -> Outcome:
    gold, _ = answer_keys(item)
    # linking cannot be judged on a question that got no answer, so it is not counted there
    executed = item.extra and "rows" in item.extra
    categories = tuple(c for c in (item.qtype, (item.extra or {}).get("category")) if c) if executed else ()
    return Outcome(
        item.qid,
        item.hops,
        method,
        score_question([], [], gold),
        seconds,
        "timed out",
        execution=False if executed else None,
        categories=categories,
        execution_any=False if executed else None,
        node_gold=has_node_gold(item, gold),
    )


def _seconds(answer) -> float:
    """A question's time: its stages' timings (L1's being its share of its group's search)."""
    return answer.timings.get("total", sum(answer.timings.values()))


def variants(pipeline) -> tuple[Any, Any]:
    """The free-generation and base-model pipelines, sharing the store and the one model
    (the base variant runs it with the adapters disabled)."""
    from graphraft.inference.adapters import BASE
    from graphraft.inference.generation import ConstrainedGenerator, FreeGenerator

    model, tokenizer = pipeline.model, pipeline.tokenizer
    l1 = pipeline.generator
    free = pipeline.with_parts(
        FreeGenerator(model, tokenizer, l1.schema_hint, adapter=l1.adapter, exemplars=l1.exemplars)
    )
    base = pipeline.with_parts(ConstrainedGenerator(model, tokenizer, method=pipeline.generator.method, adapter=BASE))
    return free, base


# ---------------------------------------------------------------------------------- report
def write_report(report: EvalReport, folder: Path) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    data = report.to_dict()
    paths = {"json": folder / "report.json", "markdown": folder / "report.md", "plot": folder / "metrics.png"}
    paths["json"].write_text(json.dumps(data, indent=2))
    (folder / "questions.jsonl").write_text(
        "".join(
            json.dumps(
                {
                    "qid": o.qid,
                    "hops": o.hops,
                    "method": o.method,
                    "seconds": round(o.seconds, 4),
                    "failure": o.failure,
                    "top_query": o.top_query,
                    **vars(o.scores),
                }
                # questions with a gold result: whether the answer's rows were it, and under what
                | (
                    {
                        "execution": o.execution,
                        "execution_any": o.execution_any,
                        "picked": o.picked,
                        "categories": list(o.categories),
                        "queries": [vars(r) for r in o.query_results],
                        "answered_by": o.answered_by,
                    }
                    if o.execution is not None
                    else {}
                )
            )
            + "\n"
            for o in report.outcomes
        )
    )
    plot(report, paths["plot"])
    paths["markdown"].write_text(markdown(report, paths["plot"].name))
    return paths


def _table(rows: dict[str, dict[str, float]]) -> list[str]:
    header = ["method"] + [name.replace("_", " ") for name in METRIC_NAMES]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for method, metrics in rows.items():
        lines.append(f"| {method} | " + " | ".join(f"{metrics[n] * 100:.1f}" for n in METRIC_NAMES) + " |")
    return lines


def markdown(report: EvalReport, plot_name: str) -> str:
    """The report: execution accuracy first where questions carry a gold result (rows), then the
    node metrics over the questions whose gold answers are nodes, latency and failures."""
    data = report.to_dict()
    nodes = data["node_questions"]
    out = [f"# {report.title}", "", f"{report.questions} questions.", ""]
    out += ["Methods:", ""] + [f"- **{m}**: {METHOD_TITLES[m]}" for m in report.methods] + [""]
    executed = {m: v for m, v in data["execution_accuracy"].items() if v}
    if executed:
        names = sorted(
            {name for table in executed.values() for name in table},
            key=lambda n: (n != "all", n != ANY_ROWS, n != ANY_QUERY, n),
        )
        out += [
            "## Execution accuracy (the answer's rows are the gold result's, as sets; a node by its name)",
            "",
            "| category | questions | " + " | ".join(executed) + " |",
            "|---|---|" + "---|" * len(executed),
        ]
        for name in names:
            count = next(t[name]["questions"] for t in executed.values() if name in t)
            cells = [f"{t[name]['accuracy'] * 100:.1f}" if name in t else "" for t in executed.values()]
            out.append(f"| {name} | {count} | " + " | ".join(cells) + " |")
        out.append("")
    if nodes:
        out += [
            f"## Node metrics, all hops ({nodes} questions whose answers are nodes)",
            "",
            "In % (STaRK definitions; a question with nothing retrieved scores 0 and is kept).",
            "",
        ]
        out += _table(data["overall"]) + [""]
        for hop, rows in data["by_hop"].items():
            out += [f"## {hop}-hop", ""] + _table(rows) + [""]
    out += [
        f"![{'metrics by hop' if nodes else 'execution accuracy by category'} and method]({plot_name})",
        "",
        "## Latency per question (seconds)",
        "",
        "| method | p50 | p95 |",
        "|---|---|---|",
    ]
    out += [f"| {m} | {v['p50']:.2f} | {v['p95']:.2f} |" for m, v in data["latency_s"].items()] + [""]
    out += [
        "## Failures (first reason that applies; a question counts as correct at Hit@1, or where it "
        "has a gold result, when the answer's rows are it)",
        "",
        "| method | " + " | ".join(FAILURES) + " |",
        "|---|" + "---|" * len(FAILURES),
    ]
    for method, counts in data["failures"].items():
        if method != "vector":
            out.append(f"| {method} | " + " | ".join(str(counts[f]) for f in FAILURES) + " |")
    out += [
        "",
        "Queries that failed to run (syntax, not read-only, timeout, no `id` column): "
        + ", ".join(f"{m} {v * 100:.1f}%" for m, v in data["failed_query_share"].items() if m != "vector"),
        "",
    ]
    if nodes:
        out += [
            "Entity-linking recall (the question's marked entity among the anchors): "
            + (
                ", ".join(f"{m} {v * 100:.1f}%" for m, v in data["entity_linking_recall"].items() if v is not None)
                or "no question marks its entity"
            ),
            "",
        ]
    if report.settings:
        out += ["## Settings", "", "```json", json.dumps(report.settings, indent=2), "```", ""]
    return "\n".join(out)


def _bars(axis, groups: list[str], series: dict[str, list[float]]) -> None:
    """One bar per method in each group, side by side, the groups named under them."""
    width = 0.8 / max(1, len(series))
    for index, (method, values) in enumerate(series.items()):
        axis.bar([g + index * width for g in range(len(groups))], values, width, label=method)
    axis.set_xticks([g + width * (len(series) - 1) / 2 for g in range(len(groups))], groups)
    axis.set_ylim(0, 100)


def plot(report: EvalReport, path: Path) -> None:
    """The node metrics by hop and method; with no question whose answers are nodes, execution
    accuracy by category and method."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not report.node_questions():
        tables = {m: report.execution_accuracy(m) or {} for m in report.methods}
        names = sorted({n for t in tables.values() for n in t}, key=lambda n: (n != "all", n))
        fig, axis = plt.subplots(figsize=(max(6.0, 0.9 * len(names)), 4.2))
        series = {m: [t[n]["accuracy"] * 100 if n in t else 0.0 for n in names] for m, t in tables.items()}
        _bars(axis, [n if len(n) <= 24 else n[:22] + "…" for n in names], series)
        plt.setp(axis.get_xticklabels(), rotation=30, ha="right", fontsize=7)
        axis.set_ylabel("execution accuracy %")
        axis.legend(fontsize=7, loc="upper right")
    else:
        shown = ("hit_at_1", "hit_at_5", "recall_at_20", "mrr", "f1")
        groups = [("all", None)] + [(f"{h}-hop", h) for h in report.hops()]
        fig, axes = plt.subplots(1, len(shown), figsize=(3.2 * len(shown), 3.4), sharey=True)
        tables = [report.table(h) for _, h in groups]
        for axis, metric in zip(axes, shown):
            _bars(axis, [name for name, _ in groups], {m: [t[m][metric] * 100 for t in tables] for m in report.methods})
            axis.set_title(metric.replace("_", " "))
        axes[0].set_ylabel("%")
        axes[-1].legend(fontsize=7, loc="upper right")
    fig.suptitle(report.title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
