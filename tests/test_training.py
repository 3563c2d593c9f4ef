"""Training with the tiny random model: loss goes down, only the completion is learned,
adapters reload under the constraint, metadata is checked, --resume continues."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import torch
from synthesis_rows import synthesis_row

from graphraft.cli.train import train_command
from graphraft.errors import ConfigurationError, InputFileError
from graphraft.graph.falkor import FalkorDBStore
from graphraft.graph.loaders import load_graph
from graphraft.graph.loaders.demo import demo_files
from graphraft.graph.loaders.files import read_nodes, read_relationships
from graphraft.graph.loaders.questions import read_question_file
from graphraft.inference.adapters import check_metadata, load_adapter, write_metadata
from graphraft.inference.decoding.trie import candidate_sequences
from graphraft.inference.generation import ConstrainedGenerator
from graphraft.inference.prompts import l1_messages, prompt_ids, schema_hint
from graphraft.synthesis.patterns import AnchorRef, Pattern, Step, render
from graphraft.synthesis.synthesizer import SynthesisConfig, Synthesizer, run_synthesis
from graphraft.training.config import TrainConfig
from graphraft.training.examples import L1TopQueries, l2_rows, read_synthesis, tokenize_example
from graphraft.training.targets import choose_targets, question_template
from graphraft.training.trainer import train

GRAPH = "training-demo"


@pytest.fixture(scope="module")
def demo_rows(server, tmp_path_factory):
    """The demo graph loaded and synthesised once for these tests."""
    from graphraft.synthesis.enumeration import PatternEnumerator
    from graphraft.synthesis.mentions import MarkedMentionExtractor
    from graphraft.synthesis.resolution import EntityResolver

    store = server.store(GRAPH)
    store.clear()
    nodes_file, rels_file, questions_file = demo_files()
    load_graph(store, read_nodes(nodes_file), read_relationships(rels_file))
    out = tmp_path_factory.mktemp("synthesis") / "demo.jsonl"
    synthesizer = Synthesizer(
        MarkedMentionExtractor(), EntityResolver(store), PatternEnumerator(store), SynthesisConfig()
    )
    run_synthesis(synthesizer, read_question_file(questions_file), out, meta={})
    yield out
    store.clear()


@pytest.fixture
def settings(graphraft_home, server):
    return server.settings(home=graphraft_home, graph=GRAPH)


def config(tmp_path, data, **overrides) -> TrainConfig:
    values = dict(
        task="l1",
        base_model="tiny-random",
        graph=GRAPH,
        data=data if isinstance(data, list) else [data],
        output_dir=tmp_path / "run",
        max_train_examples=48,
        validation_examples=8,
        epochs=2,
        batch_size=8,
        learning_rate=3e-3,
        max_length=192,
        save_steps=3,
        logging_steps=1,
        eval_batch_size=8,
        max_hops=2,
        lora={"r": 8, "alpha": 16, "dropout": 0.0},
    )
    values.update(overrides)
    return TrainConfig.model_validate(values)


def test_completion_only_mask_covers_exactly_the_trie_path(graphraft_home):
    from graphraft.models import load_tokenizer

    tokenizer = load_tokenizer("bundled", graphraft_home)
    query = 'MATCH (a:Book {id: "book-x"})-[:WRITTEN_BY]->(t:Author) RETURN DISTINCT t.id AS id'
    example = tokenize_example(tokenizer, l1_messages("who wrote [X]"), query)
    prompt = prompt_ids(tokenizer, l1_messages("who wrote [X]"))
    mask = example["completion_mask"]
    assert example["input_ids"][: len(prompt)] == prompt and mask[: len(prompt)] == [0] * len(prompt)
    learned = [t for t, m in zip(example["input_ids"], mask) if m]
    assert tuple(learned) == candidate_sequences(tokenizer, [query])[0]  # invariant 4
    assert learned[-1] == tokenizer.eos_token_id and all(mask[len(prompt) :])


def test_a_mix_of_files_gives_each_its_share_and_the_rest_equal_hops(tmp_path):
    from graphraft.training.config import DataSource
    from graphraft.training.examples import mixed_sample, read_sources

    def rows(prefix, hops, count):
        return [synthesis_row(f"{prefix}{h}-{i}", hops=h) for h in hops for i in range(count)]

    real, generated, paraphrased = rows("r", (1,), 10), rows("g", (1, 2, 3), 200), rows("p", (1,), 500)
    sources = [
        (DataSource(path="g.jsonl"), generated),
        (DataSource(path="r.jsonl", share=0.25), real),  # 10 rows for a share of 50: each 5 times
        (DataSource(path="p.jsonl", share=0.1), paraphrased),
    ]
    chosen = mixed_sample(sources, 200, seed=0)
    assert len(chosen) == 200 and mixed_sample(sources, 200, seed=0) == chosen  # reproducible
    by_source = {p: [r for r in chosen if r.qid[0] == p] for p in "rgp"}
    assert len(by_source["r"]) == 50 and all(by_source["r"].count(r) == 5 for r in real)
    assert len(by_source["p"]) == 20 and len({r.qid for r in by_source["p"]}) == 20
    assert sorted(sum(r.hops == h for r in by_source["g"]) for h in (1, 2, 3)) == [43, 43, 44]
    assert mixed_sample(sources, 200, seed=1) != chosen
    assert mixed_sample([(DataSource(path="g.jsonl"), generated)], None, 0) == generated  # no shares: every row
    # read from files: only the usable rows (status ok, a query), each file with its own
    for name, content in (("a.jsonl", generated[:3]), ("b.jsonl", real[:2])):
        dropped = synthesis_row("x", status="dropped", cypher=None, pattern=None)
        (tmp_path / name).write_text("".join(r.to_json() + "\n" for r in [*content, dropped]))
    read = read_sources([tmp_path / "a.jsonl", DataSource(path=tmp_path / "b.jsonl", share=0.5)])
    assert [(s.share, [r.qid for r in part]) for s, part in read] == [
        (None, ["g1-0", "g1-1", "g1-2"]),
        (0.5, ["r1-0", "r1-1"]),
    ]
    # two files whose questions share ids would share their targets: a clear error instead
    (tmp_path / "c.jsonl").write_text(generated[1].to_json() + "\n")
    with pytest.raises(InputFileError, match=r"c.jsonl: question id 'g1-1' is also in .*a.jsonl"):
        read_sources([tmp_path / "a.jsonl", tmp_path / "c.jsonl"])
    # the same of a file named on the config's own graph
    with pytest.raises(InputFileError, match=r"c.jsonl: question id 'g1-1' is also in .*a.jsonl"):
        read_sources([tmp_path / "a.jsonl", DataSource(path=tmp_path / "c.jsonl", graph="movies")], "movies")
    # files of two graphs (each generated from its own) may reuse ids: each keeps its own, by its graph
    read = read_sources([tmp_path / "a.jsonl", DataSource(path=tmp_path / "c.jsonl", graph="northwind")], "movies")
    assert [[r.qid for r in part] for _, part in read] == [["g1-0", "movies:g1-1", "g1-2"], ["northwind:g1-1"]]
    assert [r.question for r in read[1][1]] == [generated[1].question]


def test_targets_follow_the_wording_of_the_question_not_the_tie_break():
    def pattern(anchor, rel_type):
        return Pattern(AnchorRef(anchor, ("M",)), (Step(rel_type, True, ("P",)),), 1)

    def query(anchor, rel_type, hits=1):
        p = pattern(anchor, rel_type)
        return {"cypher": render(p), "pattern": p.to_dict(), "hops": 1, "hits": hits, "total": 1}

    def row(qid, question, best, alts=(), split="train", hits=1):
        alternatives = [{**query(qid, t, h), "precision": 1.0, "recall": 1.0} for t, h in alts]
        return synthesis_row(
            qid,
            question=question,
            mentions=[qid],
            split=split,
            hits=hits,
            alternatives=alternatives,
            cypher=render(pattern(qid, best)),
            pattern=pattern(qid, best).to_dict(),
        )

    directed, written = "DIRECTED_BY", "WRITTEN_BY"
    rows = [
        row("A", "who directed [A]", directed),
        row("B", "who directed [B]", directed),
        # the ranking put WRITTEN_BY first (fewer results), but the wording asks for the director
        row("C", "who directed [C]", written, [(directed, 1)]),
        row("D", "who wrote [D]", written, [(directed, 1)]),
        # an alternative with fewer hits is never a target
        row("E", "who directed [E]", written, [(directed, 0)], hits=1),
        # validation rows do not vote: three of them asking for WRITTEN_BY change nothing
        *[row(f"V{i}", f"who directed [V{i}]", written, [(directed, 1)], "validation") for i in range(3)],
    ]
    targets = choose_targets(rows)
    rendered = lambda qid, rel_type: render(pattern(qid, rel_type))  # noqa: E731
    assert targets["C"] == rendered("C", directed) and targets["D"] == rendered("D", written)
    assert targets["E"] == rendered("E", written)
    assert all(targets[f"V{i}"] == rendered(f"V{i}", directed) for i in range(3))
    assert question_template("who directed [Heat 2]", ["Heat 2"]) == "who directed _"
    # an unmarked question's mentions come from the lexical extractor, normalised
    assert question_template("Who directed Heat 2", ["heat 2"]) == "who directed _"


def test_l1_trains_lowers_the_loss_and_the_adapter_reloads_under_the_constraint(tmp_path, demo_rows, settings):
    summary = train(config(tmp_path, demo_rows), settings)
    assert summary["steps"] == 12 and summary["last_loss"] < summary["first_loss"]
    assert [round(h["epoch"]) for h in summary["history"]] == [1, 2]
    assert all(0.0 <= h["exact_match"] <= 1.0 and h["eval_loss"] > 0 for h in summary["history"])
    adapter = Path(summary["adapter"])
    assert check_metadata(adapter, "l1", "tiny-random")["renderer_version"] >= 1

    from graphraft.models import tiny_random_model

    base, tokenizer = tiny_random_model(settings.home, seed=0)
    model = load_adapter(base, adapter, "l1", "tiny-random")
    candidates = [
        'MATCH (a:Book {id: "x"})-[:WRITTEN_BY]->(t:Author) RETURN DISTINCT t.id AS id',
        'MATCH (a:Book {id: "x"})-[:HAS_GENRE]->(t:Genre) RETURN DISTINCT t.id AS id',
    ]
    results = ConstrainedGenerator(model, tokenizer).generate("who wrote [x]", candidates, num_beams=2)
    assert {r.cypher for r in results} <= set(candidates) and results
    # L2's training rows can open with this L1's query: always one of the candidates
    store = FalkorDBStore(GRAPH, port=settings.falkordb_port, password=settings.falkordb_secret())
    try:
        top = L1TopQueries(config(tmp_path, demo_rows, task="l2", l1_adapter=adapter), settings.home, store)
        assert top(["who wrote [x]", "what genre is [x]"], [candidates, candidates[1:]])[1] == candidates[1]
        assert top(["who wrote [x]"], [candidates])[0] in candidates
    finally:
        store.close()
    # the adapter changes the model's outputs
    ids = torch.tensor([prompt_ids(tokenizer, l1_messages("who wrote [x]"))])
    with torch.no_grad():
        adapted = model(input_ids=ids).logits
        with model.disable_adapter():
            plain = model(input_ids=ids).logits
    assert not torch.allclose(adapted, plain)


def test_a_metadata_mismatch_is_a_clear_error(tmp_path):
    write_metadata(tmp_path, "l1", "bundled")
    with pytest.raises(ConfigurationError, match="base_model is 'bundled', expected 'other-model'"):
        check_metadata(tmp_path, "l1", "other-model")
    with pytest.raises(ConfigurationError, match="task is 'l1', expected 'l2'"):
        check_metadata(tmp_path, "l2", "bundled")
    meta = json.loads((tmp_path / "graphraft_adapter.json").read_text())
    meta["renderer_version"] = 0
    (tmp_path / "graphraft_adapter.json").write_text(json.dumps(meta))
    with pytest.raises(ConfigurationError, match="renderer_version is 0"):
        check_metadata(tmp_path, "l1", "bundled")
    with pytest.raises(ConfigurationError, match="not a GraphRAFT adapter"):
        check_metadata(tmp_path / "nowhere", "l1", "bundled")


def test_resume_continues_from_a_checkpoint(tmp_path, demo_rows, settings):
    first = train(config(tmp_path, demo_rows, epochs=1), settings)  # 6 steps, checkpoints at 3 and 6
    assert first["steps"] == 6 and not first["resumed"]
    assert (tmp_path / "run" / "checkpoints" / "checkpoint-6").is_dir()
    second = train(config(tmp_path, demo_rows, epochs=2), settings, resume=True)
    assert second["resumed"] and second["steps"] == 12
    # only the steps after the checkpoint were run
    assert len(second["history"]) == 1 and round(second["history"][0]["epoch"]) == 2


def test_l2_trains_on_the_demo_graph_with_lora_on_the_top_layer_only(tmp_path, demo_rows, settings):
    from safetensors import safe_open

    # one batch of the same 8 examples, 4 times: the loss must go down
    summary = train(
        config(
            tmp_path,
            demo_rows,
            task="l2",
            max_train_examples=8,
            epochs=4,
            batch_size=8,
            max_length=768,
            evidence_tokens=300,
            evidence_details=0,
            l2_queries=2,
            lora={"r": 8, "alpha": 16, "dropout": 0.0, "top_layers": 1},
        ),
        settings,
    )
    assert summary["steps"] == 4 and summary["last_loss"] < summary["first_loss"]
    adapter = Path(summary["adapter"])
    meta = check_metadata(adapter, "l2", "tiny-random")
    assert (meta["evidence_tokens"], meta["evidence_details"], meta["queries"]) == (300, 0, 2)
    with safe_open(adapter / "adapter_model.safetensors", "pt") as weights:
        layers = {key.split(".layers.")[1].split(".")[0] for key in weights.keys()}  # noqa: SIM118 - safe_open is not iterable
    assert layers == {"1"}  # the tiny model has layers 0 and 1

    # `ask` with this L2 builds its evidence as L2 was trained: two patterns, names only
    from graphraft.inference.pipeline import GraphRAFT
    from graphraft.synthesis.mentions import MarkedMentionExtractor

    engine = GraphRAFT(
        settings.model_copy(update={"base_model": "tiny-random", "l2_adapter": adapter}),
        extractor=MarkedMentionExtractor(),
        beams=4,
    )
    try:
        answer = engine.ask("which genres did the writer of [The Burning Ferry] also write in")
        results = [{row["id"] for row in engine.store.read(q.cypher)} for q in answer.queries[:2]]
    finally:
        engine.close()
    assert len(answer.queries) == 4 and answer.evidence.count("Pattern ") == 2
    # L2 answers with what one of the two queries it read returned, exactly
    assert answer.selected_by == "l2" and {a.id for a in answer.answers} in results
    assert all(line.endswith(")") for line in answer.evidence.splitlines() if line.startswith("- "))


def test_l2_evidence_opens_with_l1s_query_and_always_holds_the_answers(demo_rows, settings, graphraft_home):
    from graphraft.models import load_tokenizer

    rows = [r for r in read_synthesis([demo_rows]) if r.hops == 2][:6]
    cfg = TrainConfig(
        task="l2",
        data=[demo_rows],
        output_dir="unused",
        l2_queries=3,
        evidence_tokens=400,
        evidence_details=0,
        max_hops=2,
    )
    tokenizer = load_tokenizer("tiny-random", graphraft_home)
    chosen_by_l1 = {}

    def l1_misses(questions, candidates):  # an L1 that never writes the best query
        for row, found in zip(rows, candidates):
            chosen_by_l1[row.qid] = next(c for c in sorted(found) if c != row.cypher)
        return [chosen_by_l1[row.qid] for row in rows]

    store = FalkorDBStore(GRAPH, port=settings.falkordb_port, password=settings.falkordb_secret())
    try:
        missed = l2_rows(store, rows, cfg, tokenizer, l1_misses)
        hit = l2_rows(store, rows, cfg, tokenizer, lambda questions, candidates: [r.cypher for r in rows])
    finally:
        store.close()
    for row, with_miss, with_hit in zip(rows, missed, hit):
        lines = with_miss["evidence"].splitlines()
        headers = [line for line in lines if line.startswith("Pattern ")]
        assert len(headers) == 3
        # the answers are in the evidence, and names stand alone (no details at evidence_details 0)
        assert all(f"- {name} (" in with_miss["evidence"] for name in row.answers)
        assert all(line.endswith(")") for line in lines if line.startswith("- "))
        # L1's pattern comes first: its relationship types, in order, are on the first line
        written = re.findall(r"\[r\d+:([^\]]+)\]", chosen_by_l1[row.qid])
        assert written and written == re.findall(r"\[:([^\]]+)\]", headers[0])
        best_types = re.findall(r"\[r\d+:([^\]]+)\]", row.cypher)
        assert best_types and re.findall(r"\[:([^\]]+)\]", with_hit["evidence"].splitlines()[0]) == best_types
        # the target lists the answers as the evidence does
        target = with_hit["target"].split("\n")
        assert sorted(target) == sorted(row.answers)
        assert sorted(target, key=lambda name: with_hit["evidence"].index(f"- {name} (")) == target


def test_train_command_says_what_it_does_before_and_while_training(
    tmp_path, demo_rows, server, graphraft_home, monkeypatch, capsys
):
    monkeypatch.setenv("GRAPHRAFT_HOME", str(graphraft_home))
    for key, value in server.env().items():
        monkeypatch.setenv(key, value)
    summary = train_command("l1", config=config(tmp_path, demo_rows, epochs=1, logging_steps=2))
    lines = capsys.readouterr().err.splitlines()
    # the slow part before the first step is announced, then the steps and the epoch's scores
    assert re.fullmatch(r"\d+ training and 8 validation questions; building the examples", lines[0])
    steps = [line for line in lines if line.startswith("step ")]
    assert steps[-1].startswith(f"step {summary['steps']}/{summary['steps']}: loss ")
    assert any(line.startswith("epoch 1.0000, eval_loss ") for line in lines)


def test_l2_with_an_l1_adapter_that_is_none_fails_before_any_work(tmp_path, demo_rows, settings):
    with pytest.raises(ConfigurationError, match="not a GraphRAFT adapter"):
        train(config(tmp_path, demo_rows, task="l2", l1_adapter=tmp_path), settings)
    assert not (tmp_path / "run").exists()


def test_data_without_validation_questions_is_a_clear_error(tmp_path, demo_rows, settings):
    rows = [json.loads(line) for line in demo_rows.read_text().splitlines()]
    only_train = tmp_path / "train-only.jsonl"
    only_train.write_text("".join(json.dumps({**row, "split": "train"}) + "\n" for row in rows))
    with pytest.raises(InputFileError, match=r"no validation examples in .*train-only\.jsonl"):
        train(config(tmp_path, only_train), settings)


def test_config_errors_name_the_file(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("task: l1\nbatch_size: many\n")
    with pytest.raises(InputFileError, match=r"bad\.yaml: "):
        TrainConfig.from_yaml(bad)
    with pytest.raises(InputFileError, match="config file not found"):
        TrainConfig.from_yaml(tmp_path / "none.yaml")


def test_padding_free_batches_give_the_loss_of_padded_batches(graphraft_home):
    """Padding-free training lays a batch's examples end to end with position ids restarting
    per example; the attention mask is then block-diagonal, so no example sees another and
    the loss equals the padded batch's. If attention crossed examples, it would not."""
    from trl.trainer.sft_trainer import DataCollatorForLanguageModeling

    from graphraft.models import tiny_random_model

    model, tokenizer = tiny_random_model(graphraft_home, seed=5)
    examples = []
    for question, query in (
        ("who wrote [A]", "MATCH (a) RETURN a"),
        ("which genre is [Some Long Title]", "MATCH (a)-[:HAS_GENRE]->(t) RETURN t.id"),
        ("where is it now", "MATCH (x) RETURN x.id AS id LIMIT 1"),
    ):
        example = tokenize_example(tokenizer, l1_messages(question), query)
        labels = [t if keep else -100 for t, keep in zip(example["input_ids"], example["completion_mask"])]
        examples.append({"input_ids": example["input_ids"], "labels": labels})
    assert len({len(e["input_ids"]) for e in examples}) == 3  # different lengths: padding where padded
    padded = DataCollatorForLanguageModeling(pad_token_id=tokenizer.pad_token_id)(examples)
    free = DataCollatorForLanguageModeling(pad_token_id=tokenizer.pad_token_id, padding_free=True)(examples)
    assert free["input_ids"].shape[0] == 1 and padded["input_ids"].shape[0] == 3
    with torch.no_grad():
        loss_padded = model(**padded).loss.item()
        # as SFTTrainer.compute_loss calls it: use_cache=False (with a cache, transformers does
        # not derive the block-diagonal mask from the position ids)
        loss_free = model(**free, use_cache=False).loss.item()
        # the same tokens with the examples' positions but one causal mask over all: cross-talk
        crossed = model(
            input_ids=free["input_ids"],
            labels=free["labels"],
            position_ids=free["position_ids"],
            attention_mask=torch.ones_like(free["input_ids"]),
        ).loss.item()
    assert loss_free == pytest.approx(loss_padded, abs=1e-5)
    assert abs(crossed - loss_padded) > 1e-3  # the check can tell


