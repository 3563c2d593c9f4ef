"""Self-training L1 on questions without answers (issue 28), on each store, with the tiny model:
round 0 learns from questions generated from the graph; later rounds add the questions L1
labels itself, a label kept only when its query runs and returns something and L1 is sure of it.
No answer is read: the question file is plain text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphraft.cli.train import train_command
from graphraft.errors import InputFileError
from graphraft.graph.loaders.demo import demo_files
from graphraft.graph.loaders.questions import read_question_file
from graphraft.synthesis.from_graph import GenerationConfig, GraphQuestionGenerator
from graphraft.synthesis.from_graph import generate as write_generated
from graphraft.synthesis.patterns import AnchorRef, Pattern, Step, executable, render
from graphraft.synthesis.rows import read_rows
from graphraft.training.config import DataSource, TrainConfig
from graphraft.training.self_training import labels_moved, labels_report, query_wording, read_questions


@pytest.fixture
def cold_start(demo_store, env_for, tmp_path, monkeypatch):
    """Questions generated from the demo graph (the training data), the demo's questions as a
    plain text file without their answers; the commands pointed at the store."""
    for key, value in env_for(demo_store).items():
        monkeypatch.setenv(key, value)
    generated = tmp_path / "generated.jsonl"
    write_generated(GraphQuestionGenerator(demo_store, GenerationConfig(count=80, seed=0, max_hops=2)), generated)
    questions = [item.question for item in read_question_file(demo_files()[2])][:24]
    text = tmp_path / "questions.txt"
    text.write_text("# the users' questions, no answers\n" + "\n".join(questions) + "\n\n")
    return generated, text


def config(tmp_path, generated, questions, graph, **self_train) -> TrainConfig:
    return TrainConfig.model_validate(
        dict(
            task="l1",
            base_model="tiny-random",
            graph=graph,
            data=[str(generated)],
            output_dir=tmp_path / "run",
            max_train_examples=48,
            validation_examples=8,
            epochs=1,
            batch_size=8,
            learning_rate=3e-3,
            max_length=192,
            logging_steps=1,
            eval_batch_size=8,
            max_hops=2,
            lora={"r": 8, "alpha": 16, "dropout": 0.0},
            self_train={"questions": str(questions), **self_train},
        )
    )


def test_labels_are_l1s_own_queries_that_run_and_a_rerun_resumes(cold_start, demo_store, tmp_path, capsys):
    generated, questions = cold_start
    cfg = config(tmp_path, generated, questions, demo_store.graph_name, margin=0.0, wording_slack=None, rounds=1)
    report = train_command("l1", config=cfg)
    rounds = report["rounds"]
    assert [r["round"] for r in rounds] == [0, 1] and report["questions"] == 24
    labels = list(read_rows(tmp_path / "run" / "round-1" / "labels.jsonl"))
    assert len(labels) == 24 and rounds[1]["kept"] == sum(row.usable for row in labels) > 0
    for row in labels:
        # nothing of an answer anywhere: there is none to read
        assert row.answers == [] and row.answer_ids == [] and row.split == "train"
        if row.usable:  # L1's top query: it runs on the store and returns what the row says
            returned = demo_store.read(executable(row.best_pattern, demo_store))
            assert returned and row.hits == len({r["id"] for r in returned})
            assert row.source["kind"] == "self-train" and row.source["round"] == 1
            # every query L1 wrote is kept for diagnostics, the label first, best first
            written = row.source["queries"]
            assert written[0]["cypher"] == row.cypher and written[0]["pattern"] == row.pattern
            assert [q["score"] for q in written] == sorted((q["score"] for q in written), reverse=True)
        else:
            assert row.reason and row.cypher is None
    # round 1 trained on the generated questions and the kept labels, at their share
    summary = json.loads((tmp_path / "run" / "round-1" / "summary.json").read_text())
    assert summary["train_examples"] == rounds[1]["train_examples"] > 0
    adapter = tmp_path / "run" / "adapter"
    assert (adapter / "adapter_model.safetensors").exists() and report["best_round_adapter"].endswith("round-1/adapter")
    err = capsys.readouterr().err
    assert f"round 1, {rounds[1]['kept']} of 24 questions labelled" in err

    # a rerun trains nothing and labels nothing again
    again = train_command("l1", config=cfg)
    err = capsys.readouterr().err
    assert "round 0: trained before, reused" in err and "round 1: trained before, reused" in err
    assert "labelling" not in err and again["rounds"] == rounds
    assert len((tmp_path / "run" / "round-1" / "labels.jsonl").read_text().splitlines()) == 24

    # more rounds: the rounds trained before are reused, and round 2 labels with round 1's adapter
    more = train_command(
        "l1", config=cfg.model_copy(update={"self_train": cfg.self_train.model_copy(update={"rounds": 2})})
    )
    err = capsys.readouterr().err
    assert "round 0: trained before, reused" in err and "round 1: trained before, reused" in err
    assert more["rounds"][:2] == rounds and more["rounds"][2]["round"] == 2
    assert len((tmp_path / "run" / "round-2" / "labels.jsonl").read_text().splitlines()) == 24
    # round 2 trains only where its labels moved (24 questions: at least one labelled anew)
    second = more["rounds"][2]
    assert ("stopped" in second) == (labels_moved(second) < 1) and ("adapter" in second) != ("stopped" in second)


def test_rounds_go_on_while_the_labels_move_not_while_they_grow():
    """A round that keeps fewer labels but gives other questions labels, or other queries, moved
    (the rule once stopped such a round); one that keeps the same labels did not."""
    previous = {"q1": "MATCH a", "q2": "MATCH b", "q3": "MATCH c"}
    fewer = labels_report([], {"q1": "MATCH a", "q2": "MATCH x"}, previous)
    assert fewer["kept"] < len(previous) and fewer["changed"] == 1 and fewer["new"] == 0
    assert labels_moved(fewer) == 1
    shuffled = labels_report([], {"q4": "MATCH d", "q2": "MATCH b"}, previous)
    assert labels_moved(shuffled) == 1 and shuffled["new"] == 1
    assert labels_moved(labels_report([], dict(previous), previous)) == 0


def test_a_label_l1_is_not_sure_of_is_dropped_and_the_first_adapter_stays(cold_start, demo_store, tmp_path):
    generated, questions = cold_start
    cfg = config(tmp_path, generated, questions, demo_store.graph_name, margin=1e9, wording_slack=None)
    report = train_command("l1", config=cfg)
    assert report["rounds"][-1]["stopped"] == "no label was kept" and report["rounds"][-1]["kept"] == 0
    labels = list(read_rows(tmp_path / "run" / "round-1" / "labels.jsonl"))
    sure = [row for row in labels if row.reason and row.reason.startswith("L1 was not sure")]
    assert sure and all(row.source["margin"] < 1e9 for row in sure)
    assert report["best_round_adapter"].endswith("round-0/adapter") and not (tmp_path / "run" / "round-2").exists()


def test_the_wording_check_keeps_only_labels_no_other_query_reads_closer_to(cold_start, demo_store, tmp_path):
    generated, questions = cold_start
    # the plain check: L1's top query, the raw similarities (the recipe's defaults relabel and center)
    plain = {"relabel": "none", "wording_center": False, "reshape": False}
    cfg = config(
        tmp_path, generated, questions, demo_store.graph_name, margin=0.0, wording_slack=0.0, rounds=1, **plain
    )
    train_command("l1", config=cfg)
    labels = list(read_rows(tmp_path / "run" / "round-1" / "labels.jsonl"))
    compared = [row for row in labels if row.source.get("closest_other") is not None]
    assert compared
    for row in compared:
        closer = row.source["closest_other"] > row.source["wording"]
        assert not (row.usable and closer)
        assert closer == bool(row.reason and row.reason.startswith("another query reads closer"))


def test_reshape_makes_the_graphs_questions_again_in_the_shapes_the_labels_ask(
    cold_start, demo_store, tmp_path, capsys
):
    """Each round's kept labels re-estimate the shape prior; the generated questions are made
    again with it and replace the old ones in that round's training; a rerun makes nothing again."""
    from collections import Counter

    from graphraft.synthesis.rows import read_usable
    from graphraft.synthesis.synthesizer import read_meta
    from graphraft.training.config import DataSource
    from graphraft.training.self_training import round_config
    from graphraft.training.trainer import config_digest

    generated, questions = cold_start
    cfg = config(tmp_path, generated, questions, demo_store.graph_name, margin=0.0, wording_slack=None, reshape=True)
    report = train_command("l1", config=cfg)
    assert [r["round"] for r in report["rounds"]][:2] == [0, 1]
    for entry in report["rounds"][1:]:
        if "stopped" in entry:
            continue
        folder = tmp_path / "run" / f"round-{entry['round']}"
        labels, remade = folder / "labels.jsonl", folder / "generated.jsonl"
        asked = Counter(row.best_pattern.shape for row in read_usable(labels))
        meta = read_meta(remade)
        # the prior is this round's kept labels' shapes, and the rest of the settings the first file's
        assert meta["shape_prior"] == dict(sorted(asked.items())) and entry["prior_shapes"] == len(asked)
        assert meta["count"] == 27 + 10  # 24 training questions, a tenth more, and 10 for validation
        assert meta["seed"] == read_meta(generated)["seed"] and meta["source"] == "graph"
        rows = read_usable(remade)
        assert entry["generated_rows"] == len(rows) > 0
        # the shapes asked come up more often than in the questions made evenly
        even = read_usable(generated)
        assert sum(r.best_pattern.shape in asked for r in rows) / len(rows) > 2 * sum(
            r.best_pattern.shape in asked for r in even
        ) / len(even)
        # this round trained on the labels and the questions made again, not on the first file
        data = [DataSource(path=remade, share=0.5)]
        summary = json.loads((folder / "summary.json").read_text())
        assert summary["config_digest"] == config_digest(round_config(cfg, entry["round"], labels, data))
    capsys.readouterr()
    again = train_command("l1", config=cfg)
    err = capsys.readouterr().err
    assert "making" not in err and "labelling" not in err and "round 1: trained before, reused" in err
    assert again["rounds"] == report["rounds"]
    # reshape_types false reaches the generator: the types spread (ShapePrior.skeleton_weight)
    from graphraft.config import Settings
    from graphraft.training.self_training import reshaped_data

    assert "prior_types" not in read_meta(tmp_path / "run" / "round-1" / "generated.jsonl")  # the default
    spread = cfg.model_copy(update={"self_train": cfg.self_train.model_copy(update={"reshape_types": False})})
    data = reshaped_data(spread, Settings(), tmp_path / "run" / "round-1" / "labels.jsonl", tmp_path / "spread", print)
    assert read_meta(data[-1].path)["prior_types"] is False and read_usable(data[-1].path)
    # and reshape_smoothing, as the generator's prior_smoothing
    update = {"self_train": cfg.self_train.model_copy(update={"reshape_smoothing": 1.0})}
    labels = tmp_path / "run" / "round-1" / "labels.jsonl"
    data = reshaped_data(cfg.model_copy(update=update), Settings(), labels, tmp_path / "smoothed", print)
    assert read_meta(data[-1].path)["prior_smoothing"] == 1.0 and read_usable(data[-1].path)
    # reshape_unsure: a dropped label's question counts in the prior by its closest-reading query
    from graphraft.synthesis.rows import read_rows
    from graphraft.training.self_training import asked_shapes

    kept = read_usable(labels)
    first = kept[0]
    other = next(r for r in kept if r.best_pattern.shape != first.best_pattern.shape)
    written = [
        {"cypher": first.cypher, "pattern": first.pattern, "score": -0.1, "similarity": 0.5},
        {"cypher": other.cypher, "pattern": other.pattern, "score": -0.5, "similarity": 0.9},
    ]
    unsure = first.model_copy(
        update={"qid": "unsure", "status": "dropped", "reason": "L1 was not sure", "source": {"queries": written}}
    )
    bare = [{k: v for k, v in w.items() if k != "similarity"} for w in written]
    unscored = unsure.model_copy(update={"qid": "unscored", "source": {"queries": bare}})
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text("".join(r.to_json() + "\n" for r in [*read_rows(labels), unsure, unscored]))
    shapes = {r.qid: r for r in read_rows(asked_shapes(mixed, tmp_path / "shapes.jsonl", cfg.self_train))}
    assert {q for q in shapes if q in ("unsure", "unscored")} == {"unsure"}  # no similarity: left out
    assert shapes["unsure"].cypher == other.cypher and shapes["unsure"].source["shape_only"] is True
    assert all(shapes[r.qid].cypher == r.cypher for r in kept)  # the kept labels as they are
    update = {"self_train": cfg.self_train.model_copy(update={"reshape_unsure": True})}
    data = reshaped_data(cfg.model_copy(update=update), Settings(), mixed, tmp_path / "unsure", print)
    prior = read_meta(data[-1].path)["shape_prior"]
    assert prior[other.best_pattern.shape] == Counter(r.best_pattern.shape for r in kept)[other.best_pattern.shape] + 1


