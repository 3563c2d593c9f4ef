"""Solved questions in L1's prompt (``prompt_examples``): the nearest training questions by the
real bundled MiniLM, never the asked question itself nor a validation question; the adapter
keeps them, and ask, eval's baselines and L2's training read the prompt L1 was trained on."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_training import GRAPH, config, demo_rows, settings  # noqa: F401  (fixtures)

from graphraft.errors import ConfigurationError
from graphraft.inference.exemplars import EXEMPLARS_FILE, Exemplar, Exemplars, question_form
from graphraft.inference.prompts import EXAMPLES_HEADER, l1_messages

POOL = [
    Exemplar(question="which movies did Keanu Reeves act in", cypher="MATCH ... ACTED_IN", graph="movies"),
    Exemplar(question="when was Tom Hanks born", cypher="MATCH ... born", graph="movies"),
    Exemplar(question="how many movies did Meg Ryan act in", cypher="MATCH ... count", graph="movies"),
    Exemplar(question="which products are in the category Beverages", cypher="MATCH ... PART_OF", graph="shop"),
    Exemplar(question="what is the unit price of Chai", cypher="MATCH ... unitPrice", graph="shop"),
]


def test_the_nearest_solved_questions_come_nearest_last_never_the_question_itself(embedder):
    exemplars = Exemplars(POOL, 2, embedder.embed)
    acted, born = exemplars.nearest(["which movies did Tom Hanks act in", "when was Keanu Reeves born"])
    assert [e.question for e in acted][-1] == "which movies did Keanu Reeves act in"
    assert [e.question for e in born][-1] == "when was Tom Hanks born"
    assert len(acted) == len(born) == 2
    # the question itself (as in training, where the pool holds it) is never shown, whatever its case
    (shown,) = exemplars.nearest(["When was Tom Hanks born?".rstrip("?")])
    assert "when was Tom Hanks born" not in [e.question for e in shown]
    # a graph's questions only, when the pool has any of that graph
    (shop,) = exemplars.for_graph("shop").nearest(["which movies did Tom Hanks act in"])
    assert {e.graph for e in shop} == {"shop"}
    assert exemplars.for_graph("elsewhere").pool == POOL


def test_the_pool_read_back_gives_the_same_neighbours(tmp_path, embedder):
    exemplars = Exemplars(POOL, 3, embedder.embed)
    exemplars.save(tmp_path)
    calls = []

    def counting(texts):
        calls.append(list(texts))
        return embedder.embed(texts)

    again = Exemplars.load(tmp_path, 3, counting)
    asked = ["how many films has Tom Hanks acted in", "the price of Chang"]
    assert again.nearest(asked) == exemplars.nearest(asked)
    assert calls == [[question_form(q) for q in asked]]  # the pool's vectors were read back, not made again
    (tmp_path / EXEMPLARS_FILE).unlink()
    with pytest.raises(ConfigurationError, match=EXEMPLARS_FILE):
        Exemplars.load(tmp_path, 3, counting)


def test_the_prompt_shows_the_solved_questions_before_the_question():
    shown = POOL[:2]
    user = l1_messages("who directed The Matrix", examples=shown)[1]["content"]
    assert user.startswith(EXAMPLES_HEADER)
    assert user.index(POOL[0].cypher) < user.index(POOL[1].question) < user.index("Question: who directed The Matrix")
    assert user.endswith("Question: who directed The Matrix")
    # without them the prompt is the one adapters were trained on before
    assert l1_messages("who directed The Matrix", examples=())[1]["content"] == "who directed The Matrix"


def test_l1_is_asked_with_the_solved_questions_it_was_trained_with(tmp_path, demo_rows, settings):  # noqa: F811
    """Training with ``prompt_examples`` keeps the pool (training questions only) in the adapter;
    ask, eval's free baseline and L2's training show each question the same neighbours, token
    for token, as training showed a question of the same text."""
    from graphraft.evaluation.runner import variants
    from graphraft.graph.falkor import FalkorDBStore
    from graphraft.inference.adapters import METADATA_FILE, read_metadata
    from graphraft.inference.pipeline import GraphRAFT
    from graphraft.inference.prompts import prompt_ids
    from graphraft.models import tiny_random_model
    from graphraft.training.examples import L1TopQueries, read_synthesis, shown_for, training_exemplars
    from graphraft.training.targets import choose_targets
    from graphraft.training.trainer import train

    cfg = config(tmp_path, demo_rows, prompt_examples=2, epochs=1, max_train_examples=16, max_length=384)
    adapter = Path(train(cfg, settings)["adapter"])
    rows = read_synthesis([demo_rows])
    pool = [json.loads(line) for line in (adapter / EXEMPLARS_FILE).read_text().splitlines()]
    training = {r.question for r in rows if r.split != "validation"}
    assert pool and {e["question"] for e in pool} == training  # every training question, no validation one
    assert read_metadata(adapter)["prompt_examples"] == 2

    store = FalkorDBStore(GRAPH, port=settings.falkordb_port, password=settings.falkordb_secret())
    model, tokenizer = tiny_random_model(settings.home, seed=0)
    try:
        with_adapter = settings.model_copy(update={"l1_adapter": adapter, "base_model": "tiny-random"})
        pipeline = GraphRAFT(with_adapter, store=store, model=model, tokenizer=tokenizer)
        targets = choose_targets(rows)
        graph_of = {id(r): GRAPH for r in rows}
        pooled = training_exemplars([(None, rows)], graph_of, targets, 2, settings.home)
        asked = [r for r in rows if r.split == "validation"][:3] + [r for r in rows if r.split != "validation"][:2]
        for row, shown in zip(asked, shown_for(pooled, asked, graph_of)):
            assert len(shown) == 2 and row.question not in [e.question for e in shown]
            expected = prompt_ids(tokenizer, l1_messages(row.question, None, shown))
            assert pipeline.generator.prompt(row.question) == expected
            assert shown[-1].question in pipeline.tokenizer.decode(expected)
        free, _ = variants(pipeline)
        assert free.generator.prompt(asked[0].question) == pipeline.generator.prompt(asked[0].question)
        l2_side = L1TopQueries(cfg.model_copy(update={"l1_adapter": adapter}), settings.home, store)
        assert l2_side._model()[3].nearest([asked[0].question]) == pipeline.generator.exemplars.nearest(
            [asked[0].question]
        )

        # an adapter whose pool is gone says so in one line; one trained without shows none
        other = tmp_path / "other"
        shutil.copytree(adapter, other)
        (other / EXEMPLARS_FILE).unlink()
        with pytest.raises(ConfigurationError, match=r"exemplars\.jsonl is missing"):
            GraphRAFT(
                settings.model_copy(update={"l1_adapter": other, "base_model": "tiny-random"}),
                store=store,
                model=model,
                tokenizer=tokenizer,
            )
        meta = json.loads((other / METADATA_FILE).read_text())
        (other / METADATA_FILE).write_text(json.dumps({**meta, "prompt_examples": 0}))
        plain = GraphRAFT(
            settings.model_copy(update={"l1_adapter": other, "base_model": "tiny-random"}),
            store=store,
            model=model,
            tokenizer=tokenizer,
        )
        assert plain.generator.prompt(asked[0].question) == prompt_ids(tokenizer, l1_messages(asked[0].question))
    finally:
        store.close()