def test_shared_prefix_batches_give_the_loss_of_padded_batches(graphraft_home):
    """The shared beginning (system prompt and user header) is fed once; each example sees it
    and its own tokens only, at the positions it has alone, and labels are the next token of
    its own example: the loss equals the padded batch's, and the sequence is shorter."""
    from trl.trainer.sft_trainer import DataCollatorForLanguageModeling

    from graphraft.models import tiny_random_model
    from graphraft.training.packing import SharedPrefixCollator, shared_length

    model, tokenizer = tiny_random_model(graphraft_home, seed=7)
    examples = [
        tokenize_example(tokenizer, l1_messages(question), query)
        for question, query in (
            ("who wrote [A]", "MATCH (a) RETURN a"),
            ("which genre is [Some Long Title]", "MATCH (a)-[:HAS_GENRE]->(t) RETURN t.id"),
            ("which genre is [Ötzi]", "MATCH (x) RETURN x.id AS id LIMIT 1"),
        )
    ]
    shared = shared_length(examples)
    prompt = len(prompt_ids(tokenizer, l1_messages("")))
    assert 20 < shared < prompt  # the system prompt and the user header, not the question
    padded_in = [
        {
            "input_ids": e["input_ids"],
            "labels": [t if keep else -100 for t, keep in zip(e["input_ids"], e["completion_mask"])],
        }
        for e in examples
    ]
    padded = DataCollatorForLanguageModeling(pad_token_id=tokenizer.pad_token_id)(padded_in)
    batch = SharedPrefixCollator()(examples)
    assert batch["input_ids"].shape[1] == sum(len(e["input_ids"]) for e in examples) - 2 * shared
    mask = batch.pop("tree_mask")
    with torch.no_grad():
        loss_padded = model(**padded).loss.item()
        loss_shared = model(**batch, attention_mask=mask, use_cache=False).loss.item()
        causal = model(**batch, use_cache=False).loss.item()  # one causal mask over all: cross-talk
    assert loss_shared == pytest.approx(loss_padded, abs=1e-5)
    assert abs(causal - loss_padded) > 1e-3
    # the completion is the only thing learned: as many labels as completion tokens
    assert int((batch["shift_labels"] != -100).sum()) == sum(sum(e["completion_mask"]) for e in examples)