def test_the_defaults_are_the_recipe_and_reshape_needs_questions_made_from_the_graph(tmp_path):
    """The defaults are the measured recipe (README, "Cold start"); with no data file made by
    `--from-graph` the default reshape is left out with a note, a reshape that was asked for is
    an error before any work; with no wording check nothing compares wordings."""
    from graphraft.errors import InputFileError
    from graphraft.training.self_training import reshaping, settled

    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("")
    cfg = config(tmp_path, pairs, tmp_path / "q.txt", "g")
    recipe = cfg.self_train
    assert recipe.reshape and not recipe.reshape_hops and recipe.reshape_unsure and recipe.relabel == "longer"
    assert recipe.wording_center and recipe.wording_slack == 0.0 and not recipe.wording_schema_words
    notes = []
    kept = settled(cfg, notes.append)
    assert not kept.self_train.reshape and "reshape left out" in notes[0]["note"]
    asked = config(tmp_path, pairs, tmp_path / "q.txt", "g", reshape=True)
    assert settled(asked, notes.append) is asked and len(notes) == 1
    with pytest.raises(InputFileError, match="--from-graph"):
        reshaping(asked)
    # made from the graph, beside a file with no share: nothing says how much room each gets
    made = tmp_path / "made.jsonl"
    made.write_text("")
    Path(f"{made}.meta.json").write_text(json.dumps({"source": "graph"}))
    both = config(tmp_path, made, tmp_path / "q.txt", "g").model_copy(
        update={"data": [DataSource(path=made), DataSource(path=pairs)]}
    )
    assert not settled(both, notes.append).self_train.reshape and "pairs.jsonl has no share" in notes[-1]["note"]
    alone = config(tmp_path, made, tmp_path / "q.txt", "g")
    assert settled(alone, notes.append) is alone and len(notes) == 2
    unchecked = config(tmp_path, pairs, tmp_path / "q.txt", "g", wording_slack=None).self_train
    assert unchecked.relabel == "none" and not unchecked.wording_center


