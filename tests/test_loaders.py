"""Loaders: MetaQA, the demo graph, and your own CSV/JSONL files."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from graphraft.errors import InputFileError, InvalidInputError
from graphraft.graph.loaders import load_graph
from graphraft.graph.loaders.demo import demo_files
from graphraft.graph.loaders.files import read_nodes, read_relationships
from graphraft.graph.loaders.metaqa import default_metaqa_dir, read_kb, read_questions
from graphraft.graph.loaders.questions import read_question_file, split_of

KB = """Kismet|directed_by|William Dieterle
Kismet|starred_actors|Marlene Dietrich
Kismet|release_year|1944
Morocco|starred_actors|Marlene Dietrich
Morocco|has_genre|Drama
"""


def test_metaqa_kb_maps_relations_to_labels_and_types(tmp_path):
    (tmp_path / "kb.txt").write_text(KB)
    nodes, rels = read_kb(tmp_path / "kb.txt")
    by_id = {n.id: n for n in nodes}
    assert by_id["movie:Kismet"].labels == ("Movie",)
    assert by_id["person:Marlene Dietrich"].labels == ("Person",)
    assert by_id["year:1944"].labels == ("Year",) and by_id["genre:Drama"].labels == ("Genre",)
    assert len(nodes) == 6  # Marlene Dietrich is one node
    assert Counter(r.type for r in rels) == {"STARRED_ACTORS": 2, "DIRECTED_BY": 1, "RELEASE_YEAR": 1, "HAS_GENRE": 1}


@pytest.mark.parametrize(
    "line, complaint",
    [
        ("Kismet|directed_by", "expected 'head|relation|tail'"),
        ("Kismet|sang_in|Someone", "unknown relation 'sang_in'"),
        ("Kismet||Someone", "expected 'head|relation|tail'"),
    ],
)
def test_metaqa_kb_reports_malformed_lines_with_file_and_line(tmp_path, line, complaint):
    kb = tmp_path / "kb.txt"
    kb.write_text(KB + line + "\n")
    with pytest.raises(InputFileError, match=rf"kb.txt:6: {complaint}"):
        read_kb(kb)


def test_metaqa_kb_missing_file(tmp_path):
    with pytest.raises(InputFileError, match="not found"):
        read_kb(tmp_path / "kb.txt")


def test_metaqa_questions_give_mention_answers_hops_type_and_a_stable_split(tmp_path):
    for hop, line, qtype in [
        (1, "what did [Tom Cullen] act in\tWeekend", "actor_to_movie"),
        (2, "who directed films of [Big Star]\tA|B", "x_to_y_to_z"),
    ]:
        folder = tmp_path / f"{hop}-hop"
        (folder / "vanilla").mkdir(parents=True)
        (folder / "vanilla" / "qa_dev.txt").write_text(line + "\n")
        (folder / "qa_dev_qtype.txt").write_text(qtype + "\n")
    items = list(read_questions(tmp_path, hops=(1, 2)))
    assert [(i.mention, i.answers, i.hops, i.qtype) for i in items] == [
        ("Tom Cullen", ("Weekend",), 1, "actor_to_movie"),
        ("Big Star", ("A", "B"), 2, "x_to_y_to_z"),
    ]
    assert all(i.split == split_of(i.question) for i in items)


def test_paraphrased_questions_take_the_split_of_their_original_line(tmp_path):
    from graphraft.graph.loaders.question_sets import Dataset, Split, Wording, load_items

    originals = [f"what did [Actor {i}] act in" for i in range(200)]
    paraphrases = [f"what has [Actor {i}] been acting in" for i in range(200)]
    for variant, lines in (("vanilla", originals), ("ntm", paraphrases)):
        (tmp_path / "1-hop" / variant).mkdir(parents=True)
        (tmp_path / "1-hop" / variant / "qa_dev.txt").write_text(
            "".join(f"{q}\tFilm {i}\n" for i, q in enumerate(lines))
        )
    (tmp_path / "2-hop" / "vanilla").mkdir(parents=True)  # no ntm wording for 2 hops
    (tmp_path / "2-hop" / "vanilla" / "qa_dev.txt").write_text("who directed films of [X]\tY\n")
    ntm = load_items(Dataset.metaqa, None, tmp_path, Split.all, None, None, Wording.ntm)
    assert [i.question for i in ntm] == paraphrases  # only the hops that have the wording
    assert [i.split for i in ntm] == [split_of(q) for q in originals]  # the original's split, line by line
    assert [i.split for i in ntm] != [split_of(q) for q in paraphrases]  # (which their own text would change)
    assert {i.qid for i in ntm}.isdisjoint(i.qid for i in read_questions(tmp_path, hops=(1,)))
    validation = load_items(Dataset.metaqa, None, tmp_path, Split.validation, None, None, Wording.ntm)
    assert {i.line for i in validation} == {i + 1 for i, q in enumerate(originals) if split_of(q) == "validation"}
    with pytest.raises(InvalidInputError, match="the ntm wording is MetaQA's"):
        load_items(Dataset.demo, None, None, Split.all, None, None, Wording.ntm)
    with (tmp_path / "1-hop" / "ntm" / "qa_dev.txt").open("a") as extra:
        extra.write("one line too many\tZ\n")
    with pytest.raises(InputFileError, match=r"ntm/qa_dev\.txt:201: more lines than 1-hop/vanilla"):
        load_items(Dataset.metaqa, None, tmp_path, Split.all, [1], None, Wording.ntm)


def test_split_is_deterministic_and_roughly_the_asked_fraction():
    questions = [f"question number {i}" for i in range(5000)]
    first = [split_of(q) for q in questions]
    assert first == [split_of(q) for q in questions]
    assert 0.08 < first.count("validation") / len(first) < 0.12


@pytest.mark.skipif(default_metaqa_dir() is None, reason="MetaQA not in ../shared")
def test_the_real_metaqa_kb_and_questions_parse():
    root = default_metaqa_dir()
    nodes, rels = read_kb(root / "kb.txt")
    assert len(rels) == 133_582
    assert len({n.labels for n in nodes}) == 8
    one_hop = list(read_questions(root, hops=(1,)))
    assert len(one_hop) == 9_992 and all(i.mention for i in one_hop)
    validation = [i for i in one_hop if i.split == "validation"]
    assert 0.08 < len(validation) / len(one_hop) < 0.12


# ---------------------------------------------------------------------------------- files
def test_jsonl_and_csv_give_the_same_graph(tmp_path):
    (tmp_path / "n.jsonl").write_text(
        '{"id": "a", "labels": ["Person"], "properties": {"name": "Ann", "age": 41, "tags": ["x", "y"]}}\n'
        '{"id": "b", "labels": "City", "properties": {"name": "Oslo"}}\n'
    )
    (tmp_path / "n.csv").write_text("id,labels,name,age:int,tags:list\na,Person,Ann,41,x;y\nb,City,Oslo,,\n")
    (tmp_path / "r.jsonl").write_text(
        '{"source": "a", "target": "b", "type": "LIVES_IN", "properties": {"since": 2001}}\n'
    )
    (tmp_path / "r.csv").write_text("source,target,type,since:int\na,b,LIVES_IN,2001\n")
    assert read_nodes(tmp_path / "n.jsonl") == read_nodes(tmp_path / "n.csv")
    assert read_relationships(tmp_path / "r.jsonl") == read_relationships(tmp_path / "r.csv")
    assert read_nodes(tmp_path / "n.csv")[0].properties == {"name": "Ann", "age": 41, "tags": ["x", "y"]}


@pytest.mark.parametrize(
    "filename, content, complaint",
    [
        ("n.jsonl", '{"id": "a", "labels": ["P"]}\n{"id": "b", "labels": ["P"]\n', r"n.jsonl:2: invalid JSON"),
        ("n.jsonl", '{"id": "a", "labels": []}\n', r"n.jsonl:1: labels"),
        ("n.jsonl", '{"labels": ["P"]}\n', r"n.jsonl:1: id: Field required"),
        ("n.jsonl", '{"id": "a", "labels": ["P"], "properties": {"x": {"nested": 1}}}\n', r"n.jsonl:1: properties.x"),
        (
            "n.jsonl",
            '{"id": "a", "labels": ["P"]}\n{"id": "a", "labels": ["P"]}\n',
            r"n.jsonl:2: duplicate node id 'a'",
        ),
        ("n.csv", "id,name\na,Ann\n", r"n.csv:1: header lacks column\(s\) labels"),
        ("n.csv", "id,labels,age:int\na,P,old\n", r"n.csv:2: cannot read 'old' as column 'age'"),
        ("n.csv", "id,labels\na,P,extra\n", r"n.csv:2: expected 2 columns, found 3"),
        ("n.txt", "whatever\n", r"n.txt: unknown format"),
    ],
)
def test_malformed_node_files_name_file_and_line(tmp_path, filename, content, complaint):
    (tmp_path / filename).write_text(content)
    with pytest.raises(InputFileError, match=complaint):
        read_nodes(tmp_path / filename)


def test_missing_and_undecodable_files(tmp_path):
    with pytest.raises(InputFileError, match="file not found"):
        read_nodes(tmp_path / "absent.jsonl")
    (tmp_path / "latin1.csv").write_bytes("id,labels,name\na,P,Jos\xe9\n".encode("latin-1"))
    with pytest.raises(InputFileError, match="not UTF-8"):
        read_nodes(tmp_path / "latin1.csv")


def test_relationship_rows_need_source_target_and_type(tmp_path):
    (tmp_path / "r.jsonl").write_text('{"source": "a", "target": "b"}\n')
    with pytest.raises(InputFileError, match=r"r.jsonl:1: type: Field required"):
        read_relationships(tmp_path / "r.jsonl")


# ---------------------------------------------------------------------------------- demo
def test_demo_graph_is_consistent_and_its_answers_exist():
    nodes_file, rels_file, questions_file = demo_files()
    nodes = read_nodes(nodes_file)
    rels = read_relationships(rels_file)
    ids = {n.id for n in nodes}
    assert 200 <= len(nodes) <= 600
    assert len({n.labels for n in nodes}) >= 5 and len({r.type for r in rels}) >= 5
    assert all(r.source in ids and r.target in ids for r in rels)
    assert all(isinstance(n.properties.get("description"), str) for n in nodes)
    questions = list(read_question_file(questions_file))
    assert len(questions) >= 200
    assert {q.hops for q in questions} == {1, 2, 3}
    names = {n.properties["name"] for n in nodes}
    for q in questions:
        assert q.mention in names and q.answers and set(q.answers) <= names
        assert set(q.extra["answer_ids"]) <= ids


def test_demo_graph_loads_idempotently(store):
    nodes_file, rels_file, _ = demo_files()
    nodes, rels = read_nodes(nodes_file), read_relationships(rels_file)
    first = load_graph(store, nodes, rels)
    assert first.writes.nodes_created == len(nodes) and first.missing_endpoints == 0
    second = load_graph(store, nodes, rels)
    assert not second.writes.changed
    assert store.count_relationships() == len(rels)


def test_question_file_errors(tmp_path):
    bad = tmp_path / "q.jsonl"
    bad.write_text(json.dumps({"question": "who", "answers": "x"}) + "\n" + json.dumps({"answers": []}) + "\n")
    with pytest.raises(InputFileError, match=r"q.jsonl:2: expected an object with a 'question' string"):
        list(read_question_file(bad))
    empty = tmp_path / "q.tsv"
    empty.write_text("   \tanswer\n")
    with pytest.raises(InputFileError, match=r"q.tsv:1: empty question"):
        list(read_question_file(empty))