def test_shared_prefix_stops_before_a_label():
    from graphraft.training.packing import shared_length

    same = {"input_ids": [1, 2, 3, 4, 5], "completion_mask": [0, 0, 0, 1, 1]}
    assert shared_length([same, dict(same)]) == 2  # position 2 predicts token 3, a label
    other = {"input_ids": [1, 2, 9, 4, 5], "completion_mask": [0, 0, 0, 1, 1]}
    assert shared_length([same, other]) == 2
    assert shared_length([same]) == 2


def test_padded_padding_free_and_shared_prefix_training_take_the_same_steps(tmp_path, demo_rows, graphraft_home):
    """Through SFTTrainer (collators, TRL's fused LM head, the token counts that scale the
    loss), the three batch layouts give the same losses step after step: they differ in
    what they compute, not in what they learn."""
    from graphraft.models import tiny_random_model
    from graphraft.training.trainer import make_trainer

    rows = read_synthesis([demo_rows])[:24]
    targets = choose_targets(rows)
    losses = {}
    for layout in ("padded", "padding_free", "shared_prefix"):
        model, tokenizer = tiny_random_model(graphraft_home, seed=0)
        examples = [tokenize_example(tokenizer, l1_messages(r.question), targets[r.qid]) for r in rows]
        settings = config(
            tmp_path, demo_rows, padding_free=layout == "padding_free", shared_prefix=layout == "shared_prefix"
        )
        trainer = make_trainer(
            settings,
            model,
            tokenizer,
            examples,
            examples[:8],
            tmp_path / layout,
            max_steps=3,
            eval_strategy="no",
            save_strategy="no",
        )
        trainer.train()
        losses[layout] = [e["loss"] for e in trainer.state.log_history if "loss" in e]
    assert len(losses["padded"]) == 3 and losses["padded"][-1] != losses["padded"][0]
    assert losses["padding_free"] == pytest.approx(losses["padded"], rel=1e-4)
    assert losses["shared_prefix"] == pytest.approx(losses["padded"], rel=1e-4)