def test_a_setting_added_later_keeps_the_digest_of_adapters_trained_before_it(tmp_path):
    """An adapter trained before `reshape` (`reshape_hops`, `reshape_types`, `relabel`, `wording_schema_words`,
    `wording_center`, `reshape_smoothing`, `reshape_unsure`, `asked_type_first`, `prompt_examples`) existed
    is reused (its digest had no such key); turning it on, or any other setting, is other training."""
    import hashlib

    from graphraft.training.trainer import ADDED_LATER, config_digest

    # the settings at the behaviour they had before they were added (today's defaults are the recipe's)
    old = {path[1]: value for path, value in ADDED_LATER.items() if path[0] == "self_train"} | {"wording_slack": 0.1}
    base = TrainConfig.model_validate(
        {"task": "l1", "data": ["a.jsonl"], "output_dir": str(tmp_path), "max_train_examples": 10, "self_train": old}
    )
    before = base.model_dump(mode="json")
    added = ("reshape", "reshape_hops", "reshape_types", "relabel", "wording_schema_words", "wording_center")
    for key in (*added, "reshape_smoothing", "reshape_unsure", "asked_type_first"):
        del before["self_train"][key]  # the settings as they were dumped before the fields
    del before["prompt_examples"]  # (a setting of L1's prompt, added later too)
    legacy = hashlib.sha1(json.dumps(before, separators=(",", ":")).encode()).hexdigest()[:16]
    assert config_digest(base, round_count=True) == legacy  # (the round count: the next test)
    changes = ({"reshape": True}, {"reshape_hops": False}, {"reshape_types": False}, {"relabel": "longer"})
    later = (
        {"wording_schema_words": False},
        {"wording_center": True},
        {"reshape_smoothing": 1.0},
        {"reshape_unsure": True},
        {"asked_type_first": True},
    )
    for changed in (*changes, *later):
        on = base.model_copy(update={"self_train": base.self_train.model_copy(update=changed)})
        assert config_digest(on, round_count=True) != legacy
    assert config_digest(base.model_copy(update={"prompt_examples": 2}), round_count=True) != legacy
    assert config_digest(base.model_copy(update={"epochs": 2.0}), round_count=True) != legacy


