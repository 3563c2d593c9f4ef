"""Which query a training pair teaches, when several are equally right.

The ranking rule (most answers hit, then fewest results) leaves L1 with noisy labels: a
question asking "which films did X direct" gets WRITTEN_BY whenever X wrote the same films,
and similar questions get different kinds of query. A model cannot learn a choice the
question does not show. So among the queries that hit as many answers as the best, the
target is the pattern most often right for questions worded the same way (the question with
its entity mentions masked), learned from the training split only; the ranking rule breaks
what is left."""

from __future__ import annotations

import re
from collections import Counter, defaultdict

from graphraft.synthesis.rows import SynthesisRow
from graphraft.text import normalize_name

_SPACES = re.compile(r"\s+")


def question_template(question: str, mentions: list[str] | tuple[str, ...] = ()) -> str:
    """The wording of a question with its entity mentions masked: 'who directed _'. Compared
    normalised (the lexical extractor's mentions of an unmarked question are)."""
    text = normalize_name(question)
    for mention in sorted((normalize_name(m) for m in mentions), key=len, reverse=True):
        if mention:  # whole words only: the mention "c" is not in "directed"
            text = re.sub(rf"(?<!\w){re.escape(mention)}(?!\w)", "_", text)
    return _SPACES.sub(" ", text.replace("[", "").replace("]", "")).strip()


class TargetChooser:
    """Learns, from training rows, which pattern each question wording asks for."""

    def __init__(self, training_rows: list[SynthesisRow]):
        self.by_template: dict[str, Counter] = defaultdict(Counter)
        self.overall: Counter = Counter()
        for row in training_rows:
            template = question_template(row.question, row.mentions)
            for pattern in row.equally_right().values():
                self.by_template[template][pattern.shape] += 1
                self.overall[pattern.shape] += 1

    def target(self, row: SynthesisRow) -> str:
        votes = self.by_template.get(question_template(row.question, row.mentions), Counter())
        options = row.equally_right()
        order = list(options)
        # a wording never seen in training falls back to what is right most often overall
        votes = votes or self.overall
        return min(options, key=lambda cypher: (-votes[options[cypher].shape], order.index(cypher)))


def choose_targets(rows: list[SynthesisRow]) -> dict[str, str]:
    """qid -> target query for every row, learned from the rows not in the validation split."""
    chooser = TargetChooser([r for r in rows if r.split != "validation"])
    return {row.qid: chooser.target(row) for row in rows}
