"""Execution accuracy: an answer's rows, compared with a gold query's as sets of rows
(``synthesis/results.py``: a node as its name, column order and naming ignored)."""

from __future__ import annotations

from typing import Any

from graphraft.synthesis.results import same_result, some_rows_of

__all__ = ["answer_rows", "same_result", "some_rows_of"]


def answer_rows(answer, use_selection: bool, store=None) -> list[list[Any]]:
    """What an answer says, as rows with nodes by name: the value rows of its best query when it
    returned values; else L2's chosen nodes (``use_selection``), or the nodes of the first query
    that returned any — all of them: those past the answer's node budget, which it does not
    name, are named from ``store``."""
    if answer.values:
        return [list(row.values()) for row in answer.named_values()]
    names = {node.id: node.name for node in [*answer.retrieved, *answer.answers]}
    if use_selection and answer.selected_by == "l2":
        return [[node.name] for node in answer.answers]
    top = next((q for q in answer.queries if q.ids), None)
    ids = top.ids if top else []
    unnamed = list(dict.fromkeys(node_id for node_id in ids if node_id not in names))
    if unnamed and store is not None:
        names |= {
            row["id"]: row["name"] if row["name"] is not None else row["id"] for row in store.nodes_by_id(unnamed)
        }
    return [[names.get(node_id, node_id)] for node_id in ids]