def test_how_many_rounds_run_is_not_part_of_a_rounds_digest(tmp_path):
    """The round count and the stopping gain decide how many rounds run, not what one trains on:
    a rerun with more rounds reuses the adapters trained before, those whose digest was made with
    them too (before they were left out: fewer or as many rounds); any other setting trains again."""
    from graphraft.training.trainer import config_digest, trained_with

    base = TrainConfig.model_validate(
        {"task": "l1", "data": ["a.jsonl"], "output_dir": str(tmp_path), "max_train_examples": 10}
    )
    with_rounds = lambda n, **other: base.model_copy(  # noqa: E731
        update={"self_train": base.self_train.model_copy(update={"rounds": n, **other})}
    )
    assert config_digest(with_rounds(1)) == config_digest(with_rounds(3, min_gain=0.5)) == config_digest(base)
    old_style = {"config_digest": config_digest(with_rounds(1), round_count=True)}
    assert old_style["config_digest"] != config_digest(with_rounds(1))
    assert trained_with(old_style, with_rounds(1)) and trained_with(old_style, with_rounds(2))
    assert not trained_with({"config_digest": config_digest(with_rounds(3), round_count=True)}, with_rounds(2))
    assert not trained_with(old_style, base.model_copy(update={"epochs": 2.0}))
    assert trained_with({"config_digest": config_digest(base)}, with_rounds(5))