def test_l1_is_asked_with_the_prompt_it_was_trained_with_schema_line_included(tmp_path, demo_rows, settings, caplog):
    """``schema_hints``: training records the schema line in the adapter; ask, eval's baselines
    and L2's training give L1 that same prompt, token for token."""
    import json
    import shutil

    from graphraft.evaluation.runner import variants
    from graphraft.inference.adapters import METADATA_FILE, read_metadata
    from graphraft.inference.pipeline import GraphRAFT
    from graphraft.inference.prompts import schema_hint
    from graphraft.models import tiny_random_model
    from graphraft.training.examples import l1_examples

    adapter = Path(
        train(config(tmp_path, demo_rows, schema_hints=True, epochs=1, max_train_examples=16), settings)["adapter"]
    )
    rows = read_synthesis([demo_rows])[:4]
    targets = choose_targets(rows)
    store = FalkorDBStore(GRAPH, port=settings.falkordb_port, password=settings.falkordb_secret())
    model, tokenizer = tiny_random_model(settings.home, seed=0)

    def asking(folder):
        with_adapter = settings.model_copy(update={"l1_adapter": folder, "base_model": "tiny-random"})
        return GraphRAFT(with_adapter, store=store, model=model, tokenizer=tokenizer)

    try:
        recorded = read_metadata(adapter)["schema_hint"]
        assert recorded == schema_hint(store) and "WRITTEN_BY" in recorded
        pipeline = asking(adapter)
        for row, example in zip(rows, l1_examples(tokenizer, rows, targets, recorded)):  # as train() built them
            learned = [t for t, m in zip(example["input_ids"], example["completion_mask"]) if not m]
            assert pipeline.generator.prompt(row.question) == learned
        free, _ = variants(pipeline)  # eval's free-generation baseline reads it too
        assert free.generator.prompt(rows[0].question) == pipeline.generator.prompt(rows[0].question)

        # the recorded line wins over the graph's current one, and the difference is logged
        other = tmp_path / "other"
        shutil.copytree(adapter, other)
        meta = json.loads((other / METADATA_FILE).read_text())
        (other / METADATA_FILE).write_text(json.dumps({**meta, "schema_hint": "(:Book)-[:OLD]->(:Author)"}))
        with caplog.at_level("WARNING", logger="graphraft.inference.adapters"):
            stale = asking(other)
        assert stale.generator.schema_hint == "(:Book)-[:OLD]->(:Author)" and "schema changed" in caplog.text
        # an adapter trained without the line is asked without it
        (other / METADATA_FILE).write_text(json.dumps({**meta, "schema_hints": False}))
        assert asking(other).generator.prompt(rows[0].question) == prompt_ids(tokenizer, l1_messages(rows[0].question))
    finally:
        store.close()


