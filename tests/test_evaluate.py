"""`graphraft eval` on the embedded database with the tiny random model: every method runs on
every question, failures are classified, the report and plot are written."""

from __future__ import annotations

import json

import pytest
from test_cli import assert_one_line_error, run

from graphraft.config import load_settings
from graphraft.evaluation.metrics import score_question
from graphraft.evaluation.runner import METHODS, classify, evaluate, outcome_from_answer, variants, write_report
from graphraft.graph.embeddings import embed_missing_names
from graphraft.graph.loaders.questions import QAItem
from graphraft.inference.pipeline import Answer, AnswerNode, GraphRAFT, QueryInfo
from graphraft.inference.selection import AnswerSelector
from graphraft.synthesis.mentions import MarkedMentionExtractor
from graphraft.text import normalize_name

from movie_graph import load


def item(qid, question, answers, hops=1):
    return QAItem(qid, question, None, tuple(answers), hops, None, "validation")


@pytest.fixture
def report(store, embedder, graphraft_home, tmp_path):
    from graphraft.models import tiny_random_model

    load(store)
    embed_missing_names(store, embedder)
    model, tokenizer = tiny_random_model(graphraft_home, seed=1)
    settings = load_settings(home=graphraft_home, embedder="none")
    pipeline = GraphRAFT(
        settings, store=store, model=model, tokenizer=tokenizer, extractor=MarkedMentionExtractor(), beams=3
    )
    pipeline.reasoner = AnswerSelector(model, tokenizer)
    free, base_pipeline = variants(pipeline)
    free.generator.max_new_tokens = 12  # random weights write noise; keep it short
    items = [
        item("q1", "which films did [Tom Hanks] star in", ["Cast Away", "Big", "Forrest Gump"]),
        item("q2", "who directed the films starring [Tom Hanks]", ["Robert Zemeckis", "Penny Marshall"], 2),
        item("q3", "who directed [Nobody Knows This Film]", ["Someone"]),
        item("q4", "Robert Zemeckis", ["Robert Zemeckis"]),
    ]  # the vector baseline finds this one first
    result = evaluate(
        items, pipeline, METHODS, base_pipeline=base_pipeline, free_pipeline=free, embedder=embedder, title="movie test"
    )
    return result, write_report(result, tmp_path / "report")


def test_every_method_scores_every_question_and_failures_are_classified(report):
    result, _ = report
    assert len(result.outcomes) == 4 * len(METHODS)
    by = {(o.method, o.qid): o for o in result.outcomes}
    # an entity the graph does not have: nothing retrieved, scored 0 (kept), and said why
    for method in ("graphraft", "no-l2", "free", "base"):
        assert by[(method, "q3")].failure == "no anchor" and by[(method, "q3")].scores.mrr == 0.0
    assert by[("vector", "q4")].scores.hit_at_1 == 1.0
    # the constrained methods only write queries that run (three beams, three queries)
    for method in ("base", "no-l2"):
        assert by[(method, "q1")].queries == 3 and by[(method, "q1")].failed_queries == 0
    # random weights writing freely do not produce a query that runs
    assert result.failed_query_share("free") == 1.0
    assert by[("free", "q1")].failure == by[("free", "q2")].failure == "query failed to run"
    for method in METHODS:
        if method != "vector":
            assert sum(result.failures(method).values()) == 4
        metrics = result.table()[method]
        assert all(0.0 <= v <= 1.0 for v in metrics.values())
        assert metrics["hit_at_1"] <= metrics["hit_at_5"]


def test_a_question_out_of_time_is_recorded_and_the_run_goes_on(store, graphraft_home):
    from graphraft.models import tiny_random_model

    load(store)
    model, tokenizer = tiny_random_model(graphraft_home, seed=1)
    questions = [item("q1", "which films did [Tom Hanks] star in", ["Big"]), item("q2", "who directed [Big]", ["x"])]

    def run_with(limit_s):
        settings = load_settings(home=graphraft_home, embedder="none", ask_timeout_s=limit_s)
        pipeline = GraphRAFT(
            settings, store=store, model=model, tokenizer=tokenizer, extractor=MarkedMentionExtractor()
        )
        return evaluate(questions, pipeline, ["graphraft", "no-l2"])

    out_of_time = run_with(1e-9)  # every stage's check fails: the group, then each question alone
    assert [(o.qid, o.method, o.failure) for o in out_of_time.outcomes] == [
        (q, m, "timed out") for q in ("q1", "q2") for m in ("graphraft", "no-l2")
    ]
    assert out_of_time.failures("graphraft")["timed out"] == 2 and out_of_time.table()["graphraft"]["mrr"] == 0.0
    # with time enough, the same questions are answered (the class is the timeout's, not the model's)
    assert all(o.failure != "timed out" and o.queries > 0 for o in run_with(120).outcomes if o.qid == "q1")


