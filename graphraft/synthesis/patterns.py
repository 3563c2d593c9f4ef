"""Patterns: the paths queries walk, and their part of the one renderer (DESIGN.md invariant 3).

A pattern is a path that starts at an anchor node (or, for a label root, at any node of a
label): a sequence of 0 to 3 steps, each a relationship type, a direction and the labels of
the node it reaches. One node on the path is the target (what the query returns); a path may
also end at a second anchor (a two-anchor "bridge"). ``render`` turns a pattern into exactly
one Cypher string that asks for its target nodes; the clauses a query adds to its path
(filters, what it returns, order, limit) are in ``graphraft.synthesis.language``, whose
renderer writes the path with ``path_text``. Training targets, trie candidates and executed
queries all come from the renderer; model output is mapped back by looking the string up
among the candidates, never by parsing it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from graphraft.graph.cypher_text import label_expression, quote_identifier, string_literal

#: Bump when the rendered text changes: adapters trained on older text must not be used.
RENDERER_VERSION = 3  # 2: every relationship named (r1, r2, ...); bridges oriented by mention order
# 3: every node after the anchor named by its place (n1, n2, ...); the target said in RETURN
MAX_HOPS = 3


@dataclass(frozen=True, order=True)
class AnchorRef:
    """Where a path starts: a node by id, or (``id`` None: a label root) any node of ``labels``."""

    id: str | None
    labels: tuple[str, ...]

    @property
    def is_label_root(self) -> bool:
        return self.id is None


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
    #: the last step comes back to the root (``(n0:Person)-[r1:WROTE]->(n1:Movie)<-[r2:DIRECTED]-(n0)``:
    #: the same person wrote and directed the movie); the last node is the root, not a node of its own
    closed: bool = False

    def __post_init__(self) -> None:
        if len(self.steps) > MAX_HOPS:
            raise ValueError(f"a pattern has at most {MAX_HOPS} steps")
        if not 0 <= self.target <= len(self.steps):
            raise ValueError("the target must be a node of the path")
        # the root is the target of a path without steps (a property of the anchor, the nodes of
        # a label), and of a label root's path; an anchor with steps asks for what it reaches
        if self.target == 0 and self.steps and not self.anchor.is_label_root:
            raise ValueError("the target must be a node after the anchor")
        if not self.anchor.labels and self.anchor.is_label_root:
            raise ValueError("a label root needs a label")
        if self.end_anchor is not None:
            if not self.steps:
                raise ValueError("a second anchor ends a path of at least one step")
            if self.target == len(self.steps):
                raise ValueError("the target cannot be the second anchor")
            if self.end_anchor.is_label_root:
                raise ValueError("a second anchor is a node, by id")
        if self.closed:
            if len(self.steps) < 2 or self.end_anchor is not None:
                raise ValueError("a closed path has at least two steps and comes back to its root")
            if set(self.steps[-1].labels) != set(self.anchor.labels):
                raise ValueError("a closed path's last step reaches a node of the root's labels")
            if self.target == len(self.steps):
                raise ValueError("the last node of a closed path is its root")

    @property
    def hops(self) -> int:
        return len(self.steps)

    @property
    def nodes(self) -> range:
        """The indices of the path's distinct nodes (a closed path's last node is its root)."""
        return range(len(self.steps) + (0 if self.closed else 1))

    @property
    def anchor_ids(self) -> tuple[str, ...]:
        first = () if self.anchor.is_label_root else (self.anchor.id,)
        return first + ((self.end_anchor.id,) if self.end_anchor else ())

    @property
    def root_variable(self) -> str:
        return "n0" if self.anchor.is_label_root else "a"

    def variable(self, node: int) -> str:
        """The variable of the path's ``node``-th node (0: the root)."""
        if node == 0 or (self.closed and node == len(self.steps)):
            return self.root_variable
        if node == len(self.steps) and self.end_anchor is not None:
            return "b"
        return f"n{node}"

    def labels_of(self, node: int) -> tuple[str, ...]:
        if node == 0 or (self.closed and node == len(self.steps)):
            return self.anchor.labels
        if node == len(self.steps) and self.end_anchor is not None:
            return self.end_anchor.labels
        return self.steps[node - 1].labels

    @property
    def shape(self) -> str:
        """The pattern without its anchors' ids: labels and types along the path."""
        parts = [label_expression(self.anchor.labels)]
        for index, step in enumerate(self.steps, 1):
            arrow = f"-[:{step.type}]->" if step.outgoing else f"<-[:{step.type}]-"
            mark = "*" if index == self.target else ""
            end = "root" if self.closed and index == len(self.steps) else label_expression(step.labels)
            parts.append(f"{arrow}({mark}{end})")
        return "(" + parts[0] + ")" + "".join(parts[1:])

    def to_dict(self) -> dict[str, Any]:
        return {
            "anchor": {"id": self.anchor.id, "labels": list(self.anchor.labels)},
            "steps": [{"type": s.type, "outgoing": s.outgoing, "labels": list(s.labels)} for s in self.steps],
            "target": self.target,
            "end_anchor": (
                {"id": self.end_anchor.id, "labels": list(self.end_anchor.labels)} if self.end_anchor else None
            ),
            **({"closed": True} if self.closed else {}),
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
            bool(data.get("closed", False)),
        )