def test_l1_learns_from_two_graphs_each_question_asked_on_its_own(tmp_path, demo_rows, settings, server):
    """A synthesis file may name the graph it was made on (a mapping in `data`): its questions'
    prompts carry that graph's schema line, and the per-epoch exact match asks each in its own
    graph's query space (a question of the language in the language's space), scoring paths by
    hop and the language apart."""
    from facts_graph import load

    from graphraft.graph.loaders.questions import read_question_file
    from graphraft.models import tiny_random_model
    from graphraft.synthesis.enumeration import PatternEnumerator
    from graphraft.synthesis.mentions import MarkedMentionExtractor
    from graphraft.synthesis.resolution import EntityResolver
    from graphraft.training.trainer import ExactMatch, build_examples

    facts = server.store("training-facts")
    facts.clear()
    load(facts)
    asked = [
        ("how many movies did [Keanu Reeves] act in", [[3]], "train"),
        ("when was [Tom Hanks] born", [[1956]], "train"),
        (
            "which movies did [Lana Wachowski] direct",
            [["The Matrix"], ["The Matrix Reloaded"], ["Cloud Atlas"]],
            "train",
        ),
        ("how many movies did [Tom Hanks] act in", [[2]], "validation"),
        ("when was [Carrie-Anne Moss] born", [[1967]], "validation"),
    ]
    questions = tmp_path / "facts.jsonl"
    questions.write_text(
        "".join(
            json.dumps({"id": f"facts-{i}", "question": q, "rows": rows, "split": split}) + "\n"
            for i, (q, rows, split) in enumerate(asked)
        )
    )
    items = list(read_question_file(questions))
    assert [item.qid for item in items] == [f"facts-{i}" for i in range(len(asked))]  # the file's own ids
    out = tmp_path / "facts-rows.jsonl"
    synthesizer = Synthesizer(
        MarkedMentionExtractor(), EntityResolver(facts), PatternEnumerator(facts), SynthesisConfig(max_hops=1)
    )
    run_synthesis(synthesizer, items, out, meta={})
    language = read_synthesis([out])
    assert len(language) == len(asked) and all(row.query is not None for row in language)
    demo_store = server.store(GRAPH)
    try:
        model, tokenizer = tiny_random_model(settings.home, seed=0)
        demo = read_synthesis([demo_rows])[:4]
        targets = choose_targets(demo + language)
        # each question's prompt carries its own graph's schema line
        stores = {GRAPH: demo_store, "training-facts": facts}
        graph_of = {**{id(r): GRAPH for r in demo}, **{id(r): "training-facts" for r in language}}
        hints = {g: schema_hint(s) for g, s in stores.items()}
        settings_ = config(tmp_path, demo_rows, max_length=400)
        examples, _ = build_examples(
            settings_,
            stores,
            graph_of,
            tokenizer,
            settings.home,
            demo + language,
            [],
            targets,
            lambda row: hints[graph_of[id(row)]],
        )
        prompts = [
            tokenizer.decode([t for t, m in zip(e["input_ids"], e["completion_mask"]) if not m]) for e in examples
        ]
        assert all("WRITTEN_BY" in p and "ACTED_IN" not in p for p in prompts[: len(demo)])
        assert all("ACTED_IN" in p and "WRITTEN_BY" not in p for p in prompts[len(demo) :])
        # validation: the language's questions in their graph's space, the paths among theirs
        file_of = {**{r.qid: "demo" for r in demo}, **{r.qid: "facts" for r in language}}
        judge = ExactMatch(demo_store, demo, targets, 2, 8, groups=[(facts, None, language)], file_of=file_of)
        result = judge(model, tokenizer)
        written = dict((row.qid, text) for row, text in judge.written)
        assert set(written) == {r.qid for r in demo + language}
        for row in language:  # a query of the facts graph: its anchors' ids or its labels
            assert re.search(r'\{id: "[pm]:|\(n0:(Person|Movie)\)', written[row.qid]), written[row.qid]
        for row in demo:
            assert written[row.qid] is None or "Person" not in written[row.qid]
        right = [written[r.qid] == targets[r.qid] for r in language]
        assert result["exact_match_language"] == sum(right) / len(right)
        # each file's own figure beside the mixed one
        assert result["exact_match_file_facts"] == sum(right) / len(right)
        demo_right = [written[r.qid] == targets[r.qid] for r in demo]
        assert result["exact_match_file_demo"] == sum(demo_right) / len(demo_right)
        assert {k for k in result if k.endswith("hop")} == {f"exact_match_{r.hops}hop" for r in demo}
        # and train() does the same from the config: a file that names its graph
        summary = train(
            config(
                tmp_path,
                [str(demo_rows), {"path": str(out), "graph": "training-facts"}],
                schema_hints=True,
                epochs=1,
                max_train_examples=16,
                max_length=400,
            ),
            settings,
        )
        last = summary["history"][-1]
        assert "exact_match_language" in last and "exact_match_1hop" in last
        # validation rows of both files: each file's figure, named by its file
        assert {k for k in last if k.startswith("exact_match_file_")} == {
            f"exact_match_file_{Path(demo_rows).stem}",
            f"exact_match_file_{out.stem}",
        }
    finally:
        demo_store.close()
        facts.clear()
        facts.close()