def test_l2_picks_come_first_in_the_ranking_and_make_the_answer_set():
    def node(i, name):
        return AnswerNode(id=i, name=name, labels=["Person"], rank=0)

    retrieved = [node("a", "Ann"), node("b", "Bob"), node("c", "Cy")]
    queries = [QueryInfo(cypher="top", score=-1.0, results=3, seconds=0.1, ids=["a", "b", "c"])]
    answer = Answer(
        question="q",
        answers=[node("b", "Bob")],
        retrieved=retrieved,
        queries=queries,
        anchors=[{"id": "x"}],
        candidates=5,
    )
    gold = item("q", "who [x]", ["bob"])  # compared by normalised name
    with_l2 = outcome_from_answer(gold, "graphraft", answer, 1.0, use_selection=True)
    without = outcome_from_answer(gold, "no-l2", answer, 1.0, use_selection=False)
    assert (with_l2.scores.hit_at_1, with_l2.scores.mrr, with_l2.scores.precision) == (1.0, 1.0, 1.0)
    assert (without.scores.hit_at_1, without.scores.mrr, without.scores.precision) == (0.0, 0.5, 1 / 3)
    assert without.failure == "right set, wrong ranking" and with_l2.failure == "correct"


def _never():
    raise AssertionError("not needed: L1's own queries tell")