def test_a_batch_of_questions_shares_the_time_each_question_has(tmp_path):
    """L1 labels a batch of questions in one search: the batch has each question's limit,
    summed, not one question's (a busy machine dropped whole batches for time)."""
    from graphraft.config import load_settings
    from graphraft.errors import InvalidInputError
    from graphraft.training.self_training import Labeller

    class Recording:  # the pipeline's interface the labeller calls: what it is given, nothing run
        def __init__(self):
            self.settings = load_settings(home=tmp_path, ask_timeout_s=2.0)
            self.given: list[list[float]] = []

        def ask_each(self, questions, deadlines, beams, max_hops):
            self.given.append([deadline.remaining() for deadline in deadlines])
            return [InvalidInputError("not asked") for _ in questions]

    pipeline = Recording()
    cfg = config(tmp_path, tmp_path / "generated.jsonl", tmp_path / "questions.txt", "g", wording_slack=None)
    rows = list(Labeller(pipeline, cfg, None).label([(f"q{i}", f"question {i}") for i in range(5)], 1, batch=4))
    assert [row.reason for row in rows] == ["not asked"] * 5
    first, last = pipeline.given
    assert len(first) == 4 and all(6.0 < left <= 8.0 for left in first)
    assert len(last) == 1 and 0.0 < last[0] <= 2.0


def test_a_query_in_the_schemas_words():
    pattern = Pattern(
        AnchorRef("m1", ("Movie",)), (Step("DIRECTED_BY", True, ("Person",)), Step("BORN_IN", True, ("City",))), 2
    )
    text = query_wording(pattern, render(pattern), {"m1": "Heat"})
    assert text.startswith("the city that the person that Heat was directed by was born in")
    assert "directed by" in text and "movie" in text and "city" in text


def test_a_question_file_says_what_is_wrong(tmp_path):
    with pytest.raises(InputFileError, match="question file not found"):
        read_questions(tmp_path / "none.txt")
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing\n\n")
    with pytest.raises(InputFileError, match="no questions"):
        read_questions(empty)
    twice = tmp_path / "twice.txt"
    twice.write_text("who wrote [x]\nwho wrote [x]\n what genre is [x] \n")
    assert [q for _, q in read_questions(twice)] == ["who wrote [x]", "what genre is [x]"]


def test_self_training_is_for_l1_with_room_for_the_labels(tmp_path):
    base = dict(data=["a.jsonl@0.6"], output_dir=str(tmp_path), self_train={"questions": "q.txt"})
    with pytest.raises(ValueError, match="only L1 is self-trained"):
        TrainConfig.model_validate({**base, "task": "l2"})
    with pytest.raises(ValueError, match="more than 1"):
        TrainConfig.model_validate({**base, "task": "l1"})
    fits = TrainConfig.model_validate({**base, "task": "l1", "self_train": {"questions": "q.txt", "share": 0.4}})
    assert fits.self_train.questions == Path("q.txt")
    with pytest.raises(ValueError, match="leave nothing to the questions made again"):
        TrainConfig.model_validate(
            {**base, "task": "l1", "self_train": {"questions": "q.txt", "share": 0.4, "reshape": True}}
        )


def test_the_command_gives_one_line_errors(tmp_path, graphraft_home):
    from cli_run import one_line_error, run

    env = {"GRAPHRAFT_HOME": str(graphraft_home)}
    base = ["--data", str(tmp_path / "data.jsonl"), "--output-dir", str(tmp_path / "out")]
    text = tmp_path / "questions.txt"  # a file, but no synthesis file: no .meta.json
    text.write_text("who wrote [x]\n")
    for args, complaint in (
        (["train", "l1", *base, "--self-train", str(tmp_path / "none.txt")], "none.txt: question file not found"),
        (["train", "l2", *base, "--self-train", str(tmp_path / "none.txt")], "only L1 is self-trained"),
        (["train", "l1", *base, "--self-train", "q.txt", "--self-train-margin", "-1"], "self_train.margin"),
        (
            ["train", "l1", *base[:1], str(text), *base[2:], "--self-train", str(text), "--self-train-reshape"],
            "none of the data files was made by `synthesize --from-graph`",
        ),
    ):
        proc = run(args, env)
        assert proc.returncode == 2, (args, proc.stderr)
        assert complaint in one_line_error(proc)
    assert not (tmp_path / "out").exists()  # nothing started


