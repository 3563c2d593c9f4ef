"""The decoding structure for the query language: the paths as a radix tree, and below each
path the clauses, expanded only where the search goes.

Paths x filters x returns x orders is too many to list (a 1-hop path with two numbers in the
question has about 14,000 queries), so the tree is built as the search asks for children: the
paths around the anchors are tokenised and compressed into a radix tree as before
(``trie.candidate_sequences``, ``radix.build_radix``); a path's end, and each piece of clause
text after it, gets its children from ``synthesis.clauses.ClauseSpace.choices`` when the search
first looks at them. Each piece of text starts with a space or a comma after a letter or digit,
where the byte-level BPE pre-tokeniser always cuts, so tokenising the pieces one by one gives
the tokens of the whole query (invariant 4; checked on a sample of each space's queries).

The search (``search.top_m_many``) sees ordinary radix nodes whose ``children`` list is filled
on first use, so its result is exactly the best-first result over the whole space: the same m
queries, with the same scores, as listing every query and building the full tree (a test
compares the two on small spaces)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from graphraft.inference.decoding.radix import RadixNode, build_radix
from graphraft.inference.decoding.trie import _tokenize_whole, candidate_sequences
from graphraft.synthesis.clauses import ClauseSpace, Partial
from graphraft.synthesis.language import Query, query_shape, render_query
from graphraft.synthesis.patterns import Pattern, path_text


class LazyChildren:
    """A node's children, made on first use (``make`` returns them). A node below a path
    always has some (at least the end of its query), so truth needs no making."""

    __slots__ = ("_items", "_make")

    def __init__(self, make):
        self._items: list[RadixNode] | None = None
        self._make = make

    def _get(self) -> list[RadixNode]:
        if self._items is None:
            self._items, self._make = self._make(), None
        return self._items

    def __iter__(self) -> Iterator[RadixNode]:
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())

    def __bool__(self) -> bool:
        return True

    @property
    def made(self) -> bool:
        return self._items is not None


class QuerySpace:
    """One question's queries: its paths (patterns, each with its target) and the grounded
    clauses after them. ``radix()`` is what the search walks; ``query_for`` maps a finished
    token sequence back to its ``Query`` (lookup, never parsing)."""

    def __init__(self, tokenizer, patterns: Iterable[Pattern], clauses: ClauseSpace):
        self.tokenizer, self.clauses = tokenizer, clauses
        self.eos_token_id = tokenizer.eos_token_id
        by_path: dict[str, list[Pattern]] = {}
        for pattern in patterns:
            by_path.setdefault(path_text(pattern), []).append(pattern)
        self.paths = by_path
        self._pieces: dict[str, tuple[int, ...]] = {}
        self._found: dict[tuple[int, ...], Query] = {}
        self._root: RadixNode | None = None

    def __len__(self) -> int:
        """The number of paths (the queries are too many to count)."""
        return len(self.paths)

    # -- building ------------------------------------------------------------------------------
    def radix(self) -> RadixNode:
        if self._root is None:
            texts = list(self.paths)
            # the paths' tokens as listed candidates get theirs (checked against whole texts), less eos
            sequences = [s[:-1] for s in candidate_sequences(self.tokenizer, texts)]
            ends = dict(zip(sequences, texts))
            root = build_radix(sorted(set(sequences)))
            stack = [root]
            while stack:
                node = stack.pop()
                stack.extend(node.children)
                if node.sequence is not None:  # a path ends here: its clauses follow
                    prefix, partials = node.sequence, self.clauses.start(self.paths[ends[node.sequence]])
                    fixed = node.children
                    node.children = LazyChildren(lambda f=fixed, p=prefix, s=partials: f + self._expand(p, s))
                    node.sequence = None
            self._root = root
        return self._root

    def _tokens(self, piece: str) -> tuple[int, ...]:
        tokens = self._pieces.get(piece)
        if tokens is None:
            tokens = self._pieces[piece] = tuple(self.tokenizer(piece, add_special_tokens=False)["input_ids"])
        return tokens

    def _expand(self, prefix: tuple[int, ...], partials: Sequence[Partial]) -> list[RadixNode]:
        """The children after ``prefix``: each next piece of text, the pieces that begin alike
        sharing their first tokens (a small radix tree of its own)."""
        choices = self.clauses.choices(partials)
        by_tokens: dict[tuple[int, ...], list[Partial] | None] = {}
        children: list[RadixNode] = []
        for text, following in choices.items():
            if text is None:  # the query ends: eos, and its query is known by its tokens
                sequence = prefix + (self.eos_token_id,)
                self._found.setdefault(sequence, following[0].query())
                children.append(RadixNode((self.eos_token_id,), sequence=sequence, depth=len(sequence)))
            else:
                by_tokens[self._tokens(text)] = following
        if by_tokens:
            local = build_radix(sorted(by_tokens))
            children += [self._graft(child, prefix, by_tokens) for child in local.children]
        return children

    def _graft(self, node: RadixNode, prefix: tuple[int, ...], pieces: dict) -> RadixNode:
        """A node of a piece's small tree, placed after ``prefix``; where a piece ends, what
        follows it is made on first use."""
        here = prefix + node.edge
        below = [self._graft(child, here, pieces) for child in node.children]
        out = RadixNode(node.edge, depth=len(here))
        if node.sequence is None:
            out.children = below
        else:
            following = pieces[node.sequence]
            out.children = LazyChildren(lambda: below + self._expand(here, following))
        return out

    # -- queries of given shapes ------------------------------------------------------------------
    def shaped(self, shapes: Sequence[str], limit: int = 64) -> dict[str, list[Query]]:
        """The space's queries of each shape (``language.query_shape``: the text with anchors'
        ids and literals masked), at most ``limit`` a shape: the questions a solved question's
        query fits, with this question's anchors and values. Walks only the pieces whose text so
        far is the start of a shape, so the space is never listed; each piece is masked alone (a
        literal never spans two pieces)."""
        wanted = [s for s in dict.fromkeys(shapes) if s]
        found: dict[str, list[Query]] = {s: [] for s in wanted}
        stack = []
        for text, patterns in self.paths.items() if wanted else ():
            masked = query_shape(text)
            if any(s.startswith(masked) for s in wanted):
                stack.append((masked, self.clauses.start(patterns)))
        while stack:
            masked, partials = stack.pop()
            for piece, following in self.clauses.choices(partials).items():
                if piece is None:
                    if masked in found and len(found[masked]) < limit:
                        found[masked] += [p.query() for p in following][: limit - len(found[masked])]
                    continue
                longer = masked + query_shape(piece)
                if any(s.startswith(longer) and len(found[s]) < limit for s in wanted):
                    stack.append((longer, following))
        return found

    # -- reading results -------------------------------------------------------------------------
    def query_for(self, sequence: Sequence[int]) -> Query | None:
        return self._found.get(tuple(sequence))

    def leaves(self, limit: int | None = None, stride: int = 1) -> Iterator[tuple[tuple[int, ...], Query]]:
        """Finished queries with their token sequences, walking the tree depth first (every
        ``stride``-th child at each node: a sample of a large space). For tests and checks:
        walking all of a large space makes all of it."""
        stack = [self.radix()]
        count = 0
        while stack and (limit is None or count < limit):
            node = stack.pop()
            if node.sequence is not None:
                count += 1
                yield node.sequence, self._found[node.sequence]
            children = list(node.children)
            stack.extend(children[::-stride] if stride > 1 else reversed(children))

    def tokenisation_holds(self, sample: int = 16) -> bool:
        """Whether tokenising the pieces one by one gives the whole queries' tokens, on a sample
        of the space's queries (a tokenizer that merges across a space or a comma would not)."""
        found = list(self.leaves(limit=sample, stride=3))
        whole = _tokenize_whole(self.tokenizer, [render_query(q) for _, q in found], self.eos_token_id)
        return all(sequence == ids for (sequence, _), ids in zip(found, whole))
