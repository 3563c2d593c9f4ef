"""`ask` end to end on the embedded database, with the tiny random model under the constraint."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from graphraft.config import load_settings
from graphraft.graph.loaders.metaqa import default_metaqa_dir, read_kb
from graphraft.graph.records import NodeRecord
from graphraft.inference.generation import GeneratedQuery
from graphraft.inference.retrieval import execute

from movie_graph import load

WRITE = re.compile(r"\b(CREATE|MERGE|SET|DELETE|DETACH|REMOVE|CALL|LOAD|FOREACH)\b", re.IGNORECASE)
LITERAL = re.compile(r'"(?:[^"\\]|\\.)*"')


def test_ask_returns_answers_with_their_cypher_and_evidence(engine, store):
    answer = engine.ask("which films did [Tom Hanks] star in")
    assert answer.message is None and answer.candidates > 3
    assert 1 <= len(answer.queries) <= 3
    # every answer was returned by one of the queries, which all run as written
    returned = {row["id"] for q in answer.queries for row in store.read(q.cypher)}
    assert answer.answers and {a.id for a in answer.answers} <= returned
    assert answer.anchors[0]["id"] == "p1" and answer.evidence.startswith("Pattern 1: (Tom Hanks:Person)")
    assert [a.rank for a in answer.answers] == list(range(len(answer.answers)))


def test_only_read_patterns_are_candidates(engine):
    enumeration = engine.enumerator.all_patterns([engine.resolver.resolve("Tom Hanks")[0].ref], max_hops=3)
    assert enumeration.patterns
    for stats in enumeration.patterns:
        text = LITERAL.sub('""', stats.cypher)
        assert text.startswith("MATCH (a:") and re.search(r" RETURN DISTINCT n[1-3]\.id AS id$", text)
        assert not WRITE.search(text), stats.cypher


def test_the_read_path_refuses_a_write_even_if_handed_one(store):
    load(store)
    before = store.count_nodes()
    writes = [
        GeneratedQuery("CREATE (n:__Entity__ {id: 'x'}) RETURN n.id AS id", 0.0, 0),
        GeneratedQuery("MATCH (n) DETACH DELETE n RETURN 1 AS id", -1.0, 1),
    ]
    retrieval = execute(store, writes)
    assert all("refused a write" in run.error for run in retrieval.runs)
    assert store.count_nodes() == before and retrieval.order == []


def test_an_id_column_that_names_no_node_is_no_answer_and_stops_nothing(store):
    """A query written freely may return an `id` that is null or a number: no node is named by
    it (before, the null reached the answer's record and ended the whole run of questions)."""
    load(store)
    queries = [
        GeneratedQuery("MATCH (n) RETURN n.nothing AS id LIMIT 2", 0.0, 0),
        GeneratedQuery("MATCH (n) RETURN 7 AS id LIMIT 1", -0.5, 1),
        GeneratedQuery("MATCH (n) RETURN n.id AS id ORDER BY id LIMIT 1", -1.0, 2),
    ]
    retrieval = execute(store, queries)
    assert [run.node_ids for run in retrieval.runs[:2]] == [[], []] and not retrieval.runs[0].error
    (named,) = retrieval.runs[2].node_ids
    assert isinstance(named, str) and retrieval.order == [named]


def test_no_anchor_says_so_and_runs_no_query(engine):
    answer = engine.ask("which films did [Greta Garbo] star in")
    assert answer.message == "no entity of the question was found in the graph (mentions: Greta Garbo)"
    assert answer.queries == [] and answer.candidates == 0 and answer.answers == []
    answer = engine.ask("which films did she star in")
    assert answer.message == "no entity of the question was found in the graph"


def test_no_valid_candidate_says_so(engine, store):
    store.load_nodes([NodeRecord("lonely", ("Person",), {"name": "Lonely Person"})])
    answer = engine.ask("what did [Lonely Person] do")
    assert answer.message == "no valid query around Lonely Person" and answer.queries == []


def test_asking_many_questions_at_once_answers_each_as_asking_it_alone(engine):
    """ask_many searches a group of questions in each forward call; the answers, queries and
    scores are those of asking one at a time, questions with nothing to search included."""
    questions = [
        "which films did [Tom Hanks] star in",
        "which films did [Greta Garbo] star in",
        "who directed [Forrest Gump]",
        "which films did [Tom Hanks] star in",
    ]
    together = engine.ask_many(questions, group=2)
    alone = [engine.ask(question) for question in questions]
    assert [a.message for a in together] == [a.message for a in alone]
    assert together[1].message.startswith("no entity") and together[0].answers and together[2].answers
    for many, one in zip(together, alone):
        assert [q.cypher for q in many.queries] == [q.cypher for q in one.queries]
        assert [q.score for q in many.queries] == pytest.approx([q.score for q in one.queries], abs=1e-3)
        assert [a.id for a in many.answers] == [a.id for a in one.answers]


def test_run_queries_runs_l1s_first_queries_and_lists_the_others(engine, store):
    """``run_queries``: self-training reads the top query's rows and every query's score and
    text; the others are listed as L1 wrote them, not run."""
    question = "which films did [Tom Hanks] star in"
    every = engine.ask(question)
    engine.config = engine.config.model_copy(update={"run_queries": 1})
    top = engine.ask(question)
    assert len(every.queries) == len(top.queries) == 3 and all(q.ran for q in every.queries)
    assert [(q.cypher, q.score) for q in top.queries] == [(q.cypher, q.score) for q in every.queries]
    first, *others = top.queries
    assert first.ran and first.model_dump(exclude={"seconds"}) == every.queries[0].model_dump(exclude={"seconds"})
    assert all(not q.ran and q.results == q.rows == 0 and q.ids == [] for q in others)
    # the evidence and the answers come from the query that ran
    ran = {row["id"] for row in store.read(first.cypher)}
    assert top.answers and {a.id for a in top.answers} == ran and top.evidence.count("Pattern ") == 1


def test_an_empty_question_is_refused(engine):
    from graphraft.errors import InvalidInputError

    with pytest.raises(InvalidInputError, match="empty"):
        engine.ask("   ")


@pytest.mark.skipif(default_metaqa_dir() is None, reason="MetaQA not in ../shared")
def test_graphraft_ask_answers_a_metaqa_question_end_to_end(server, tiny, tmp_path):
    store = server.store("ask-metaqa")
    store.clear()
    nodes, rels = read_kb(default_metaqa_dir() / "kb.txt")
    store.load_nodes(nodes)
    store.load_relationships(rels)
    model, tokenizer = tiny
    model.save_pretrained(tmp_path / "tiny")
    tokenizer.save_pretrained(tmp_path / "tiny")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("GRAPHRAFT_", "NEO4J_"))},
        "GRAPHRAFT_HOME": str(tmp_path / "home"),
        **server.env(),
        "GRAPHRAFT_EMBEDDER": "none",
    }
    # Temuera Morrison only acts: the one 1-hop pattern around him is the right query.
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "graphraft",
            "ask",
            "what movies did [Temuera Morrison] act in",
            "--graph",
            "ask-metaqa",
            "--model",
            str(tmp_path / "tiny"),
            "--max-hops",
            "1",
            "--json",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    answer = json.loads(proc.stdout)
    assert {a["name"] for a in answer["answers"]} == {"Once Were Warriors", "Tracker", "River Queen"}
    assert answer["queries"][0]["cypher"] == (
        'MATCH (a:Person {id: "person:Temuera Morrison"})<-[r1:STARRED_ACTORS]-(n1:Movie) RETURN DISTINCT n1.id AS id'
    )
    assert "Pattern 1: (Temuera Morrison:Person)<-[:STARRED_ACTORS]-(?:Movie)" in answer["evidence"]
    store.clear()