def _labeller_on(store, settings, embedder, tmp_path, relabel: str):
    """A labeller that decides labels on ``store`` (no model: deciding asks L1 nothing)."""
    from types import SimpleNamespace

    from graphraft.training.self_training import Labeller

    # the raw similarities of the phrases and the schema's words (the recipe's defaults center them)
    wording = {"wording_center": False, "wording_schema_words": True}
    cfg = config(tmp_path, tmp_path / "g.jsonl", tmp_path / "q.txt", store.graph_name, wording_slack=1.0, **wording)
    cfg = cfg.model_copy(update={"self_train": cfg.self_train.model_copy(update={"relabel": relabel})})
    return Labeller(SimpleNamespace(store=store, settings=settings, close=lambda: None), cfg, embedder.embed)


def _two_queries_row(store, same_length: bool = False):
    """A row as labelling writes it: L1 sure of a 1-hop query (by 2.5 nats) over a 2-hop one from
    the same anchor that returns something (``same_length``: a 1-hop one through another type),
    the question worded as the other one reads."""
    from graphraft.synthesis.enumeration import PatternEnumerator
    from graphraft.synthesis.rows import AnchorRow
    from graphraft.synthesis.verbalise import Verbaliser
    from graphraft.training.self_training import _row

    anchor = AnchorRow(
        mention="Heron Press",
        id="publisher-heron-press",
        name="Heron Press",
        labels=["Publisher"],
        method="exact",
        score=1.0,
    )
    candidates = PatternEnumerator(store).all_patterns([anchor.ref], 2).candidates
    short = next(p for p in candidates.values() if len(p.steps) == 1)
    if same_length:
        others = (p for p in candidates.values() if len(p.steps) == 1 and p.steps[0].type != short.steps[0].type)
    else:
        others = (p for p in candidates.values() if len(p.steps) == 2)
    long = next(p for p in others if store.read(executable(p, store)))
    question = "which are " + Verbaliser().phrases_for(long, anchor.mention)[0]
    written = [
        {"cypher": render(short), "score": -0.5, "pattern": short.to_dict()},
        {"cypher": render(long), "score": -3.0, "pattern": long.to_dict()},
    ]
    source = {"kind": "self-train", "round": 1, "queries": written}
    row = _row("q1", question, None, 1, None, short, render(short), source)
    return row.model_copy(update={"anchors": [anchor]}), short, long


@pytest.mark.parametrize("relabel", ["none", "longer", "longer-unsure", "closest"])
def test_relabel_takes_the_longer_query_that_reads_closer(demo_store, settings, embedder, tmp_path, relabel):
    """L1 leans to short queries: with ``relabel: longer`` (and ``closest``) a longer query it wrote
    that reads closer to the question and returns something becomes the label, sure or not; with
    ``longer-unsure`` only where L1 is not sure of its top query; with none, the top query."""
    row, short, long = _two_queries_row(demo_store)
    decided = _labeller_on(demo_store, settings, embedder, tmp_path, relabel).decide(row)
    assert decided.usable and decided.source["wording"] < decided.source["closest_other"]
    assert decided.source["decided"]["relabel"] == relabel
    if relabel in ("longer", "closest"):
        assert decided.cypher == render(long) and decided.pattern == long.to_dict() and decided.hops == 2
        assert decided.source["relabelled"]["from"] == render(short)
        returned = {r["id"] for r in demo_store.read(executable(long, demo_store))}
        assert decided.hits == len(returned) > 0  # the chosen query ran, and returned that
    else:  # L1 was sure of its top query (margin 2.5 >= 1)
        assert decided.cypher == render(short) and decided.hops == 1 and "relabelled" not in decided.source
        assert decided.hits == len({r["id"] for r in demo_store.read(executable(short, demo_store))})


@pytest.mark.parametrize("relabel", ["longer", "closest"])
def test_relabel_closest_takes_a_query_as_long_through_other_types(demo_store, settings, embedder, tmp_path, relabel):
    """L1's top query copies its confusions of relationship types: ``relabel: closest`` labels
    with another query as long that reads closer (and returns something); ``longer`` does not."""
    row, short, other = _two_queries_row(demo_store, same_length=True)
    assert other.hops == short.hops == 1 and other.steps[0].type != short.steps[0].type
    decided = _labeller_on(demo_store, settings, embedder, tmp_path, relabel).decide(row)
    assert decided.usable and decided.source["wording"] < decided.source["closest_other"]
    if relabel == "closest":
        assert decided.cypher == render(other) and decided.hops == 1
        assert decided.source["relabelled"]["why"].startswith("another query as long (1 -> 1 hops)")
    else:
        assert decided.cypher == render(short) and "relabelled" not in decided.source


