"""Synthesis rows for tests that need a few made by hand: every field a writer sets, with
defaults for those the test does not care about."""

from __future__ import annotations

from graphraft.synthesis.patterns import AnchorRef, Pattern, Step
from graphraft.synthesis.rows import SynthesisRow

PLACEHOLDER = Pattern(AnchorRef("x", ("X",)), (Step("R", True, ("Y",)),), 1)


def synthesis_row(qid: str, **fields) -> SynthesisRow:
    row = {
        "qid": qid,
        "question": f"question {qid}",
        "hops": 1,
        "qtype": "test",
        "split": "train",
        "answers": [],
        "answer_ids": [],
        "mentions": [],
        "anchors": [],
        "status": "ok",
        "reason": None,
        "cypher": f"MATCH {qid}",
        "pattern": PLACEHOLDER.to_dict(),
        "hits": 1,
        "total": 1,
        "precision": 1.0,
        "recall": 1.0,
        "alternatives": [],
        "closest": None,
        "enumerated": 1,
        "timeouts": [],
        "hubs_skipped": 0,
        "source": None,
        "timings": {},
    }
    return SynthesisRow(**{**row, **fields})