def test_l2s_evidence_for_a_question_of_the_language_holds_l1s_queries_and_the_pairs(store, graphraft_home):
    """A pair of the language: the evidence shows the pair's query and the others L1 writes
    (each by its Cypher, with its rows), in a shuffled order; the target is the pair's result as
    L2 writes it. A question whose queries all give the pair's result teaches no choice: left out."""
    from facts_graph import ACTED_IN, MOVIES, load

    from graphraft.inference.generation import GeneratedQuery
    from graphraft.models import load_tokenizer
    from graphraft.synthesis.language import Filter, Projection, Query, render_query
    from graphraft.synthesis.rows import AnchorRow
    from graphraft.training.examples import l2_language_rows

    load(store)
    keanu = AnchorRef("p:keanu", ("Person",))
    path = Pattern(keanu, (Step("ACTED_IN", True, ("Movie",)),), 1)
    count = Query(path, projection=Projection(aggregate="count"))
    movies = Query(path)
    recent = Query(path, (Filter(1, "released", ">", 2000),))
    anchor = AnchorRow(
        mention="Keanu Reeves", id="p:keanu", name="Keanu Reeves", labels=["Person"], method="exact", score=1.0
    )

    def pair(qid, query):
        fields = dict(question="how many movies did Keanu Reeves act in", anchors=[anchor], query=query.to_dict())
        return synthesis_row(qid, cypher=render_query(query), pattern=path.to_dict(), **fields)

    rows = [pair("count", count), pair("same", movies)]
    written = {"count": [movies, count, recent], "same": [movies, Query(path, limit=99)]}  # L1's, best first

    def l1_queries(asked):
        return [[GeneratedQuery(render_query(q), -i, i, q) for i, q in enumerate(written[r.qid])] for r in asked]

    cfg = TrainConfig(task="l2", data=["unused"], output_dir="unused", l2_queries=3, evidence_tokens=600)
    tokenizer = load_tokenizer("tiny-random", graphraft_home)
    made = l2_language_rows(store, rows, cfg, tokenizer, l1_queries)
    # "same": the pair's query and L1's other one return the same movies: nothing to choose
    assert [m["qid"] for m in made] == ["count"]
    evidence = made[0]["evidence"]
    headers = [line.removeprefix("Pattern ")[3:] for line in evidence.splitlines() if line.startswith("Pattern ")]
    assert sorted(headers) == sorted(map(render_query, (count, movies, recent)))
    keanus = [m for p, m in ACTED_IN if p == "p:keanu"]
    assert made[0]["target"] == f"count: {len(keanus)}" and f"- count: {len(keanus)}" in evidence
    recent_titles = [MOVIES[m]["title"] for m in keanus if MOVIES[m]["released"] > 2000]
    assert all(f"- {title} (Movie)" in evidence for title in recent_titles)


def test_l2_on_questions_of_the_language_without_an_l1_adapter_is_a_clear_error(tmp_path, demo_rows, settings):
    """L2's evidence for a pair of the language shows L1's queries: without an L1 adapter the
    trainer says so before any example is made."""
    from graphraft.synthesis.language import Projection, Query, render_query

    path = Pattern(AnchorRef("p:keanu", ("Person",)), (Step("ACTED_IN", True, ("Movie",)),), 1)
    query = Query(path, projection=Projection(aggregate="count"))
    data = tmp_path / "pairs.jsonl"
    data.write_text(
        "\n".join(
            synthesis_row(f"q{i}", cypher=render_query(query), pattern=path.to_dict(), query=query.to_dict()).to_json()
            for i in range(20)
        )
        + "\n"
    )
    with pytest.raises(ConfigurationError, match="L2 on questions of the language needs l1_adapter"):
        train(config(tmp_path, data, task="l2"), settings)
