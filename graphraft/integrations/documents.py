"""An ``Answer`` as the items a retriever returns: one per answer node, each carrying the node,
the Cypher that found the answers and the evidence; shared by both integrations."""

from __future__ import annotations

from typing import Any

from graphraft.inference.pipeline import Answer


def answer_items(answer: Answer, limit: int | None = None) -> list[tuple[str, dict[str, Any]]]:
    """(text, metadata) for each answer node, best first; or, when the best query returned
    values (a property, a count), one item per row of them, with the row in its metadata."""
    queries = [q.cypher for q in answer.queries]
    items = []
    if answer.values:
        for rank, (row, cells) in enumerate(zip(answer.values[:limit], answer.named_values()), 1):
            text = "; ".join(f"{column}: {value}" for column, value in cells.items())
            items.append(
                (
                    text,
                    {
                        "row": row,
                        "rank": rank,
                        "cypher": queries,
                        "evidence": answer.evidence,
                        "selected_by": answer.selected_by,
                    },
                )
            )
        return items
    for node in answer.answers[:limit]:
        text = f"{node.name} ({', '.join(node.labels)})" if node.labels else node.name
        items.append(
            (
                text,
                {
                    "id": node.id,
                    "name": node.name,
                    "labels": node.labels,
                    "rank": node.rank,
                    "cypher": queries,
                    "evidence": answer.evidence,
                    "selected_by": answer.selected_by,
                },
            )
        )
    return items


def answer_metadata(answer: Answer) -> dict[str, Any]:
    """What the whole answer says beside its items."""
    return {
        "queries": [q.model_dump() for q in answer.queries],
        "values": answer.values,
        "anchors": answer.anchors,
        "evidence": answer.evidence,
        "message": answer.message,
        "notes": answer.notes,
        "timings": answer.timings,
    }
