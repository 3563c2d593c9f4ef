"""Cold start (`synthesize --from-graph`): questions generated from the demo graph alone, on the
real embedded server."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from graphraft.errors import InputFileError
from graphraft.graph.loaders import load_graph
from graphraft.graph.records import NodeRecord, RelationshipRecord
from graphraft.synthesis.from_graph import GenerationConfig, GraphQuestionGenerator, ShapePrior
from graphraft.synthesis.from_graph import generate as write_generated
from graphraft.synthesis.mentions import AutoExtractor, LexicalExtractor
from graphraft.synthesis.paraphrase import ChatParaphraser, keeps_entities
from graphraft.synthesis.patterns import AnchorRef, Pattern, Step, executable
from graphraft.synthesis.resolution import EntityResolver
from graphraft.synthesis.rows import SynthesisRow
from graphraft.synthesis.verbalise import READINGS, Phrases, Verbaliser, agent_noun, plural, singular, words_of

from local_endpoint import chat_completion, json_endpoint

TINY_GRAPH = "test_from_graph_tiny"  # one label, one relationship type


def generate(store, tmp_path, name="out.jsonl", paraphraser=None, **config):
    """The rows `synthesize --from-graph` writes, and the generator (checking each question with
    the anchoring `ask` does)."""
    asking = (AutoExtractor(lambda: LexicalExtractor.from_store(store)), EntityResolver(store))
    generator = GraphQuestionGenerator(store, GenerationConfig(**config), paraphraser, asking)
    write_generated(generator, tmp_path / name)
    return [json.loads(line) for line in (tmp_path / name).read_text().splitlines()], generator


def test_answers_are_what_the_pattern_returns_and_targets_are_ask_candidates(demo_store, tmp_path):
    rows, generator = generate(demo_store, tmp_path, count=90, seed=3)
    kept = [r for r in rows if r["status"] == "ok"]
    assert len(rows) == 90 and len(kept) >= 85
    assert all(set(row) == set(SynthesisRow.model_fields) for row in rows)  # the writer sets every field
    for row in kept:
        returned = [r["id"] for r in demo_store.read(executable(Pattern.from_dict(row["pattern"]), demo_store))]
        assert sorted(row["answer_ids"]) == sorted(returned) and 1 <= len(returned) <= 20
        names = {n["id"]: n["properties"]["name"] for n in demo_store.nodes_by_id(returned)}
        assert sorted(row["answers"]) == sorted(names.values())
        assert row["cypher"] in generator.candidates(row["question"])  # the anchoring `ask` does, its candidates
        assert Pattern.from_dict(row["pattern"]).hops == row["hops"]
        for anchor in row["anchors"]:  # the question names its anchors
            assert anchor["name"] in row["question"]
    # equal shares per hop length after the bridges (10 %); both marked and unmarked questions
    assert Counter(r["hops"] for r in rows) == {1: 27, 2: 27 + 9, 3: 27}
    assert sum(bool(Pattern.from_dict(r["pattern"]).end_anchor) for r in rows) == 9
    assert {r["source"]["marked"] for r in rows} == {True, False}
    # spread over the schema: many relationship types, several question forms
    types = {s["type"] for r in rows for s in r["pattern"]["steps"]}
    assert len(types) >= 6 and len({r["source"]["form"] for r in rows}) >= 4
    assert {r["split"] for r in rows} == {"train", "validation"}


def test_a_shape_prior_makes_the_questions_follow_the_shapes_people_asked(demo_store, tmp_path):
    """`--shape-prior`: the shapes of rows people asked (self-training's labels) set the hop
    lengths' shares and which shapes come up most; a shape never asked still comes up."""
    even, _ = generate(demo_store, tmp_path, "even.jsonl", count=60, seed=1, bridge_share=0.0)
    asked_shape = Pattern.from_dict(next(r for r in even if r["hops"] == 1)["pattern"]).shape
    asked = [r for r in even if r["hops"] == 1 and Pattern.from_dict(r["pattern"]).shape == asked_shape]
    other = next(r for r in even if r["hops"] == 3)
    prior = tmp_path / "labels.jsonl"  # 1-hop questions of one shape asked far more than a 3-hop one
    prior.write_text("".join(json.dumps(r) + "\n" for r in asked * 8 + [other]))
    rows, _ = generate(demo_store, tmp_path, "prior.jsonl", count=60, seed=1, bridge_share=0.0, shape_prior=prior)
    hops = Counter(r["hops"] for r in rows)
    # shares (smoothed by one): 1-hop (8 x asked + 1), 2-hop 1, 3-hop 2
    assert hops[1] > 40 and hops[2] < 10 and hops[2] >= 1 and hops[1] > Counter(r["hops"] for r in even)[1]
    shapes = Counter(Pattern.from_dict(r["pattern"]).shape for r in rows if r["hops"] == 1)
    assert shapes.most_common(1)[0][0] == asked_shape and len(shapes) > 1
    # the questions start from nodes of the labels people asked about more often than in turn
    label = Pattern.from_dict(asked[0]["pattern"]).anchor.labels[0]
    share = lambda rows: sum(label in r["pattern"]["anchor"]["labels"] for r in rows) / len(rows)  # noqa: E731
    assert share(rows) > 1.5 * share(even)
    # prior_hops false: the hop lengths share equally (as without a prior), the prior still
    # choosing the shapes within each (labels L1 made itself lean to short queries)
    shapes_only, _ = generate(
        demo_store, tmp_path, "shapes.jsonl", count=60, seed=1, bridge_share=0.0, shape_prior=prior, prior_hops=False
    )
    assert Counter(r["hops"] for r in shapes_only) == Counter(r["hops"] for r in even)
    one_hop = Counter(Pattern.from_dict(r["pattern"]).shape for r in shapes_only if r["hops"] == 1)
    assert one_hop.most_common(1)[0][0] == asked_shape
    # smoothing by the mean count of the two shapes asked: the shapes never asked come up far more
    # often, the one asked most still first
    mean = (8 * len(asked) + 1) / 2
    assert ShapePrior.read(prior).weight("(:Never)") == 1 and ShapePrior.read(prior, 1.0).weight("(:Never)") == mean
    assert ShapePrior.read(prior, 1.0).weight(asked_shape) == 8 * len(asked) + mean
    smoothed, _ = generate(
        demo_store,
        tmp_path,
        "smoothed.jsonl",
        count=60,
        seed=1,
        bridge_share=0.0,
        shape_prior=prior,
        prior_hops=False,
        prior_smoothing=1.0,
    )
    smoothed_one_hop = Counter(Pattern.from_dict(r["pattern"]).shape for r in smoothed if r["hops"] == 1)
    assert smoothed_one_hop.most_common(1)[0][0] == asked_shape
    others = lambda counts: sum(n for shape, n in counts.items() if shape != asked_shape)  # noqa: E731
    assert smoothed_one_hop[asked_shape] < one_hop[asked_shape] and others(smoothed_one_hop) > others(one_hop)
    assert GenerationConfig(shape_prior=prior, prior_smoothing=1.0).fingerprint()["prior_smoothing"] == 1.0
    assert "prior_smoothing" not in GenerationConfig(shape_prior=prior).fingerprint()  # the default, as before
    # another prior is other settings: not mixed into the same file
    assert GenerationConfig(shape_prior=prior).fingerprint() != GenerationConfig().fingerprint()
    assert (
        GenerationConfig(shape_prior=prior, prior_hops=False).fingerprint()
        != GenerationConfig(shape_prior=prior).fingerprint()
    )
    assert not {"shape_prior", "prior_hops"} & set(GenerationConfig().fingerprint())
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(InputFileError, match="no usable rows to learn the questions' shapes from"):
        generate(demo_store, tmp_path, "none.jsonl", count=6, shape_prior=empty)


def test_a_prior_without_types_spreads_a_path_over_the_types_its_labels_used(store, tmp_path):
    """`prior_types` false: the labels (L1's own) say how often a path's labels and directions are
    asked, not which relationship type: the types the labels used for it come up evenly."""
    films = [NodeRecord(f"f{i}", ("Film",), {"name": f"Film Number {i}"}) for i in range(12)]
    people = [NodeRecord(f"p{i}", ("Person",), {"name": f"Person Number {i}"}) for i in range(12)]
    links = [RelationshipRecord(f"f{i}", f"p{i}", "DIRECTED_BY") for i in range(12)]
    links += [RelationshipRecord(f"f{i}", f"p{(i + 1) % 12}", "STARRED") for i in range(12)]
    load_graph(store, films + people, links)
    plain, _ = generate(store, tmp_path, "plain.jsonl", count=24, seed=0, max_hops=1, bridge_share=0.0)
    shape = lambda row: Pattern.from_dict(row["pattern"]).shape  # noqa: E731
    forward = {
        t: next(r for r in plain if shape(r) == f"(:Film)-[:{t}]->(*:Person)") for t in ("DIRECTED_BY", "STARRED")
    }
    prior = tmp_path / "labels.jsonl"  # the director's type asked ten times as often as the other
    prior.write_text("".join(json.dumps(r) + "\n" for r in [forward["DIRECTED_BY"]] * 10 + [forward["STARRED"]]))
    asked = {}
    for types in (True, False):
        rows, _ = generate(
            store,
            tmp_path,
            f"types-{types}.jsonl",
            count=24,
            seed=0,
            max_hops=1,
            bridge_share=0.0,
            shape_prior=prior,
            prior_types=types,
        )
        asked[types] = Counter(
            s["type"] for r in rows if r["pattern"]["steps"][0]["outgoing"] for s in r["pattern"]["steps"]
        )
    assert asked[True]["DIRECTED_BY"] > 3 * asked[True]["STARRED"]  # weights 11 and 2
    assert asked[False]["DIRECTED_BY"] > 3  # weights 6.5 and 6.5: even
    assert abs(asked[False]["DIRECTED_BY"] - asked[False]["STARRED"]) <= 1
    assert sum(asked[False].values()) == sum(asked[True].values())  # the path as often either way
    assert (
        GenerationConfig(shape_prior=prior, prior_types=False).fingerprint()
        != GenerationConfig(shape_prior=prior).fingerprint()
    )
    assert "prior_types" not in GenerationConfig(shape_prior=prior).fingerprint()  # the default, as before


def test_without_lemminflect_the_passive_phrases_stay(monkeypatch):
    from graphraft.synthesis import verbalise

    monkeypatch.setattr(verbalise, "_lemminflect", lambda: None)
    phrases = Verbaliser().step_phrases(Step("DIRECTED_BY", True, ("Person",)), "[X]")
    assert phrases == ["the person that [X] was directed by", "the persons [X] was directed by"]


def test_a_types_voice_from_englishs_tables():
    """A one-word verb type's passive is its participle; a type that opens with a word in its
    base form (or no verb) reads as a noun, "is part of"; without the tables, no passive."""
    from graphraft.synthesis import verbalise

    assert [verbalise.participle(t) for t in ("WROTE", "ORDERS", "DIRECTED")] == ["written", "ordered", "directed"]
    assert verbalise.participle("ACTED_IN") is None and verbalise.participle("IS") is None
    assert [verbalise.reads_as_verb(t) for t in ("ACTED_IN", "REPORTS_TO", "PART_OF", "MEMBER_OF")] == [
        True,
        True,
        False,
        False,
    ]


def test_the_same_seed_gives_the_same_questions(demo_store, tmp_path):
    strip = lambda rows: [{k: v for k, v in r.items() if k != "timings"} for r in rows]  # noqa: E731
    first, _ = generate(demo_store, tmp_path, "a.jsonl", count=30, seed=7)
    again, _ = generate(demo_store, tmp_path, "b.jsonl", count=30, seed=7)
    other, _ = generate(demo_store, tmp_path, "c.jsonl", count=30, seed=8)
    assert strip(first) == strip(again)
    assert [r["question"] for r in first] != [r["question"] for r in other]


def test_a_graph_with_one_label_and_one_relationship_type(server, tmp_path):
    store = server.store(TINY_GRAPH)
    store.clear()
    try:
        people = [NodeRecord(f"p{i}", ("Person",), {"name": f"Person Number {i}"}) for i in range(12)]
        knows = [RelationshipRecord(f"p{i}", f"p{(i * 5 + 1) % 12}", "KNOWS") for i in range(12)]
        load_graph(store, people, knows)
        rows, _ = generate(store, tmp_path, count=12, seed=0)
        kept = [r for r in rows if r["status"] == "ok"]
        assert len(kept) >= 10
        assert all("know" in r["question"] and "person" in r["question"] for r in kept)
        for row in kept:
            assert sorted(row["answer_ids"]) == sorted(r["id"] for r in store.read(row["cypher"]))
    finally:
        store.clear()


def test_words_come_from_the_schema_and_a_phrase_file_replaces_them(tmp_path):
    assert words_of("DIRECTED_BY") == ["directed", "by"] and words_of("releaseYear") == ["release", "year"]
    assert [plural(w) for w in ("city", "genre", "match", "day")] == ["cities", "genres", "matches", "days"]
    assert [plural(w) for w in ("tags", "starred actors", "status")] == ["tags", "starred actors", "statuses"]
    assert [singular(w) for w in ("starred actors", "countries", "boxes", "genre", "movies")] == [
        "starred actor",
        "country",
        "box",
        "genre",
        "movie",
    ]
    verbaliser = Verbaliser()
    # there and back through one type: also read as sharing, in the type's noun or its agent noun
    for kind, label, noun in (("STARRED_ACTORS", "Person", "starred actor"), ("DIRECTED_BY", "Person", "director")):
        shared = Pattern(AnchorRef("m", ("Movie",)), (Step(kind, True, (label,)), Step(kind, False, ("Movie",))), 2)
        phrases = verbaliser.phrases_for(shared, "[X]")
        assert phrases[0] == "the movies with starred actors the starred actors of [X]" or kind != "STARRED_ACTORS"
        assert {f"the movies that share a {noun} with [X]", f"the movies with the same {noun} as [X]"} <= set(phrases)
        assert len(phrases) == len(set(phrases)) >= 4
    assert "the movies whose director also directed [X]" in phrases  # a verb: "also"
    assert "the other movies of the directors of [X]" in phrases
    # a type named by a plural noun lists members: the actors in X, the movies they are also in
    assert {"the other movies of the starred actors of [X]", "the movies the starred actors in [X] are also in"} <= set(
        verbaliser.phrases_for(
            Pattern(
                AnchorRef("m", ("Movie",)),
                (Step("STARRED_ACTORS", True, ("Person",)), Step("STARRED_ACTORS", False, ("Movie",))),
                2,
            ),
            "[X]",
        )
    )
    assert not any(" in [X] " in p or p.endswith(" is in") for p in phrases)  # DIRECTED_BY lists none
    # from the person: what they share is the movie (not a "starred actor"), and they are read by
    # what they are to it; where the type reads as a verb, as the ones doing it together
    for kind, role in (("STARRED_ACTORS", "starred actors"), ("DIRECTED_BY", "directors")):
        costar = Pattern(AnchorRef("p", ("Person",)), (Step(kind, False, ("Movie",)), Step(kind, True, ("Person",))), 2)
        phrases = verbaliser.phrases_for(costar, "[X]")
        assert {"the persons that share a movie with [X]", f"the {role} that share a movie with [X]"} <= set(phrases)
        assert not any("share a starred actor" in p or "share a director" in p for p in phrases)
    assert {
        "the persons that directed movies with [X]",
        "the persons [X] directed movies with",
        "the co-directors of [X]",
    } <= set(phrases)
    step = lambda t, out, label: Step(t, out, (label,))  # noqa: E731
    # ... anywhere in a longer chain, among the earlier steps' readings (kept to READINGS) and the target's
    directed_then_genre = Pattern(
        AnchorRef("m", ("Movie",)),
        (step("DIRECTED_BY", True, "Person"), step("DIRECTED_BY", False, "Movie"), step("HAS_GENRE", True, "Genre")),
        target=3,
    )
    phrases = verbaliser.phrases_for(directed_then_genre, "[X]")
    assert phrases[0] == "the genre of the movies directed by the person that [X] was directed by"
    readings = ("that share a director with [X]", "with the same director as [X]", "whose director also directed [X]")
    for reading in readings:
        assert f"the genres of the movies {reading}" in phrases
    shared_last = Pattern(
        AnchorRef("p", ("Person",)),
        (step("WRITTEN_BY", False, "Movie"), step("DIRECTED_BY", True, "Person"), step("DIRECTED_BY", False, "Movie")),
        target=3,
    )
    shared_last_phrases = verbaliser.phrases_for(shared_last, "[X]")
    assert "the movies that share a director with the movies written by [X]" in shared_last_phrases
    not_shared = Pattern(AnchorRef("m", ("Movie",)), directed_then_genre.steps[:1] + directed_then_genre.steps[2:], 2)
    assert not any("share" in p or "same" in p for p in verbaliser.phrases_for(not_shared, "[X]"))
    assert verbaliser.step_phrases(step("DIRECTED_BY", False, "Movie"), "[X]")[0] == "the movies directed by [X]"
    assert verbaliser.step_phrases(step("HAS_GENRE", True, "Genre"), "[X]")[0] == "the genre of [X]"
    assert verbaliser.step_phrases(step("IN_LANGUAGE", False, "Movie"), "[X]")[0] == "the movies in language [X]"
    assert verbaliser.step_phrases(step("WON", True, "Award"), "[X]")[0] == "the awards [X] won"
    assert "the starred actors in [X]" in verbaliser.step_phrases(step("STARRED_ACTORS", True, "Person"), "[X]")
    assert "the movies [X] is in" in verbaliser.step_phrases(step("STARRED_ACTORS", False, "Movie"), "[X]")
    assert verbaliser.step_phrases(step("RELEASE_YEAR", True, "Year"), "[X]") == ["the release year of [X]"]
    chain = Pattern(
        AnchorRef("p", ("Person",)),
        (step("DIRECTED_BY", False, "Movie"), step("HAS_GENRE", True, "Genre")),
        target=2,
    )
    # a participle with "by" also reads in the active voice and as its agent noun
    directed = verbaliser.step_phrases(step("DIRECTED_BY", True, "Person"), "[X]")
    assert directed[0] == "the person that [X] was directed by"  # the first reading as before
    assert {"the person that directed [X]", "the director of [X]", "the directors of [X]"} <= set(directed)
    assert "the movies [X] wrote" in verbaliser.step_phrases(step("WRITTEN_BY", False, "Movie"), "[X]")
    assert "the movies whose writer is [X]" in verbaliser.step_phrases(step("WRITTEN_BY", False, "Movie"), "[X]")
    assert verbaliser.step_phrases(step("BORN_IN", True, "City"), "[X]") == [
        "the city that [X] was born in",
        "the cities [X] was born in",
    ]
    assert [agent_noun(v) for v in ("write", "direct", "own", "supply", "ship")] == [
        "writer",
        "director",
        "owner",
        "supplier",
        "shipper",
    ]
    one = Pattern(AnchorRef("p", ("Person",)), (step("DIRECTED_BY", False, "Movie"),), 1)
    assert "which movies did [X] direct" in verbaliser.questions(one, "[X]")
    # the earlier steps in each of their readings, the first reading first
    read = verbaliser.phrases_for(chain, "[X]")
    assert (
        read[0] == "the genre of the movies directed by [X]"
        and "the genre of the movies that were directed by [X]" in read
    )
    assert len(read) == len(set(read)) == 8  # 4 readings of the first step, 2 phrases of the second
    longer = Pattern(chain.anchor, (*chain.steps, step("HAS_GENRE", False, "Movie")), 3)
    # the readings stay bounded: READINGS of the steps before the last, each in the last step's 2
    # phrases, and (genre there and back) 3 sharing readings of each of the first step's 4
    assert len(verbaliser.phrases_for(longer, "[X]")) <= 2 * READINGS + 3 * 4
    phrases = tmp_path / "phrases.yaml"
    phrases.write_text(
        "labels:\n  Movie: {singular: film, plural: films}\n"
        "relationships:\n  DIRECTED_BY:\n    backward: ['the films {x} made']\n"
    )
    mine = Verbaliser(Phrases.from_yaml(phrases))
    assert mine.phrases_for(chain, "[X]") == ["the genre of the films [X] made", "the genres of the films [X] made"]
    assert "which films directed" not in " ".join(mine.questions(chain, "[X]"))
    for text, complaint in (
        ("relationships:\n  DIRECTED_BY:\n    backward: ['no placeholder']\n", "each phrase needs {x}"),
        ("labels:\n  Movie: {single: film}\n", "labels.Movie: give 'singular'"),
        ("nodes: {}\n", "'labels' and/or 'relationships'"),
        ("labels: [\n", "not valid YAML"),
    ):
        phrases.write_text(text)
        with pytest.raises(InputFileError, match=complaint):
            Phrases.from_yaml(phrases)


def test_paraphrases_are_batched_cached_and_checked(demo_store, tmp_path):
    def reply(path, body):
        questions = json.loads(body["messages"][-1]["content"])
        # rewrite each; the third of every batch loses its entity and must not be used
        out = [f"tell me {q}" if i % 3 != 2 else "tell me something" for i, q in enumerate(questions)]
        return 200, chat_completion(body["model"], json.dumps(out))

    cache = tmp_path / "paraphrases.jsonl"
    with json_endpoint(reply) as (url, calls):
        paraphraser = ChatParaphraser("m", cache, base_url=url, batch_size=8)
        rows, _ = generate(demo_store, tmp_path, "p.jsonl", paraphraser, count=20, seed=1)
        assert len(calls) == 3  # 20 questions, 8 a request
        rewritten = [r for r in rows if r["source"]["template"]]
        assert 10 <= len(rewritten) < 20  # the ones that lost their entity are kept as written
        for row in rewritten:
            assert row["question"] == "tell me " + row["source"]["template"]
        # a second run (another process) asks for nothing: the cache answers
        again = ChatParaphraser("m", cache, base_url=url, batch_size=8)
        rows_again, _ = generate(demo_store, tmp_path, "q.jsonl", again, count=20, seed=1)
        assert len(calls) == 3 and [r["question"] for r in rows_again] == [r["question"] for r in rows]
    assert keeps_entities("who wrote [A B]", "who is the writer of [A B]")
    assert not keeps_entities("who wrote [A B]", "who is the writer of A B")
    assert not keeps_entities("who wrote A B", "who wrote it", names=["A B"])


def test_the_command_generates_resumes_and_refuses_what_it_cannot_do(demo_store, env_for, tmp_path):
    from cli_run import one_line_error, run

    env = env_for(demo_store)
    out = tmp_path / "gen.jsonl"
    base = ["synthesize", "--from-graph", "--graph", demo_store.graph_name, "--output", str(out), "--seed", "2"]
    proc = run([*base, "--questions", "12", "--json"], env)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["written"] == 12 and len(out.read_text().splitlines()) == 12
    proc = run([*base, "--questions", "12", "--json"], env)  # the same again: nothing new to write
    assert proc.returncode == 0 and json.loads(proc.stdout)["already_done"] == 12
    proc = run([*base, "--questions", "12", "--max-answers", "3"], env)  # other settings: not mixed in
    assert proc.returncode == 2 and "made with other settings (max_answers)" in one_line_error(proc)
    for args, complaint in (
        ([*base, "--questions", "many"], "--questions takes how many to make"),
        (["synthesize", "--from-graph", "--dataset", "demo"], "drop --dataset"),
        (["synthesize", "--dataset", "demo", "--max-answers", "3"], "--max-answers: only with --from-graph"),
        (["demo", "--graph", demo_store.graph_name], "--graph is for --from-graph"),
        ([*base, "--questions", "5", "--phrases", str(tmp_path / "missing.yaml")], "missing.yaml: cannot read"),
    ):
        proc = run(args, env)
        assert proc.returncode == 2, (args, proc.stderr)
        assert complaint in one_line_error(proc)


# ------------------------------------------------------------------ the query language's forms
def test_questions_of_the_languages_forms_are_ones_ask_can_write_and_their_rows_are_the_querys(store, tmp_path):
    """`--language-share`: questions of every form the graph offers (a named node's property, a
    count, filters with a value the graph holds, the first k, an aggregate, the most, the
    lacking, the most common values, and a step composed with filters, orders and limits), each
    query one `ask --language full` can write for its question (its clauses among the question's
    grounded choices, its path among those around the anchors found), its answers what the query
    returns, every value it compares with stated in the question."""
    from facts_graph import load as load_facts

    from graphraft.synthesis.clauses import ClauseSpace
    from graphraft.synthesis.from_graph_language import COMPOSED_FORMS
    from graphraft.synthesis.language import Query, is_node_column, render_query
    from graphraft.synthesis.literals import question_literals
    from graphraft.synthesis.patterns import label_roots, path_text

    load_facts(store)
    rows, generator = generate(store, tmp_path, count=40, seed=1, language_share=1.0)
    composed, _ = generate(store, tmp_path, "composed.jsonl", count=60, seed=1, language_share=1.0, composed_forms=True)
    for kept in (rows, composed):
        assert len({r["cypher"] for r in kept}) == len(kept) and all(r["status"] == "ok" for r in kept)
        assert all(set(row) == set(SynthesisRow.model_fields) for row in kept)
    assert len(rows) == 40 and len(composed) == 60  # distinct queries
    forms = Counter(r["qtype"].removeprefix("graph:") for r in rows)
    # a text property of a few values (this small graph's taglines) is asked by its value, else by a word
    assert {"filter", "top", "aggregate", "most", "lacking", "lookup", "count", "common"} <= set(forms)
    assert {"value", "contains"} & set(forms)
    # `--composed-forms`: a step composed with the clauses: related to nodes that hold a value (or
    # counted, or aggregated), a named node's neighbours filtered, ordered and limited, or
    # counted, two relationships between the same two nodes, the k with the most neighbours
    assert set(COMPOSED_FORMS) <= {r["qtype"].removeprefix("graph:") for r in composed}
    # the box office kept as text is asked as a number: compared with one, or aggregated (toFloat)
    assert any("toFloat(n0.gross)" in r["cypher"] for r in rows)
    schema = store.schema()
    words = {"ACTED_IN": "acted in", "DIRECTED": "directed", "REVIEWED": "reviewed"}  # the types' words
    for row in rows + composed:
        query = Query.from_dict(row["query"])
        assert row["cypher"] == render_query(query)
        assert ClauseSpace(schema, question_literals(row["question"]), row["question"]).contains(query)
        assert query.pattern in generator.paths_for(row["question"])
        returned = store.read(render_query(query, store.graph_label))
        assert row["hits"] == len(returned) >= 1
        node_ids = [r[c] for r in returned for c in query.projection.aliases if is_node_column(c)]
        assert sorted(row["answer_ids"]) == sorted(i for i in node_ids if "id" in query.projection.aliases)
        for item in query.filters:  # a value compared with is one the question states
            if item.op not in ("NOT EXISTS", "IS NULL", "IS NOT NULL"):
                assert str(item.value) in row["question"]
        if query.limit not in (None, 1):
            assert str(query.limit) in row["question"]
        for anchor in row["anchors"]:
            assert anchor["name"] in row["question"]
        if row["qtype"] in ("graph:related", "graph:related_top"):  # the step read in its voice
            step = query.pattern.steps[0]
            said = words[step.type]
            assert (f"{said} a" if step.outgoing else f"{said} by a" if " " not in said else said) in row["question"]
        if row["qtype"] == "graph:same":  # both kinds said; of the four ways to walk it, the earliest text
            first, then = query.pattern.steps
            assert query.pattern.closed and first.outgoing != then.outgoing
            assert words[first.type] in row["question"] and words[then.type] in row["question"]
            ways = [
                p
                for p in label_roots(schema)
                if p.closed
                and {s.type for s in p.steps} == {first.type, then.type}
                and p.labels_of(p.target) == query.pattern.labels_of(query.pattern.target)
            ]
            assert len(ways) == 4 and path_text(query.pattern) == min(map(path_text, ways))
    assert any(r["qtype"] == "graph:related" and " by a person " in r["question"] for r in composed)  # passive
    again, _ = generate(store, tmp_path, "again.jsonl", count=60, seed=1, language_share=1.0, composed_forms=True)
    assert [r["question"] for r in again] == [r["question"] for r in composed]


def test_the_composed_forms_are_opt_in(store, tmp_path):
    """Without `--composed-forms` the language's questions are of the single forms alone (the
    files made before the option, and the movies figure's pairs, are made again unchanged)."""
    from facts_graph import load as load_facts

    from graphraft.synthesis.from_graph_language import COMPOSED_FORMS, FORMS

    load_facts(store)
    rows, _ = generate(store, tmp_path, count=30, seed=1, language_share=1.0)
    assert {r["qtype"].removeprefix("graph:") for r in rows} <= set(FORMS)
    assert not set(FORMS) & set(COMPOSED_FORMS)


def test_a_language_share_leaves_the_rest_to_paths(demo_store, tmp_path):
    rows, _ = generate(demo_store, tmp_path, count=30, seed=2, language_share=0.5)
    language = [r for r in rows if r["query"] is not None]
    assert len(rows) == 30 and len(language) == 15
    assert all(r["qtype"].removeprefix("graph:") not in ("1", "2", "3") for r in language)


def test_the_clause_space_holds_exactly_the_queries_it_can_write(store):
    """``ClauseSpace.contains`` agrees with listing the space: every listed query is held; a
    query with a value the question does not state, or a LIMIT it does not, is not."""
    from facts_graph import load as load_facts

    from graphraft.synthesis.clauses import ClauseSpace
    from graphraft.synthesis.language import Filter, Order, Query
    from graphraft.synthesis.literals import question_literals

    load_facts(store)
    question = "the 2 movies released after 1999"
    clauses = ClauseSpace(store.schema(), question_literals(question), question, max_filters=1, max_properties=1)
    root = Pattern(AnchorRef(None, ("Movie",)), (), 0)
    listed = clauses.queries([root])
    assert len(listed) > 50 and all(clauses.contains(q) for q in listed[:: len(listed) // 50])  # 50 of them
    assert clauses.contains(
        Query(root, (Filter(0, "released", ">", 1999),), order=Order("released", True, True), limit=2)
    )
    assert not clauses.contains(Query(root, (Filter(0, "released", ">", 2000),)))
    assert not clauses.contains(Query(root, order=Order("released", True, True), limit=3))