def _node(variable: str, labels: tuple[str, ...], node_id: str | None = None) -> str:
    props = f" {{id: {string_literal(node_id)}}}" if node_id is not None else ""
    return f"({variable}{label_expression(labels)}{props})"


def _reusable_pairs(pattern: Pattern) -> list[tuple[int, int]]:
    """Pairs of steps (1-based) that could walk the same relationship.

    Cypher forbids that within one MATCH path, but not every engine enforces it (FalkorDB
    does not), so the renderer says it where it can happen: same type, and the same labels
    at both ends of both steps (patterns record each node's full label set)."""

    def ends(i: int) -> tuple:  # label sets: the order a node's labels were given in does not matter
        step = pattern.steps[i - 1]
        start, end = frozenset(pattern.labels_of(i - 1)), frozenset(pattern.labels_of(i))
        return (start, end) if step.outgoing else (end, start)

    pairs = []
    for i in range(1, len(pattern.steps) + 1):
        for j in range(i + 1, len(pattern.steps) + 1):
            if pattern.steps[i - 1].type != pattern.steps[j - 1].type or ends(i) != ends(j):
                continue
            # Walking back over the first relationship from the target lands on the anchor,
            # which `n2 <> a` already excludes.
            if (i, j) == (1, 2) and pattern.target == 2 and not pattern.anchor.is_label_root:
                continue
            pairs.append((i, j))
    return pairs


def path_text(pattern: Pattern, graph_label: str | None = None) -> str:
    """``MATCH`` and the path, each part named by its place: the root ``a`` (an anchor, with its
    id) or ``n0`` (a label root), relationships ``r1``, ``r2``, ..., nodes ``n1``, ``n2``, ...
    and a second anchor ``b``."""
    root = pattern.anchor.labels + ((graph_label,) if graph_label else ())
    text = [_node(pattern.root_variable, root, pattern.anchor.id)]
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
        elif index == last and pattern.closed:
            text.append(f"({pattern.root_variable})")
        else:
            text.append(_node(f"n{index}", step.labels))
    return "MATCH " + "".join(text)


def path_conditions(pattern: Pattern) -> list[str]:
    """What keeps the path a path and its target apart from the anchors: ``nT <> a`` where
    the target's labels allow it to be an anchor (only then, so that the common query stays
    short), and ``rI <> rJ`` where two steps could walk one relationship."""
    conditions = []
    if pattern.target > 0:
        target_labels = set(pattern.labels_of(pattern.target))
        anchors = [("b", pattern.end_anchor)]
        if not pattern.anchor.is_label_root:
            anchors.insert(0, ("a", pattern.anchor))
        conditions += [
            f"n{pattern.target} <> {var}"
            for var, ref in anchors
            if ref is not None and target_labels <= set(ref.labels)
        ]
    return conditions + [f"r{i} <> r{j}" for i, j in _reusable_pairs(pattern)]


