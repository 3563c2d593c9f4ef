"""MetaQA: the movie knowledge base (``kb.txt``) and its question files.

Every triple's head is a Movie; the relation decides the tail's label. A node is
(label, name) with the stable id ``label:name`` (lower-case label)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from graphraft.errors import InputFileError
from graphraft.graph.loaders.files import text_lines
from graphraft.graph.loaders.questions import QAItem, bracketed_mention, split_of
from graphraft.graph.records import NodeRecord, RelationshipRecord

#: relation -> (relationship type, label of the tail)
RELATIONS: dict[str, tuple[str, str]] = {
    "directed_by": ("DIRECTED_BY", "Person"),
    "written_by": ("WRITTEN_BY", "Person"),
    "starred_actors": ("STARRED_ACTORS", "Person"),
    "has_genre": ("HAS_GENRE", "Genre"),
    "has_tags": ("HAS_TAGS", "Tag"),
    "in_language": ("IN_LANGUAGE", "Language"),
    "release_year": ("RELEASE_YEAR", "Year"),
    "has_imdb_rating": ("HAS_IMDB_RATING", "Rating"),
    "has_imdb_votes": ("HAS_IMDB_VOTES", "Votes"),
}
HEAD_LABEL = "Movie"
HOPS = (1, 2, 3)


def default_metaqa_dir() -> Path | None:
    """``../shared/datasets/metaqa`` from the working directory or the project, when it exists."""
    here = Path(__file__).resolve()
    for base in (Path.cwd(), *here.parents):
        candidate = base.parent / "shared" / "datasets" / "metaqa"
        if (candidate / "kb.txt").exists():
            return candidate
    return None


def node_id(label: str, name: str) -> str:
    return f"{label.lower()}:{name}"


def read_kb(path: Path) -> tuple[list[NodeRecord], list[RelationshipRecord]]:
    """Parse ``kb.txt`` (``head|relation|tail`` lines); malformed lines name file:line."""
    if not path.is_file():
        raise InputFileError(f"{path}: MetaQA knowledge base not found")
    nodes: dict[str, NodeRecord] = {}
    rels: list[RelationshipRecord] = []
    for number, line in text_lines(path):
        parts = line.split("|")
        if len(parts) != 3 or not all(p.strip() for p in parts):
            raise InputFileError(f"{path}:{number}: expected 'head|relation|tail', got {line[:80]!r}")
        head, relation, tail = (p.strip() for p in parts)
        if relation not in RELATIONS:
            raise InputFileError(f"{path}:{number}: unknown relation {relation!r}")
        rel_type, tail_label = RELATIONS[relation]
        head_id, tail_id = node_id(HEAD_LABEL, head), node_id(tail_label, tail)
        nodes.setdefault(head_id, NodeRecord(head_id, (HEAD_LABEL,), {"name": head}))
        nodes.setdefault(tail_id, NodeRecord(tail_id, (tail_label,), {"name": tail}))
        rels.append(RelationshipRecord(head_id, tail_id, rel_type))
    return list(nodes.values()), rels


def read_questions(
    root: Path,
    hops: tuple[int, ...] = HOPS,
    variant: str = "vanilla",
    split: str | None = None,
    validation_fraction: float = 0.1,
) -> Iterator[QAItem]:
    """MetaQA dev questions: question, [mention], answers, hops, type, and the split.

    ``variant``: MetaQA's wording, ``vanilla`` (its templates) or ``ntm`` (the same questions
    paraphrased, line for line; 1-hop only). A paraphrase takes the split of its vanilla line,
    so a question and its paraphrase are never on both sides."""
    for hop in hops:
        qa_path = root / f"{hop}-hop" / variant / "qa_dev.txt"
        if not qa_path.is_file():
            raise InputFileError(f"{qa_path}: MetaQA question file not found")
        paired: list[str] = []
        if variant != "vanilla":
            vanilla_path = root / f"{hop}-hop" / "vanilla" / "qa_dev.txt"
            if not vanilla_path.is_file():
                raise InputFileError(f"{vanilla_path}: needed to split the {variant} questions like their originals")
            paired = [line.partition("\t")[0] for line in vanilla_path.read_text(encoding="utf-8").splitlines()]
        qtype_path = root / f"{hop}-hop" / "qa_dev_qtype.txt"
        qtypes = qtype_path.read_text(encoding="utf-8").splitlines() if qtype_path.is_file() else []
        for number, line in enumerate(qa_path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            question, sep, answers = line.partition("\t")
            if not sep or not answers.strip():
                raise InputFileError(f"{qa_path}:{number}: expected 'question<TAB>answer|answer'")
            if paired and number > len(paired):
                raise InputFileError(f"{qa_path}:{number}: more lines than {hop}-hop/vanilla/qa_dev.txt")
            item_split = split_of(paired[number - 1] if paired else question, validation_fraction)
            if split is not None and item_split != split:
                continue
            yield QAItem(
                qid=f"metaqa-{hop}hop-{variant}-{number}",
                question=question.strip(),
                mention=bracketed_mention(question),
                answers=tuple(a.strip() for a in answers.split("|") if a.strip()),
                hops=hop,
                qtype=qtypes[number - 1].strip() if number - 1 < len(qtypes) else None,
                split=item_split,
                line=number,
                source=str(qa_path),
            )
