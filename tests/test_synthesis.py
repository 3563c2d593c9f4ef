"""Synthesis end to end: rows, filters, dropped questions, resume after a kill, datasets."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from graphraft.errors import InputFileError
from graphraft.graph.falkor import FalkorDBStore
from graphraft.graph.loaders.demo import demo_files
from graphraft.graph.loaders.questions import QAItem, read_question_file
from graphraft.synthesis.enumeration import PatternEnumerator
from graphraft.synthesis.mentions import MarkedMentionExtractor
from graphraft.synthesis.patterns import Pattern, executable
from graphraft.synthesis.resolution import EntityResolver
from graphraft.synthesis.rows import SynthesisRow, read_rows, read_usable
from graphraft.synthesis.synthesizer import SynthesisConfig, Synthesizer, run_synthesis

from movie_graph import ROCK, load


def synthesizer_for(store, **config):
    return Synthesizer(
        MarkedMentionExtractor(), EntityResolver(store), PatternEnumerator(store), SynthesisConfig(**config)
    )


def item(question, answers, hops=1, **extra):
    return QAItem(
        qid=f"q-{abs(hash(question))}",
        question=question,
        mention=None,
        answers=tuple(answers),
        hops=hops,
        qtype=None,
        split="train",
        extra=extra,
    )


def without_timings(rows):
    return [row.model_dump(exclude={"timings"}) for row in rows]


def test_a_row_names_the_best_query_its_scores_and_alternatives(store):
    load(store)
    row = synthesizer_for(store).row_for(item("what did [Tom Hanks] star in", ["Cast Away", "Big", "Forrest Gump"]))
    assert row.status == "ok" and row.reason is None
    assert row.cypher == ('MATCH (a:Person {id: "p1"})<-[r1:STARRED_ACTORS]-(n1:Movie) RETURN DISTINCT n1.id AS id')
    assert (row.hits, row.total, row.recall, row.precision) == (3, 3, 1.0, 1.0)
    assert [a.model_dump() for a in row.anchors] == [
        {"mention": "Tom Hanks", "id": "p1", "name": "Tom Hanks", "labels": ["Person"], "method": "exact", "score": 1.0}
    ]
    assert {r["id"] for r in store.read(row.cypher)} == {"m1", "m2", "m3"}
    assert set(row.timings) == {"extract", "resolve", "enumerate", "total"}
    assert row.model_fields_set == set(SynthesisRow.model_fields)  # the writer sets every field


def test_a_longer_pattern_wins_when_it_hits_more(store):
    load(store)
    # films sharing a director with Hanks' films: only a 3-hop pattern reaches Contact
    row = synthesizer_for(store).row_for(item("films by the directors of [Tom Hanks] films", ["Contact"], hops=3))
    assert row.status == "ok" and row.pattern["target"] == 3
    # the film written by a director of Hanks' films is exactly the answer
    assert store.read(row.cypher) == [{"id": "m4"}] and (row.hits, row.total) == (1, 1)
    # the director-to-director variant also reaches it, with more results, so it ranks below
    alternative = row.alternatives[0]
    assert "r2 <> r3" in alternative.cypher and (alternative.hits, alternative.total) == (1, 3)


def test_recall_and_precision_filters_drop_with_a_reason(store):
    load(store)
    partial = item("what did [Tom Hanks] star in", ["Cast Away", "Some Film Not In The Graph"])
    row = synthesizer_for(store).row_for(partial)
    assert row.status == "dropped" and row.reason.startswith("no pattern with recall >= 1")
    assert row.closest.recall == 0.5
    kept = synthesizer_for(store, min_recall=0.5).row_for(partial)
    assert kept.status == "ok" and kept.recall == 0.5
    strict = synthesizer_for(store, min_recall=0.5, min_precision=0.9).row_for(partial)
    assert strict.status == "dropped"


def test_a_question_whose_entity_is_not_in_the_graph_is_kept_out(store):
    load(store)
    row = synthesizer_for(store).row_for(item("what did [Greta Garbo] star in", ["Ninotchka"]))
    assert row.status == "dropped" and row.reason == "no anchor: 'Greta Garbo' not in the graph"
    row = synthesizer_for(store).row_for(item("what did she star in", ["Ninotchka"]))
    assert row.reason == "no entity mention found"


def test_a_name_with_quotes_and_backslashes_anchors_and_runs(store):
    load(store)
    row = synthesizer_for(store).row_for(
        item("who starred in [Big]", ["Tom Hanks", 'Dwayne "The Rock" Johnson \\ Jr.'])
    )
    assert row.status == "ok"
    assert {r["id"] for r in store.read(row.cypher)} == {"p1", ROCK}
    q1 = synthesizer_for(store).row_for(item('what did ["The Rock" Johnson] do', ["Big"]))  # marked by brackets
    # not the full name: no exact match and no vector index, so the text match finds it by its words
    assert [(a.id, a.method) for a in q1.anchors] == [(ROCK, "text")]
    full = synthesizer_for(store).row_for(item('what did [Dwayne "The Rock" Johnson \\ Jr.] star in', ["Big"]))
    assert full.status == "ok" and '\\"The Rock\\"' in full.cypher
    assert store.read(full.cypher) == [{"id": "m2"}]


def test_demo_questions_all_get_a_recall_one_query(demo_store, tmp_path):
    items = list(read_question_file(demo_files()[2]))
    summary = run_synthesis(
        synthesizer_for(demo_store), items, tmp_path / "out.jsonl", meta={"graph": demo_store.graph_name}
    )
    rows = list(read_rows(tmp_path / "out.jsonl"))
    assert [r.qid for r in rows] == [i.qid for i in items]  # input order
    assert summary.kept == len(items)
    assert all(figures[0] == figures[1] for figures in summary.by_hop.values())
    # each best query, run as written, returns exactly the answer ids
    for row, source in zip(rows[::25], items[::25]):
        query = executable(Pattern.from_dict(row.pattern), demo_store)
        assert {r["id"] for r in demo_store.read(query)} == set(source.extra["answer_ids"])


def test_the_output_loads_with_datasets(demo_store, tmp_path):
    from datasets import load_dataset

    items = list(read_question_file(demo_files()[2]))[:40]
    items.append(item("what did [Nobody Known] write", ["x"]))  # a dropped row with nulls
    run_synthesis(synthesizer_for(demo_store), items, tmp_path / "out.jsonl", meta={})
    dataset = load_dataset("json", data_files=str(tmp_path / "out.jsonl"), split="train")
    assert len(dataset) == 41
    assert {"question", "cypher", "anchors", "hits", "total", "precision", "recall", "alternatives", "timings"} <= set(
        dataset.column_names
    )
    assert dataset[0]["cypher"].startswith("MATCH (a:") and dataset[40]["cypher"] is None


def test_rerun_skips_done_rows_and_refuses_other_settings(demo_store, tmp_path):
    items = list(read_question_file(demo_files()[2]))[:30]
    out = tmp_path / "out.jsonl"
    first = run_synthesis(synthesizer_for(demo_store), items[:10], out, meta={"max_hops": 3})
    assert first.written == 10
    second = run_synthesis(synthesizer_for(demo_store), items, out, meta={"max_hops": 3})
    assert (second.skipped_done, second.written) == (10, 20)
    with pytest.raises(InputFileError, match="other settings"):
        run_synthesis(synthesizer_for(demo_store), items, out, meta={"max_hops": 2})
    # a half-written last line (a killed run) is cut off and redone
    with out.open("a") as handle:
        handle.write('{"qid": "half')
    third = run_synthesis(synthesizer_for(demo_store), items, out, meta={"max_hops": 3})
    assert third.written == 0 and len(list(read_rows(out))) == 30


def test_a_synthesis_resumes_when_the_local_server_comes_back_on_another_address(demo_store, server, tmp_path):
    # the embedded server picks a free port each start; the file is keyed on the graph, not the port
    if not isinstance(demo_store, FalkorDBStore):
        pytest.skip("not applicable: a Neo4j server keeps its address (the managed one keeps its port)")
    items = list(read_question_file(demo_files()[2]))[:4]
    out = tmp_path / "out.jsonl"
    run_synthesis(synthesizer_for(demo_store), items[:2], out, meta={"graph": demo_store.identity})
    again = server.store(demo_store.graph_name, host="localhost")
    try:
        assert again.description != demo_store.description
        resumed = run_synthesis(synthesizer_for(again), items, out, meta={"graph": again.identity})
    finally:
        again.close()
    assert (resumed.skipped_done, resumed.written) == (2, 2)
    with pytest.raises(InputFileError, match=r"other settings \(graph\)"):
        run_synthesis(synthesizer_for(demo_store), items, out, meta={"graph": "FalkorDB graph 'another'"})


def _cli(args, env):
    return subprocess.Popen(
        [sys.executable, "-m", "graphraft.synthesize", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_killed_midway_the_rerun_ends_with_the_uninterrupted_dataset(demo_store, env_for, tmp_path):
    # The demo questions twice over; the kill lands midway, where the uninterrupted run's file is a third written.
    lines = demo_files()[2].read_text(encoding="utf-8").splitlines() * 2
    questions = tmp_path / "questions.jsonl"
    questions.write_text("\n".join(lines) + "\n", encoding="utf-8")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("GRAPHRAFT_", "NEO4J_"))},
        **env_for(demo_store),
        "GRAPHRAFT_HOME": str(tmp_path / "home"),
    }
    common = [
        "--questions",
        str(questions),
        "--graph",
        demo_store.graph_name,
        "--extractor",
        "marked",
        "--workers",
        "2",
    ]

    reference = tmp_path / "reference.jsonl"
    assert _cli([*common, "--output", str(reference)], env).wait(timeout=300) == 0

    interrupted = tmp_path / "interrupted.jsonl"
    proc = _cli([*common, "--output", str(interrupted)], env)
    deadline, third = time.monotonic() + 120, reference.stat().st_size // 3
    while time.monotonic() < deadline:
        if interrupted.exists() and interrupted.stat().st_size > third:
            break
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    written = interrupted.read_text(encoding="utf-8").count("\n")
    assert 0 < written < len(lines), "the kill should land midway"

    resumed = _cli([*common, "--output", str(interrupted)], env)
    assert resumed.wait(timeout=300) == 0, resumed.stderr.read()
    assert without_timings(read_rows(interrupted)) == without_timings(read_rows(reference))


def test_a_synthesis_file_is_read_as_typed_rows_and_a_stray_line_names_its_place(tmp_path):
    from synthesis_rows import synthesis_row

    kept, dropped = synthesis_row("q1"), synthesis_row("q2", status="dropped", reason="no anchor", cypher=None)
    older = kept.model_dump(exclude={"answer_ids", "source"}) | {"qid": "q0"}  # written before those fields
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join([json.dumps(older), kept.to_json(), dropped.to_json()]) + "\n")
    assert [row.qid for row in read_rows(path)] == ["q0", "q1", "q2"]
    assert [row.qid for row in read_usable(path)] == ["q0", "q1"]
    assert next(read_rows(path)).answer_ids == []

    path.write_text(kept.to_json() + "\n" + json.dumps({**kept.model_dump(), "hits": "many"}) + "\n")
    with pytest.raises(InputFileError, match=r"rows.jsonl:2: not a synthesis row \(hits: "):
        list(read_rows(path))
    path.write_text(json.dumps({**kept.model_dump(), "score": 1}) + "\n")  # a field no writer sets
    with pytest.raises(InputFileError, match=r"rows.jsonl:1: not a synthesis row \(score: extra"):
        list(read_rows(path))