def render(pattern: Pattern, graph_label: str | None = None) -> str:
    """The canonical Cypher for a pattern that asks for its target nodes: one MATCH path on
    which no relationship is used twice, targets other than the anchors, distinct target ids.

    ``MATCH (a:Person {id: "person:Tom Hanks"})<-[r1:STARRED_ACTORS]-(n1:Movie) RETURN DISTINCT n1.id AS id``

    Written left to right: the text of each part depends only on the parts before it, so two
    candidates' texts agree up to the first part where their structures differ. Every
    relationship (``r1``, ``r2``, ...) and every node after the anchor (``n1``, ``n2``, ...; a
    second anchor ``b``) is named by its place on the path, whatever follows; which node the
    query returns is said after the whole path, in its conditions and its RETURN. (The same
    text as ``language.render`` of the query that returns the pattern's target nodes.)

    ``graph_label``: the executed form in a database that holds other graphs too (Neo4j), the
    graph's label added to the root node (relationships never leave a graph, so the root confines
    the path). Training targets and candidates are the canonical form, without it."""
    conditions = path_conditions(pattern)
    where = (" WHERE " + " AND ".join(conditions)) if conditions else ""
    return f"{path_text(pattern, graph_label)}{where} RETURN DISTINCT {pattern.variable(pattern.target)}.id AS id"


def executable(pattern: Pattern, store) -> str:
    """The query to run for ``pattern`` on ``store`` (a ``GraphStore``): the canonical text,
    confined to the store's graph where its database holds others."""
    return render(pattern, store.graph_label)


def label_roots(schema) -> list[Pattern]:
    """Queries rooted at a label: every label's nodes; one step from them along each
    relationship the schema has for that label, asking for either end; two steps along the
    schema's relationships, asking for any of the three nodes (the customers who ordered a
    product, the categories of a supplier's products), never back over the same kind of
    relationship the other way round (the other people who acted in a movie: an entity's
    question, "who acted with Tom Hanks", not a label's); and two steps that come back to the
    root along another relationship (the same person wrote and directed a movie; two people who
    follow each other), asking for the root or the node between."""
    found = [Pattern(AnchorRef(None, (label,)), (), 0) for label in schema.labels]
    steps: dict[str, list[Step]] = {}  # a label -> the steps the schema has from its nodes
    for link in schema.patterns:
        for root, step in (
            (link.source, Step(link.type, True, (link.target,))),
            (link.target, Step(link.type, False, (link.source,))),
        ):
            found += [Pattern(AnchorRef(None, (root,)), (step,), target) for target in (0, 1)]
            steps.setdefault(root, []).append(step)
    closed, walked = [], []
    for root, first_steps in steps.items():
        for first in first_steps:
            for then in steps.get(first.labels[0], []):
                # not back over the same kind of relationship the other way round (closed, that
                # would need two relationships between the same two nodes)
                if then.type == first.type and then.outgoing != first.outgoing:
                    continue
                start = AnchorRef(None, (root,))
                if then.labels == (root,):
                    closed += [Pattern(start, (first, then), target, closed=True) for target in (0, 1)]
                walked += [Pattern(start, (first, then), target) for target in (0, 1, 2)]
    return list(dict.fromkeys(found + closed + walked))


def language_paths(around: Iterable[Pattern], anchors: Iterable[AnchorRef], schema) -> list[Pattern]:
    """The paths a question's queries of the language start from (ask and synthesis alike): the
    paths around its anchors, each anchor itself, and the label roots."""
    paths = list(around) + [Pattern(anchor, (), 0) for anchor in anchors] + label_roots(schema)
    return list(dict.fromkeys(paths))
