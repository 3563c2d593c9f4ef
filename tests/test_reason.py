"""L2's choice among the answer sets the queries returned, with the tiny random model."""

from __future__ import annotations

import pytest

from graphraft.inference.prompts import l2_answer_text
from graphraft.inference.selection import AnswerSelector

EVIDENCE = """Pattern 1: (The Iron Lantern:Book)-[:WRITTEN_BY]->(:Author)-[:BORN_IN]->(?:City)
- Bergen (City)
- Lisbon (City)
Pattern 2: (The Iron Lantern:Book)-[:WRITTEN_BY]->(?:Author)
- Isolde Valdés (Author)
Pattern 3: (The Iron Lantern:Book)-[:HAS_GENRE]->(?:Genre)
- Memoir (Genre)
- Horror (Genre)
- Historical Fiction (Genre)"""


def nodes(*names):
    return [{"id": name.lower(), "name": name} for name in names]


@pytest.fixture(scope="module")
def selector(graphraft_home):
    from graphraft.models import tiny_random_model

    return AnswerSelector(*tiny_random_model(graphraft_home, seed=3))


def test_every_set_is_scored_and_the_best_is_chosen(selector):
    sets = [nodes("Bergen", "Lisbon"), nodes("Isolde Valdés"), nodes("Memoir", "Horror", "Historical Fiction")]
    scored = selector.score("where was the author of [The Iron Lantern] born", EVIDENCE, sets)
    assert sorted(s.node_ids for s in scored) == sorted(tuple(n["id"] for n in s) for s in sets)
    assert [s.score for s in scored] == sorted((s.score for s in scored), reverse=True)
    assert all(s.score < 0 for s in scored)  # mean log-probabilities
    chosen = selector.select("where was the author of [The Iron Lantern] born", EVIDENCE, sets)
    assert tuple(chosen) == scored[0].node_ids


def test_a_sets_score_does_not_depend_on_the_others_in_the_batch(selector):
    # right padding of sets of different lengths must not move or mix the scored tokens
    question = "which genres is [The Iron Lantern] in"
    sets = [nodes("Bergen", "Lisbon"), nodes("Memoir", "Horror", "Historical Fiction"), nodes("Isolde Valdés")]
    together = {s.node_ids: s.score for s in selector.score(question, EVIDENCE, sets)}
    partner = nodes("Somewhere Else")
    for one in sets:  # beside another set than in the full batch
        pair = {s.node_ids: s.score for s in selector.score(question, EVIDENCE, [partner, one])}
        key = tuple(n["id"] for n in one)
        assert pair[key] == pytest.approx(together[key], abs=1e-4)


def test_equal_sets_keep_the_best_prior_and_one_set_needs_no_model(selector):
    question = "where was the author of [The Iron Lantern] born"
    cities, author = nodes("Bergen", "Lisbon"), nodes("Isolde Valdés")
    plain = {s.node_ids: s.score for s in selector.score(question, EVIDENCE, [cities, author])}
    # the cities twice (another order, a lower prior): scored once, with the better prior
    scored = selector.score(question, EVIDENCE, [cities, author, list(reversed(cities))], priors=[-1.0, 0.0, -3.0])
    assert len(scored) == 2
    assert {s.node_ids: s.score for s in scored} == pytest.approx(
        {("bergen", "lisbon"): plain[("bergen", "lisbon")] - 1.0, ("isolde valdés",): plain[("isolde valdés",)]},
        abs=1e-4,
    )

    class Unusable:  # one distinct set: nothing to choose, so the model must not run
        def __call__(self, *args, **kwargs):
            raise AssertionError("the model ran")

    lone = AnswerSelector(Unusable(), selector.tokenizer)
    assert lone.select(question, EVIDENCE, [cities, [], list(reversed(cities))], [-2.0, 0.0, -1.0]) == [
        "lisbon",
        "bergen",
    ]


def test_priors_add_to_the_scores(selector):
    sets = [nodes("Bergen", "Lisbon"), nodes("Isolde Valdés")]
    plain = {s.node_ids: s.score for s in selector.score("who wrote [X]", EVIDENCE, sets)}
    shifted = selector.score("who wrote [X]", EVIDENCE, sets, priors=[0.0, -50.0])
    assert shifted[0].node_ids == ("bergen", "lisbon")
    assert {s.node_ids: s.score for s in shifted} == pytest.approx(
        {("bergen", "lisbon"): plain[("bergen", "lisbon")], ("isolde valdés",): plain[("isolde valdés",)] - 50.0},
        abs=1e-4,
    )


def test_empty_sets_are_skipped_and_no_set_means_no_choice(selector):
    assert selector.select("who wrote [X]", EVIDENCE, [[], []]) == []
    scored = selector.score("who wrote [X]", EVIDENCE, [[], nodes("Isolde Valdés")])
    assert [s.node_ids for s in scored] == [("isolde valdés",)]


def test_the_reply_lists_names_in_evidence_order():
    assert (
        l2_answer_text(["Historical Fiction", "Memoir", "Nowhere"], EVIDENCE) == "Memoir\nHistorical Fiction\nNowhere"
    )