def test_a_label_file_is_decided_again_under_other_settings_without_asking_l1(demo_store, settings, embedder, tmp_path):
    """A rerun with other label settings decides the rows again from the queries they keep (the
    pipeline has no model here: asking L1 would fail) and rewrites the file."""
    from graphraft.training.self_training import label_file

    row, _, long = _two_queries_row(demo_store)
    path = tmp_path / "labels.jsonl"
    first = _labeller_on(demo_store, settings, embedder, tmp_path, "none")
    path.write_text(first.decide(row).to_json() + "\n")
    again = _labeller_on(demo_store, settings, embedder, tmp_path, "longer")
    notes = []
    rows = label_file(again.pipeline, again.config, [("q1", row.question)], path, 1, notes.append, again.embed)
    assert [r.cypher for r in rows] == [render(long)] and [r.cypher for r in read_rows(path)] == [render(long)]
    assert any("deciding 1 labels again" in n["note"] for n in notes)
    # decided under the same settings: left as it is
    notes.clear()
    label_file(again.pipeline, again.config, [("q1", row.question)], path, 1, notes.append, again.embed)
    assert not notes and [r.cypher for r in read_rows(path)] == [render(long)]


def test_the_wording_check_can_compare_the_phrases_alone(demo_store, settings, embedder, tmp_path):
    """``wording_schema_words: false`` compares the verbaliser's phrases without the words of the
    labels and types the query names; rows decided before the setting existed count as decided
    with it at its old value (true), so they are not decided again."""
    from graphraft.synthesis.verbalise import Verbaliser, words_of
    from graphraft.training.self_training import label_file, query_wordings

    row, _, long = _two_queries_row(demo_store)
    names = {a.id: a.mention for a in row.anchors}
    phrases = Verbaliser().phrases_for(long, "Heron Press")[:8]
    schema = " ".join(words_of(long.steps[0].type))
    assert query_wordings(long, render(long), names, 8, schema_words=False) == phrases
    assert all(schema in text for text in query_wordings(long, render(long), names, 8))
    default = _labeller_on(demo_store, settings, embedder, tmp_path, "none")
    alone = _labeller_on(demo_store, settings, embedder, tmp_path, "none")
    alone.settings = alone.settings.model_copy(update={"wording_schema_words": False})
    with_words, without = default.decide(row).source, alone.decide(row).source
    assert without["decided"]["wording_schema_words"] is False and with_words["decided"]["wording_schema_words"]
    assert without["wording"] != with_words["wording"]
    # a row decided before the setting existed, under today's defaults: left as it is
    old = default.decide(row)
    old.source["decided"].pop("wording_schema_words")
    path = tmp_path / "labels.jsonl"
    path.write_text(old.to_json() + "\n")
    notes = []
    label_file(default.pipeline, default.config, [("q1", row.question)], path, 1, notes.append, default.embed)
    assert not notes and path.read_text() == old.to_json() + "\n"


def test_wording_center_compares_each_similarity_less_its_shapes_mean(demo_store, settings, embedder, tmp_path):
    """``wording_center``: a query's similarity counts less the mean of its shape's over the
    round. The top query that a closer-reading one would drop at slack 0 is kept once the other
    shape is one that reads close to every question (a high mean), and dropped again when not."""
    from graphraft.training.self_training import shape_of

    row, short, long = _two_queries_row(demo_store)
    labeller = _labeller_on(demo_store, settings, embedder, tmp_path, "none")
    labeller.settings = labeller.settings.model_copy(update={"wording_slack": 0.0, "wording_center": True})
    raw = labeller.decide(row)
    assert not raw.usable and "reads closer" in raw.reason  # the long query reads closer, raw
    top, other = (raw.source["queries"][i]["similarity"] for i in (0, 1))
    assert other > top
    # the long query's shape reads this close to every question: this one is not closer than usual
    centers = {shape_of(short): top - 0.05, shape_of(long): other}
    kept = labeller.decide(row, centers)
    assert kept.usable and kept.cypher == render(short)
    assert kept.source["wording"] == pytest.approx(0.05, abs=1e-4)
    assert kept.source["closest_other"] == pytest.approx(0.0, abs=1e-4)
    dropped = labeller.decide(row, {shape_of(short): top, shape_of(long): other - 0.05})
    assert not dropped.usable and "each less its shape's mean" in dropped.reason
    assert shape_of(short) != shape_of(long) and "id" not in shape_of(short)