@pytest.mark.parametrize(
    "case, change, mention, in_candidates, failure",
    [
        ("nothing anchored", {"anchors": []}, None, None, "no anchor"),
        ("another entity anchored", {}, "Tom Hanks", None, "gold entity not among anchors"),
        ("nothing to write", {"candidates": 0}, None, None, "no valid candidate"),
        ("every query failed", {"queries": [("top", ["a"], "timed out")]}, None, None, "query failed to run"),
        (
            "no candidate has the answers",
            {"queries": [("top", ["a"], None)]},
            None,
            lambda: False,
            "gold not among candidates",
        ),
        ("a candidate had them", {"queries": [("top", ["a"], None)]}, None, lambda: True, "L1's top query wrong"),
        (
            "L1's second query had them",
            {"queries": [("top", ["a"], None), ("2nd", ["b"], None)]},
            None,
            _never,
            "L1's top query wrong",
        ),
        (
            "L2 chose the other set",
            {"queries": [("top", ["b"], None), ("2nd", ["a"], None)], "answers": ["a"], "selected_by": "l2"},
            None,
            _never,
            "L2 chose another set",
        ),
        (
            "ranking",
            {"queries": [("top", ["a", "b"], None)], "answers": ["a", "b"]},
            None,
            _never,
            "right set, wrong ranking",
        ),
    ],
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_a_miss_is_classed_by_the_stage_that_failed(case, change, mention, in_candidates, failure):
    nodes = {
        "a": AnswerNode(id="a", name="Ann", labels=["Person"], rank=0),
        "b": AnswerNode(id="b", name="Bob", labels=["Person"], rank=1),
    }
    fields = {
        "anchors": [{"id": "x", "name": "Tom Hank", "labels": ["Person"]}],
        "candidates": 5,
        "retrieved": list(nodes.values()),
        "queries": [],
        "answers": ["a", "b"],
    } | change
    fields["queries"] = [
        QueryInfo(cypher=c, score=-1.0, results=len(ids), seconds=0.1, ids=ids, error=error)
        for c, ids, error in fields["queries"]
    ]
    fields["answers"] = [nodes[i] for i in fields["answers"]]
    answer = Answer(question="q", **fields)
    gold = {"bob"}
    scores = score_question([normalize_name(n.name) for n in answer.answers], [], gold)
    assert scores.hit_at_1 == 0.0
    assert classify(answer, scores, gold, lambda n: normalize_name(n["name"]), mention, in_candidates) == failure


def test_the_report_has_tables_per_hop_latency_and_a_plot(report):
    result, paths = report
    data = json.loads(paths["json"].read_text())
    assert set(data["by_hop"]) == {"1", "2"} and set(data["overall"]) == set(METHODS)
    assert data["latency_s"]["graphraft"]["p95"] >= data["latency_s"]["graphraft"]["p50"] > 0
    text = paths["markdown"].read_text()
    assert "## 1-hop" in text and "## 2-hop" in text and "](metrics.png)" in text
    assert paths["plot"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    questions = [json.loads(line) for line in (paths["json"].parent / "questions.jsonl").read_text().splitlines()]
    assert len(questions) == len(result.outcomes)


def test_eval_command_errors_are_one_line(tmp_path, server):
    env = {
        "GRAPHRAFT_HOME": str(tmp_path / "home"),
        **server.env(),
        "GRAPHRAFT_EMBEDDER": "none",
    }
    proc = run(["eval", "--dataset", "demo", "--methods", "graphraft,magic"], env, check_code=2)
    assert_one_line_error(proc, "unknown magic")
    proc = run(["eval", "--dataset", "demo", "--methods", "no-l2"], env, check_code=1)
    assert_one_line_error(proc, "--l1-adapter")


def test_unmarked_and_typo_variants_change_only_the_question():
    from graphraft.evaluation.config import EvaluationConfig
    from graphraft.graph.loaders.question_sets import unmarked, with_typo

    original = QAItem("q9", "who directed [Black Snake Moan]", "Black Snake Moan", ("Craig Brewer",), 1, None, "x")
    assert unmarked(original).question == "who directed Black Snake Moan"
    assert unmarked(original).mention == "Black Snake Moan" and unmarked(original).answers == original.answers
    typos = {with_typo(original, seed).question for seed in range(40)}
    assert with_typo(original, 3) == with_typo(original, 3)  # reproducible with a seed
    assert len(typos) > 10  # different seeds, different edits
    for question in typos:
        typo = question[question.index("[") + 1 : question.index("]")]
        assert typo != "Black Snake Moan" and typo[0] == "B" and abs(len(typo) - 16) <= 1
        # one edit: the common prefix and suffix leave at most two characters either side
        prefix = next((i for i, (a, b) in enumerate(zip(typo, "Black Snake Moan")) if a != b), 16)
        suffix = next((i for i, (a, b) in enumerate(zip(typo[::-1], "Black Snake Moan"[::-1])) if a != b), 16)
        assert prefix + suffix >= len(typo) - 2
    both = EvaluationConfig(unmarked=True, typos=1).variant([original])[0]
    assert "[" not in both.question and "Black Snake Moan" not in both.question


def test_entity_linking_recall_counts_the_marked_questions():
    from graphraft.evaluation.metrics import QuestionScores
    from graphraft.evaluation.runner import EvalReport, Outcome

    def outcome(qid, method, failure, marked):
        scores = score_question([], [], {"x"})
        return Outcome(qid, 1, method, scores, 0.1, failure, mention_known=marked)

    report = EvalReport("t", 4, ["graphraft", "vector"])
    report.outcomes = [
        outcome("q1", "graphraft", "correct", True),
        outcome("q2", "graphraft", "L1's top query wrong", True),  # linked, missed later
        outcome("q3", "graphraft", "gold entity not among anchors", True),
        outcome("q4", "graphraft", "no anchor", False),  # unmarked: linking cannot be judged
        outcome("q1", "vector", "correct", True),
    ]
    assert report.entity_linking_recall("graphraft") == pytest.approx(2 / 3)
    assert report.entity_linking_recall("vector") is None
    assert report.to_dict()["entity_linking_recall"] == {"graphraft": pytest.approx(2 / 3), "vector": None}
    assert isinstance(report.outcomes[0].scores, QuestionScores)


def test_numbers_compare_to_six_significant_digits():
    """FalkorDB reads text as a number in single precision (toFloat('754.26') is
    754.260009765625) where Neo4j gives 754.26: the same result, compared to 6 significant
    digits; numbers that differ within them still differ."""
    from graphraft.synthesis.results import result_key

    assert result_key([[754.260009765625]]) == result_key([[754.26]])
    assert result_key([["Ernst Handel", 6205.39001750946]]) == result_key([["Ernst Handel", 6205.39]])
    assert result_key([[3]]) == result_key([[3.0]])
    assert result_key([[1.5]]) != result_key([[1.50001]]) and result_key([[0.000125]]) != result_key([[0.000126]])