def test_one_pass_scores_equal_the_padded_batch_reference(graphraft_home):
    """The tree-attention pass (question and evidence encoded once, every reply a branch)
    gives each set the score the right-padded batch (prompt repeated per set) gives it."""
    from graphraft.models import tiny_random_model

    model, tokenizer = tiny_random_model(graphraft_home, seed=4)
    sets = [
        nodes("Bergen", "Lisbon"),
        nodes("Isolde Valdés"),
        nodes("Memoir", "Horror", "Historical Fiction"),
        nodes("Memoir"),
    ]
    question = "where was the author of [The Iron Lantern] born"
    tree = AnswerSelector(model, tokenizer).score(question, EVIDENCE, sets, priors=[0.0, -1.0, -2.0, -0.5])
    batch = AnswerSelector(model, tokenizer, method="batch").score(
        question, EVIDENCE, sets, priors=[0.0, -1.0, -2.0, -0.5]
    )
    assert [s.node_ids for s in tree] == [s.node_ids for s in batch]
    assert [s.score for s in tree] == pytest.approx([s.score for s in batch], abs=1e-4)
    # a second question reuses the cached system prompt and still agrees
    selector = AnswerSelector(model, tokenizer)
    selector.score(question, EVIDENCE, sets)
    again = selector.score("which genres is [The Iron Lantern] in", EVIDENCE, sets)
    reference = AnswerSelector(model, tokenizer, method="batch").score(
        "which genres is [The Iron Lantern] in", EVIDENCE, sets
    )
    assert [s.score for s in again] == pytest.approx([s.score for s in reference], abs=1e-4)


VALUES_EVIDENCE = """Pattern 1: MATCH (n0:Book) RETURN count(DISTINCT n0) AS count
- count: 3
Pattern 2: MATCH (n0:Book) RETURN DISTINCT n0.title AS title, n0.pages AS pages ORDER BY pages DESC LIMIT 2
- title: The Iron Lantern; pages: 412
- title: Salt Roads; pages: 388"""


def test_l2_chooses_a_query_by_its_rows_of_values_with_l1s_prior(selector):
    """Among queries of the language, L2 scores each query's result as its reply (rows of
    values as the evidence writes them), adds L1's log-probability and picks the best; equal
    replies count once with the better prior; one reply needs no model; none, no choice."""
    question = "what are the two longest books"
    replies = ["count: 3", "title: The Iron Lantern; pages: 412\ntitle: Salt Roads; pages: 388", None]
    means = selector._means(question, VALUES_EVIDENCE, replies[:2])
    best = max(range(2), key=lambda i: means[i])
    assert selector.choose(question, VALUES_EVIDENCE, replies) == best
    # L1's prior decides where it outweighs L2's difference
    assert selector.choose(question, VALUES_EVIDENCE, replies, priors=[0.0, -100.0, 0.0]) == 0
    assert selector.choose(question, VALUES_EVIDENCE, replies, priors=[-100.0, 0.0, 0.0]) == 1
    # the count's reply again, from a later query with a better prior: that query is the one
    twice = [replies[0], replies[1], replies[0]]
    assert selector.choose(question, VALUES_EVIDENCE, twice, priors=[-100.0, -50.0, 0.0]) == 2
    assert selector.choose(question, VALUES_EVIDENCE, [None, "count: 3", None]) == 1
    assert selector.choose(question, VALUES_EVIDENCE, [None, None]) is None
    # L2's score of each reply, the one its choice adds to the prior: equal replies share it
    pick, scores = selector.choice(question, VALUES_EVIDENCE, twice, priors=[-100.0, -50.0, 0.0])
    assert pick == 2 and scores == pytest.approx([means[0], means[1], means[0]], abs=1e-4)
    assert selector.choice(question, VALUES_EVIDENCE, [None, "count: 3", None]) == (1, [None, None, None])


def test_a_querys_reply_is_its_rows_of_values_or_its_nodes_names():
    from graphraft.inference.prompts import VALUE_ROWS
    from graphraft.inference.retrieval import QueryRun, Retrieval, textualise
    from graphraft.inference.selection import run_reply

    books = [{"id": f"b{i}", "pages": 100 + i} for i in range(VALUE_ROWS + 3)]
    retrieval = Retrieval(
        runs=[
            QueryRun("MATCH (n0:Book) RETURN count(DISTINCT n0) AS count", -1.0, rows=[{"count": len(books)}]),
            QueryRun("MATCH (n0:Book) RETURN DISTINCT n0.id AS id, n0.pages AS pages", -2.0, rows=books),
            QueryRun("MATCH (n0:Book) RETURN DISTINCT n0.id AS id", -3.0, node_ids=["b1", "b0"], rows=books[:2]),
            QueryRun("MATCH (n0:Book) WHERE n0.pages > 999 RETURN DISTINCT n0.id AS id", -4.0),
        ],
        nodes={"b0": {"id": "b0", "name": "Book 0", "labels": ["Book"], "properties": {}}},
    )
    retrieval.nodes["b1"] = {"id": "b1", "name": "Book 1", "labels": ["Book"], "properties": {}}
    retrieval.runs[2].rows = [{"id": "b1"}, {"id": "b0"}]
    evidence = textualise(retrieval, {}, {})
    # each query of the language shows its Cypher, at most VALUE_ROWS rows and how many it returned
    assert evidence.splitlines()[0] == "Pattern 1: " + retrieval.runs[0].cypher
    assert f"- … {len(books)} rows in all" in evidence and f"id: b{VALUE_ROWS};" not in evidence
    assert sum(line.startswith("- id: ") for line in evidence.splitlines()) == VALUE_ROWS
    replies = [run_reply(run, retrieval, evidence) for run in retrieval.runs]
    assert replies[0] == f"count: {len(books)}"
    # a node column by its node's name where the retrieval named it, else as it is
    assert replies[1].splitlines() == [
        f"id: {retrieval.nodes[b['id']]['name'] if b['id'] in retrieval.nodes else b['id']}; pages: {b['pages']}"
        for b in books[:VALUE_ROWS]
    ]
    # nodes alone: their names, in the order the evidence lists them
    assert replies[2] == "Book 1\nBook 0" and replies[3] is None
