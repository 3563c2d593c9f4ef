"""Question sets the commands work on: a dataset GraphRAFT knows (MetaQA, the demo) or the
user's own file, filtered by split and hops, with a stable sample per hop."""

from __future__ import annotations

import dataclasses
import random
from enum import Enum
from pathlib import Path

from graphraft.errors import InputFileError, InvalidInputError
from graphraft.graph.loaders.questions import QAItem
from graphraft.sampling import stable_groups, stable_hash


class Dataset(str, Enum):
    metaqa = "metaqa"
    demo = "demo"


class Wording(str, Enum):
    """MetaQA's question wordings: its templates, or the same questions paraphrased (1-hop)."""

    vanilla = "vanilla"
    ntm = "ntm"


class Split(str, Enum):
    train = "train"
    validation = "validation"
    all = "all"


def question_set_name(dataset: Dataset | None, questions: Path | None, wording: Wording = Wording.vanilla) -> str:
    if questions is not None:
        return questions.stem
    return dataset.value if wording == Wording.vanilla else f"{dataset.value}-{wording.value}"


def graph_for(graph: str | None, dataset: Dataset | None, questions: Path | None, settings) -> str:
    """--graph, else the dataset's own graph, else the graph loaded last."""
    from graphraft.graph import current_graph

    return graph or (dataset.value if dataset is not None and questions is None else current_graph(settings))


def load_items(
    dataset: Dataset | None,
    questions: Path | None,
    metaqa_path: Path | None,
    split: Split,
    hops: list[int] | None,
    limit: int | None,
    wording: Wording = Wording.vanilla,
):
    """The questions to work on, filtered by split and hops; ``limit`` per hop, a stable sample."""
    from graphraft.graph.loaders.demo import demo_files
    from graphraft.graph.loaders.metaqa import default_metaqa_dir, read_questions
    from graphraft.graph.loaders.questions import read_question_file

    if wording != Wording.vanilla and (dataset != Dataset.metaqa or questions is not None):
        raise InvalidInputError(f"the {wording.value} wording is MetaQA's: use it with the metaqa dataset")
    wanted = None if split == Split.all else split.value
    if questions is not None:
        items = list(read_question_file(questions, split=wanted))
    elif dataset == Dataset.metaqa:
        root = metaqa_path or default_metaqa_dir()
        if root is None:
            raise InputFileError("MetaQA not found in ../shared/datasets/metaqa: set metaqa_path to its folder")
        root = Path(root)
        if not hops and wording != Wording.vanilla:  # the hops that have this wording
            hops = [h for h in (1, 2, 3) if (root / f"{h}-hop" / wording.value).is_dir()]
        items = list(read_questions(root, hops=tuple(hops or (1, 2, 3)), variant=wording.value, split=wanted))
    elif dataset == Dataset.demo:
        items = list(read_question_file(demo_files()[2], split=wanted))
    else:
        raise InvalidInputError("say which questions: a dataset (metaqa, demo) or a question file")
    if hops:
        items = [item for item in items if item.hops in hops]
    if limit is not None:
        by_hop = stable_groups(items, lambda item: item.hops, lambda item: item.qid)
        items = [item for ordered in by_hop.values() for item in ordered[:limit]]
    return items


# ---------------------------------------------------------------------------------- variants
# How people write questions that the datasets mark: no brackets, a typo in the name. The
# item keeps its mention (the gold entity), so evaluation can tell whether it was linked, and
# gets its own qid, so training data can hold a question and its variant side by side.


def unmarked(item: QAItem) -> QAItem:
    """The question without the [brackets] around its entity."""
    return dataclasses.replace(
        item, qid=f"{item.qid}-unmarked", question=item.question.replace("[", "").replace("]", "")
    )


def with_typo(item: QAItem, seed: int) -> QAItem:
    """One character edit (substitute, delete, insert or swap neighbours) in the mention, the
    same for the same question and seed; brackets stay as they were. A mention of fewer than
    four letters is left alone."""
    mention = item.mention
    if not mention or len(mention) < 4 or mention not in item.question:
        return item
    rng = random.Random(stable_hash(f"{seed}:{item.qid}"))
    letters = [i for i, ch in enumerate(mention) if ch.isalpha()]
    if len(letters) < 2:
        return item
    i = rng.choice(letters[1:])  # not the first letter: people rarely get that wrong
    kind = rng.choice(("substitute", "delete", "insert", "swap"))
    other = rng.choice([c for c in "abcdefghijklmnopqrstuvwxyz" if c != mention[i].lower()])
    if kind == "substitute":
        typo = mention[:i] + other + mention[i + 1 :]
    elif kind == "delete":
        typo = mention[:i] + mention[i + 1 :]
    elif kind == "insert":
        typo = mention[:i] + other + mention[i:]
    else:
        typo = mention[: i - 1] + mention[i] + mention[i - 1] + mention[i + 1 :]
        if typo == mention:  # two equal letters: substitute instead
            typo = mention[:i] + other + mention[i + 1 :]
    return dataclasses.replace(item, qid=f"{item.qid}-typo{seed}", question=item.question.replace(mention, typo, 1))


def as_people_write(items: list[QAItem], unmarked_: bool = False, typos: int | None = None) -> list[QAItem]:
    """The questions with a typo in each entity (``typos``: the seed) and/or the brackets
    stripped, in that order (a typo needs the brackets to find the mention)."""
    if typos is not None:
        items = [with_typo(item, typos) for item in items]
    return [unmarked(item) for item in items] if unmarked_ else list(items)