def test_ask_cli_empty_question_is_one_line(tmp_path):
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("GRAPHRAFT_", "NEO4J_"))},
        "GRAPHRAFT_HOME": str(tmp_path),
    }
    proc = subprocess.run([sys.executable, "-m", "graphraft", "ask", "  "], capture_output=True, text=True, env=env)
    assert proc.returncode == 2 and proc.stderr.strip() == "error: the question is empty"


class Writes:
    """L1 writing, for each question, the candidates ``picks`` choose (each a function of a
    candidate's text), in that order, scored 0, -1, ...: a stand-in that knows its queries, so that
    the order ``ask`` tries them in is what is tested."""

    def __init__(self, model, tokenizer, *picks):
        self.model, self.tokenizer, self.picks = model, tokenizer, picks

    def generate_many(self, questions, candidate_lists, num_beams=5, group=8, check=None):
        return [
            [
                GeneratedQuery(next(c for c in cands if pick(c)), -float(rank), rank)
                for rank, pick in enumerate(self.picks)
            ]
            for cands in candidate_lists
        ]


def _films(cypher: str) -> bool:  # Tom Hanks' films
    return "<-[r1:STARRED_ACTORS]-(n1:Movie) RETURN" in cypher


def _directors(cypher: str) -> bool:  # the directors of his films
    return "<-[r1:STARRED_ACTORS]-(n1:Movie)-[r2:DIRECTED_BY]->(n2:Person)" in cypher and "RETURN DISTINCT n2" in cypher


@pytest.mark.parametrize(
    ("question", "l1_order", "asked_type_first", "tried_first"),
    [
        ("who directed the films [Tom Hanks] starred in", (_films, _directors), True, _directors),
        ("which films did [Tom Hanks] star in", (_directors, _films), True, _films),
        ("who directed the films [Tom Hanks] starred in", (_films, _directors), False, _films),  # L1's order
        ("can you describe [Tom Hanks]", (_directors, _films), True, _directors),  # asks for nothing named
    ],
)
def test_the_path_answering_what_the_question_asks_for_is_tried_first(
    store, tiny, graphraft_home, question, l1_order, asked_type_first, tried_first
):
    """L1 writes a path to films and one to persons; asked "who", ask tries the persons' first,
    asked "which films", the films' (their names read nearest, by the real MiniLM), L1's order
    within; told not to, or asked for nothing a label names, L1's order stands. The answers
    come from the query tried first."""
    from graphraft.inference.pipeline import GraphRAFT
    from graphraft.synthesis.mentions import MarkedMentionExtractor

    load(store)
    model, tokenizer = tiny
    settings = load_settings(home=graphraft_home)  # the bundled embedder
    engine = GraphRAFT(
        settings,
        store=store,
        model=model,
        tokenizer=tokenizer,
        extractor=MarkedMentionExtractor(),
        asked_type_first=asked_type_first,
    ).with_parts(Writes(model, tokenizer, *l1_order))
    answer = engine.ask(question)
    tried = [q.cypher for q in answer.queries]
    assert len(tried) == 2 and tried_first(tried[0]) and sorted(q.score for q in answer.queries) == [-1.0, 0.0]
    expected = {"m1", "m2", "m3"} if tried_first is _films else {"p2", "p3"}
    assert {a.id for a in answer.answers[: len(expected)]} == expected