def test_a_center_labelled_round_decides_every_row_on_the_rounds_means(demo_store, settings, embedder, tmp_path):
    """In a label file decided with ``wording_center``, each shape's center is the mean of the
    similarities its queries had to their questions over the file's rows (kept in the rows, so
    deciding again embeds nothing); every row is decided on them and the file rewritten."""
    from graphraft.training.self_training import closest_readings, label_file, query_wordings, shape_of

    row, short, long = _two_queries_row(demo_store)
    other = row.model_copy(update={"qid": "q2", "question": "which are " + render(short)})
    labeller = _labeller_on(demo_store, settings, embedder, tmp_path, "none")
    labeller.settings = labeller.settings.model_copy(update={"wording_slack": 0.0, "wording_center": True})
    labeller.config = labeller.config.model_copy(update={"self_train": labeller.settings})
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(r.to_json() + "\n" for r in (row, other)))
    notes = []
    questions = [("q1", row.question), ("q2", other.question)]
    rows = label_file(labeller.pipeline, labeller.config, questions, path, 1, notes.append, labeller.embed)
    assert any("less its shape's mean" in n["note"] for n in notes)
    names = {a.id: a.mention for a in row.anchors}
    texts = [query_wordings(p, render(p), names, 8, True) for p in (short, long)]
    expected = [closest_readings(embedder.embed, r.question, texts) for r in (row, other)]
    means = {shape_of(p): (expected[0][i] + expected[1][i]) / 2 for i, p in enumerate((short, long))}
    assert labeller.centers(rows) == pytest.approx(means, abs=1e-3)
    for decided, sims in zip(rows, expected):
        assert decided.source["decided"]["wording_center"] is True
        assert [q["similarity"] for q in decided.source["queries"]] == pytest.approx(sims, abs=1e-3)
        centered = [s - means[shape_of(p)] for s, p in zip(sims, (short, long))]
        assert decided.usable == (centered[1] - centered[0] <= 0)
        assert decided.source["wording"] == pytest.approx(centered[0], abs=1e-3)
    assert [r.to_json() for r in read_rows(path)] == [r.to_json() for r in rows]
    # the similarities kept in the rows: deciding again embeds nothing
    labeller.embed = lambda texts: pytest.fail("embedded again")
    again = label_file(labeller.pipeline, labeller.config, questions, path, 1, notes.append, labeller.embed)
    assert [r.to_json() for r in again] == [r.to_json() for r in rows]


@pytest.mark.parametrize("asks_for", ["long", "short", "neither"])
def test_asked_type_first_labels_with_the_query_ask_would_try_first(demo_store, settings, embedder, tmp_path, asks_for):
    """``asked_type_first``: the label is the first of L1's queries in `ask`'s order, the paths whose
    answers have the label the question asks for first (L1's order within), and L1's margin is
    taken within them; where none answers it, L1's top query as before."""
    from graphraft.synthesis.verbalise import words_of

    row, short, long = _two_queries_row(demo_store)
    targets = {"long": long.labels_of(long.target)[0], "short": short.labels_of(short.target)[0]}
    assert targets["long"] != targets["short"]
    asked = {**targets, "neither": "Heron Press"}[asks_for]  # the mention is left out: no label asked
    row = row.model_copy(update={"question": f"which {' '.join(words_of(asked))} did {row.question}"})
    plain = _labeller_on(demo_store, settings, embedder, tmp_path, "none")
    ordered = _labeller_on(demo_store, settings, embedder, tmp_path, "none")
    ordered.settings = ordered.settings.model_copy(update={"asked_type_first": True})
    before, after = plain.decide(row), ordered.decide(row)
    assert before.usable and before.cypher == render(short) and "asked_label" not in before.source
    assert after.source["decided"]["asked_type_first"] is True
    assert [q["cypher"] for q in after.source["queries"]] == [render(short), render(long)]  # as L1 wrote them
    if asks_for == "long":  # the rule puts the 2-hop query first: alone in its group, sure
        assert after.source["asked_label"] == targets["long"]
        assert after.usable and after.cypher == render(long) and after.hops == 2
        assert after.source["margin"] is None and after.source["second"] == render(short)
        assert after.hits == len({r["id"] for r in demo_store.read(executable(long, demo_store))}) > 0
    elif asks_for == "short":
        assert after.source["asked_label"] == targets["short"]
        assert after.cypher == render(short) and after.source["margin"] is None
    else:  # no label asked: L1's order and its margin (2.5 nats)
        assert after.cypher == render(short) and after.source["margin"] == 2.5
