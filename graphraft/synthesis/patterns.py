"""Patterns and the one renderer (DESIGN.md invariant 3).

A pattern is a path that starts at an anchor node: a sequence of steps, each a relationship
type, a direction and the labels of the node it reaches. One node on the path is the
target (what the query returns); a path may also end at a second anchor (a two-anchor
"bridge"). ``render`` turns a pattern into exactly one Cypher string, and training targets,
trie candidates and executed queries all come from it. Model output is mapped back to a
pattern by looking the string up among the candidates, never by parsing it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from graphraft.graph.cypher_text import label_expression, quote_identifier, string_literal

#: Bump when the rendered text changes: adapters trained on older text must not be used.
RENDERER_VERSION = 3  # 2: every relationship named (r1, r2, ...); bridges oriented by mention order
# 3: every node after the anchor named by its place (n1, n2, ...); the target said in RETURN


@dataclass(frozen=True, order=True)
class AnchorRef:
    id: str
    labels: tuple[str, ...]


@dataclass(frozen=True, order=True)
class Step:
    type: str
    outgoing: bool  # True: (previous)-[:TYPE]->(next); False: (previous)<-[:TYPE]-(next)
    labels: tuple[str, ...]  # labels of the node this step reaches


@dataclass(frozen=True, order=True)
class Pattern:
    anchor: AnchorRef
    steps: tuple[Step, ...]
    target: int  # index of the target node on the path; the anchor is node 0
    end_anchor: AnchorRef | None = None  # the last node, when the path ends at a second anchor

    def __post_init__(self) -> None:
        if not self.steps:
            raise ValueError("a pattern needs at least one step")
        if not 1 <= self.target <= len(self.steps):
            raise ValueError("the target must be a node after the anchor")
        if self.end_anchor is not None and self.target == len(self.steps):
            raise ValueError("the target cannot be the second anchor")

    @property
    def hops(self) -> int:
        return len(self.steps)

    @property
    def anchor_ids(self) -> tuple[str, ...]:
        return (self.anchor.id,) + ((self.end_anchor.id,) if self.end_anchor else ())

    @property
    def shape(self) -> str:
        """The pattern without its anchors' ids: labels and types along the path."""
        parts = [label_expression(self.anchor.labels)]
        for index, step in enumerate(self.steps, 1):
            arrow = f"-[:{step.type}]->" if step.outgoing else f"<-[:{step.type}]-"
            mark = "*" if index == self.target else ""
            parts.append(f"{arrow}({mark}{label_expression(step.labels)})")
        return "(" + parts[0] + ")" + "".join(parts[1:])

    def to_dict(self) -> dict[str, Any]:
        return {
            "anchor": {"id": self.anchor.id, "labels": list(self.anchor.labels)},
            "steps": [{"type": s.type, "outgoing": s.outgoing, "labels": list(s.labels)} for s in self.steps],
            "target": self.target,
            "end_anchor": (
                {"id": self.end_anchor.id, "labels": list(self.end_anchor.labels)} if self.end_anchor else None
            ),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Pattern:
        def anchor(d):
            return AnchorRef(d["id"], tuple(d["labels"])) if d else None

        return cls(
            anchor(data["anchor"]),
            tuple(Step(s["type"], bool(s["outgoing"]), tuple(s["labels"])) for s in data["steps"]),
            int(data["target"]),
            anchor(data.get("end_anchor")),
        )


def _node(variable: str, labels: tuple[str, ...], node_id: str | None = None) -> str:
    props = f" {{id: {string_literal(node_id)}}}" if node_id is not None else ""
    return f"({variable}{label_expression(labels)}{props})"


def _reusable_pairs(pattern: Pattern) -> list[tuple[int, int]]:
    """Pairs of steps (1-based) that could walk the same relationship.

    Cypher forbids that within one MATCH path, but not every engine enforces it (FalkorDB
    does not), so the renderer says it where it can happen: same type, and the same labels
    at both ends of both steps (patterns record each node's full label set)."""
    labels = [pattern.anchor.labels] + [step.labels for step in pattern.steps]
    if pattern.end_anchor is not None:
        labels[-1] = pattern.end_anchor.labels

    def ends(i: int) -> tuple:  # label sets: the order a node's labels were given in does not matter
        step = pattern.steps[i - 1]
        start, end = frozenset(labels[i - 1]), frozenset(labels[i])
        return (start, end) if step.outgoing else (end, start)

    pairs = []
    for i in range(1, len(pattern.steps) + 1):
        for j in range(i + 1, len(pattern.steps) + 1):
            if pattern.steps[i - 1].type != pattern.steps[j - 1].type or ends(i) != ends(j):
                continue
            # Walking back over the first relationship from the target lands on the anchor,
            # which `n2 <> a` already excludes.
            if (i, j) == (1, 2) and pattern.target == 2:
                continue
            pairs.append((i, j))
    return pairs


def render(pattern: Pattern, graph_label: str | None = None) -> str:
    """The canonical Cypher for a pattern: one MATCH path on which no relationship is used
    twice, targets other than the anchors, distinct target ids.

    ``MATCH (a:Person {id: "person:Tom Hanks"})<-[r1:STARRED_ACTORS]-(n1:Movie) RETURN DISTINCT n1.id AS id``

    Written left to right: the text of each part depends only on the parts before it, so two
    candidates' texts agree up to the first part where their structures differ. Every
    relationship (``r1``, ``r2``, ...) and every node after the anchor (``n1``, ``n2``, ...; a
    second anchor ``b``) is named by its place on the path, whatever follows; which node the
    query returns is said after the whole path, in its conditions and its RETURN.

    ``graph_label``: the executed form in a database that holds other graphs too (Neo4j), the
    graph's label added to the root node (relationships never leave a graph, so the root confines
    the path). Training targets and candidates are the canonical form, without it."""
    pairs = _reusable_pairs(pattern)
    root = pattern.anchor.labels + ((graph_label,) if graph_label else ())
    text = [_node("a", root, pattern.anchor.id)]
    last = len(pattern.steps)
    for index, step in enumerate(pattern.steps, 1):
        # Named whether or not anything will refer to it: the text of a step may not depend on
        # the steps after it (renderer 1 named a relationship only where a later step reused
        # it, so a 2-hop path began `-[:T]->` and its 3-hop extensions `-[r1:T]->`; renderer 2
        # wrote the target `(t:...)` where the path reached it, so a 1-hop path and its 2-hop
        # extensions parted at that node, before the step that tells them apart).
        rel = f"[r{index}:{quote_identifier(step.type)}]"
        text.append(f"-{rel}->" if step.outgoing else f"<-{rel}-")
        if index == last and pattern.end_anchor is not None:
            text.append(_node("b", pattern.end_anchor.labels, pattern.end_anchor.id))
        else:
            text.append(_node(f"n{index}", step.labels))
    target = f"n{pattern.target}"
    # A target may only equal an anchor where their labels allow it; say so only then,
    # so that the common query stays short.
    target_labels = set(pattern.steps[pattern.target - 1].labels)
    conditions = [
        f"{target} <> {var}"
        for var, ref in (("a", pattern.anchor), ("b", pattern.end_anchor))
        if ref is not None and target_labels <= set(ref.labels)
    ]
    conditions += [f"r{i} <> r{j}" for i, j in pairs]
    where = (" WHERE " + " AND ".join(conditions)) if conditions else ""
    return f"MATCH {''.join(text)}{where} RETURN DISTINCT {target}.id AS id"


def executable(pattern: Pattern, store) -> str:
    """The query to run for ``pattern`` on ``store`` (a ``GraphStore``): the canonical text,
    confined to the store's graph where its database holds others."""
    return render(pattern, store.graph_label)
