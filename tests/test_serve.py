"""`graphraft serve`'s app in-process (httpx through FastAPI's TestClient), on the embedded
database with the tiny model under the constraint."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from fastapi.testclient import TestClient

from graphraft.serving.app import create_app

QUESTIONS = [
    "which films did [Tom Hanks] star in",
    "who directed [Forrest Gump]",
    "who directed [Big]",
    "which films did [Robert Zemeckis] direct",
]


@pytest.fixture
def client(engine):
    with TestClient(create_app(engine, timeout_s=60)) as client:
        yield client


def answered(body: dict) -> tuple:
    """What a client relies on: the answers and the queries that found them."""
    return [a["id"] for a in body["answers"]], [q["cypher"] for q in body["queries"]]


def test_ask_returns_the_answer_ask_gives(client, engine):
    expected = engine.ask(QUESTIONS[0])
    response = client.post("/ask", json={"question": QUESTIONS[0]})
    assert response.status_code == 200
    body = response.json()
    assert answered(body) == ([a.id for a in expected.answers], [q.cypher for q in expected.queries])
    assert body["answers"] and body["evidence"].startswith("Pattern 1: (Tom Hanks:Person)")
    assert {"anchors", "candidates", "generate", "execute"} <= set(body["timings"])
    # per-request settings: one query, one hop
    narrow = client.post("/ask", json={"question": QUESTIONS[0], "beams": 1, "max_hops": 1}).json()
    assert len(narrow["queries"]) == 1 and narrow["candidates"] < body["candidates"]


def test_schema_and_health(client, store):
    schema = client.get("/schema")
    assert schema.status_code == 200 and schema.json()["labels"]["Movie"] == store.schema().labels["Movie"]
    health = client.get("/health")
    assert health.status_code == 200
    assert health.json() | {"models": None} == {
        "status": "ok",
        "database": "reachable",
        "graph": store.graph_name,
        "models": None,
        "nodes": store.count_nodes(),
    }
    assert "openapi" in client.get("/openapi.json").json()


@pytest.mark.parametrize(
    "payload, status, error",
    [
        ({"question": "   "}, 400, "the question is empty"),
        ({"question": QUESTIONS[0], "timeout_s": 1e-6}, 504, "took longer than its 1e-06s limit"),
    ],
    ids=["empty question", "past its deadline"],
)
def test_user_errors_are_one_line_json_with_their_status(client, payload, status, error):
    response = client.post("/ask", json=payload)
    assert response.status_code == status
    assert error in response.json()["error"] and "\n" not in response.json()["error"]


def test_what_one_request_may_ask_for_is_bounded(client):
    """A 1 MB question, fifty marked mentions: refused before any model or query runs."""
    huge = client.post("/ask", json={"question": "who directed [Big] " + "x" * 1_000_000})
    assert huge.status_code == 400 and "at most 1,000 (GRAPHRAFT_MAX_QUESTION_CHARS)" in huge.json()["error"]
    many = client.post("/ask", json={"question": " ".join(f"[Person {i}]" for i in range(50))})
    assert many.status_code == 400 and "names 50 entities; at most 8" in many.json()["error"]


def test_a_request_names_more_anchors_than_allowed_or_a_deadline_past_the_cap(engine, monkeypatch):
    capped = engine.settings.model_copy(update={"max_ask_timeout_s": 1e-6, "max_anchors": 2})
    monkeypatch.setattr(engine, "settings", capped)
    with TestClient(create_app(engine, timeout_s=60)) as client:
        # the default (60 s) and the client's 1e9 s are both cut to the server's cap
        slow = client.post("/ask", json={"question": QUESTIONS[0], "timeout_s": 1e9})
        assert slow.status_code == 504 and "its 1e-06s limit" in slow.json()["error"]
    monkeypatch.setattr(engine, "settings", capped.model_copy(update={"max_ask_timeout_s": 60}))
    with TestClient(create_app(engine, timeout_s=60)) as client:
        # "Contact" is a film and a book: three mentions, four nodes
        three = client.post("/ask", json={"question": "do [Contact], [Big] and [Cast Away] share a genre"})
        assert three.status_code == 400 and "match 4 nodes; at most 2 (GRAPHRAFT_MAX_ANCHORS)" in three.json()["error"]
    found = engine.ask(QUESTIONS[1]).candidates
    assert found > 1
    monkeypatch.setattr(engine, "settings", engine.settings.model_copy(update={"max_candidate_queries": found - 1}))
    with TestClient(create_app(engine, timeout_s=60)) as client:
        broad = client.post("/ask", json={"question": QUESTIONS[1]})
        assert broad.status_code == 400
        assert f"{found:,} candidate queries around them; at most {found - 1:,}" in broad.json()["error"]


def hold_the_model(engine, monkeypatch) -> tuple[threading.Event, threading.Event]:
    """The first batch holds the model until the test lets it go: (inside, release)."""
    inside, release = threading.Event(), threading.Event()
    ask_each = engine.ask_each

    def held(*args, **kwargs):
        inside.set()
        assert release.wait(60)
        return ask_each(*args, **kwargs)

    monkeypatch.setattr(engine, "ask_each", held)
    return inside, release


def test_questions_that_arrive_together_are_answered_together_each_with_its_own_outcome(engine, monkeypatch):
    alone = {question: engine.ask(question) for question in QUESTIONS[1:]}
    inside, release = hold_the_model(engine, monkeypatch)
    app = create_app(engine, timeout_s=60)
    with TestClient(app) as client, ThreadPoolExecutor(6) as pool:
        first = pool.submit(client.post, "/ask", json={"question": QUESTIONS[0]})
        assert inside.wait(60)
        # while the model is busy, three questions, one naming too many entities, one already late
        together = [pool.submit(client.post, "/ask", json={"question": question}) for question in QUESTIONS[1:]]
        bad = pool.submit(client.post, "/ask", json={"question": " ".join(f"[Person {i}]" for i in range(9))})
        late = pool.submit(client.post, "/ask", json={"question": QUESTIONS[1], "timeout_s": 0.5})
        while app.state.batcher.waiting() < 5:
            assert not first.done()
            threading.Event().wait(0.01)
        threading.Event().wait(0.6)  # the late one's deadline passes while it waits
        release.set()
        assert first.result().status_code == 200
        for question, response in zip(QUESTIONS[1:], together):
            assert response.result().status_code == 200
            expected = alone[question]
            assert answered(response.result().json()) == (
                [a.id for a in expected.answers],
                [q.cypher for q in expected.queries],
            )
        assert bad.result().status_code == 400 and "names 9 entities" in bad.result().json()["error"]
        assert late.result().status_code == 504 and "0.5s limit" in late.result().json()["error"]
    # the first question alone, then the five that waited for it in one batch
    assert app.state.batcher.batch_sizes == [1, 5]


def test_a_full_queue_is_503_with_retry_after_and_health_answers_while_a_question_runs(engine, monkeypatch):
    inside, release = hold_the_model(engine, monkeypatch)
    monkeypatch.setattr(engine, "settings", engine.settings.model_copy(update={"max_queued": 1}))
    with TestClient(create_app(engine, timeout_s=60)) as client, ThreadPoolExecutor(1) as pool:
        first = pool.submit(client.post, "/ask", json={"question": QUESTIONS[0]})
        assert inside.wait(60)
        busy = client.post("/ask", json={"question": QUESTIONS[1]})
        assert busy.status_code == 503 and busy.headers["Retry-After"] == "5"
        assert "1 questions are already waiting or running (GRAPHRAFT_MAX_QUEUED)" in busy.json()["error"]
        health = client.get("/health")
        assert health.status_code == 200 and health.json()["status"] == "ok" and not first.done()
        release.set()
        assert first.result().status_code == 200
        assert client.post("/ask", json={"question": QUESTIONS[1]}).status_code == 200


def test_with_an_api_key_ask_and_schema_need_the_bearer_token_and_health_does_not(engine):
    key = "k3y-" + "x" * 28
    with TestClient(create_app(engine, timeout_s=60, api_key=key)) as client:
        for method, path, body in (("post", "/ask", {"question": QUESTIONS[1]}), ("get", "/schema", None)):
            call = getattr(client, method)
            kwargs = {"json": body} if body else {}
            none = call(path, **kwargs)
            assert none.status_code == 401 and none.headers["WWW-Authenticate"] == "Bearer"
            assert "a bearer token is required" in none.json()["error"]
            wrong = call(path, headers={"Authorization": "Bearer " + "y" * 32}, **kwargs)
            assert wrong.status_code == 401
            assert call(path, headers={"Authorization": f"Bearer {key}"}, **kwargs).status_code == 200
        assert client.get("/health").status_code == 200


def test_serve_refuses_other_interfaces_without_a_key_and_a_short_key(tmp_path):
    from cli_run import one_line_error, run

    env = {"GRAPHRAFT_HOME": str(tmp_path)}
    open_to_all = run(["serve", "--host", "0.0.0.0"], env, timeout=120)
    assert open_to_all.returncode == 2
    assert "serving on 0.0.0.0 would let anyone who reaches it ask" in one_line_error(open_to_all)
    short = tmp_path / "key"
    short.write_text("abc\n")
    weak = run(["serve", "--host", "0.0.0.0", "--api-key-file", str(short)], env, timeout=120)
    assert weak.returncode != 0 and "holds a key of 3 characters; use 16 or more" in one_line_error(weak)
    blocked = tmp_path / "file"
    blocked.write_text("")  # a file where the log's folder would be
    unwritable = run(["serve", "--log-questions", str(blocked / "questions.txt")], env, timeout=120)
    assert unwritable.returncode == 2 and "questions.txt: cannot write the question log" in one_line_error(unwritable)


def test_a_malformed_request_is_422_and_an_unknown_entity_says_so(client):
    assert client.post("/ask", json={"beams": 2}).status_code == 422  # no question
    assert client.post("/ask", json={"question": "x", "max_hops": 9}).status_code == 422
    body = client.post("/ask", json={"question": "which films did [Greta Garbo] star in"}).json()
    assert body["answers"] == [] and body["queries"] == []
    assert body["message"] == "no entity of the question was found in the graph (mentions: Greta Garbo)"


def test_eight_concurrent_requests_are_each_answered_as_alone(client, engine):
    questions = (QUESTIONS * 2)[:8]
    alone = {q: engine.ask(q) for q in QUESTIONS}
    expected = {q: ([a.id for a in ans.answers], [x.cypher for x in ans.queries]) for q, ans in alone.items()}
    with ThreadPoolExecutor(8) as pool:
        responses = list(pool.map(lambda q: client.post("/ask", json={"question": q}), questions))
    assert [r.status_code for r in responses] == [200] * 8
    assert [answered(r.json()) for r in responses] == [expected[q] for q in questions]


def test_log_questions_keeps_the_answered_questions_text_for_self_training(engine, tmp_path):
    """`serve --log-questions`: each answered question, one a line, in a file only its owner
    reads, appended across restarts; the refused ones are not kept. Self-training reads it."""
    import stat

    from graphraft.training.self_training import read_questions

    log = tmp_path / "logs" / "questions.txt"
    with TestClient(create_app(engine, timeout_s=60, log_questions=log)) as client:
        assert client.post("/ask", json={"question": QUESTIONS[0]}).status_code == 200
        assert client.post("/ask", json={"question": "  "}).status_code == 400
        assert client.post("/ask", json={"question": "x" * 2000}).status_code == 400
        assert client.post("/ask", json={"question": "who  directed\n[Big]"}).status_code == 200
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    with TestClient(create_app(engine, timeout_s=60, log_questions=log)) as client:  # a restart appends
        assert client.post("/ask", json={"question": QUESTIONS[0]}).status_code == 200
    assert log.read_text().splitlines() == [QUESTIONS[0], "who directed [Big]", QUESTIONS[0]]
    assert [q for _, q in read_questions(log)] == [QUESTIONS[0], "who directed [Big]"]
