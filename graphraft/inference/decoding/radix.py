"""The token trie compressed into a radix tree: a run of tokens with a single continuation
is one edge, so a search can feed it to the model in one forward call (jump-forward, as
SGLang's compressed FSM does for grammars). Only token structure lives here; decoding is in
``graphraft.inference.decoding.search``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(eq=False)
class RadixNode:
    """A node reached by ``edge`` from its parent. ``sequence`` is set where a whole candidate
    ends (its last token is the edge's last); such a node may still have children when one
    candidate is a prefix of another."""

    edge: tuple[int, ...]
    children: list[RadixNode] = field(default_factory=list)
    sequence: tuple[int, ...] | None = None
    depth: int = 0  # tokens from the root to the end of this edge

    @property
    def start(self) -> int:
        """Depth of the edge's first token."""
        return self.depth - len(self.edge)


def build_radix(sequences: Sequence[tuple[int, ...]]) -> RadixNode:
    """The radix tree of the (sorted, distinct) token sequences; the root has an empty edge."""
    root = RadixNode(())
    # an explicit stack: (node, [lo, hi) range of sequences below it, depth where its edge ends)
    stack = [(root, 0, len(sequences), 0)]
    while stack:
        node, lo, hi, depth = stack.pop()
        i = lo
        if i < hi and len(sequences[i]) == depth:  # sorted: a candidate ending here comes first
            node.sequence = sequences[i]
            i += 1
        while i < hi:
            token = sequences[i][depth]
            j = i + 1
            while j < hi and sequences[j][depth] == token:
                j += 1
            # extend the edge while every sequence in [i, j) agrees and none ends
            end = depth + 1
            while (
                len(sequences[i]) > end
                and all(len(sequences[k]) > end for k in range(i, j))
                and all(sequences[k][end] == sequences[i][end] for k in range(i + 1, j))
            ):
                end += 1
            child = RadixNode(sequences[i][depth:end], depth=end)
            node.children.append(child)
            stack.append((child, i, j, end))
            i = j
    return root


def count_tokens(root: RadixNode) -> int:
    """Tokens on all edges: what feeding the whole tree costs."""
    total, stack = 0, [root]
    while stack:
        node = stack.pop()
        total += len(node.edge)
        stack.extend(node.children)
    return total
