"""A token trie over candidate queries, kept apart from the decoding logic.

It is stored as the sorted list of candidate token sequences: building it is one
tokenisation and one sort, and the tokens allowed after a prefix are found by binary
search, jumping from one group of sequences to the next, so the cost of a lookup grows
with the number of distinct next tokens, not with the number of candidates."""

from __future__ import annotations

import gc
import re
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from functools import lru_cache
from itertools import chain


class TokenTrie:
    def __init__(self, sequences: Iterable[Sequence[int]]):
        self._sequences: list[tuple[int, ...]] = sorted(set(map(tuple, sequences)))
        if any(len(s) == 0 for s in self._sequences):
            raise ValueError("a candidate cannot be empty")

    def __len__(self) -> int:
        return len(self._sequences)

    @property
    def sequences(self) -> list[tuple[int, ...]]:
        """The candidates' token sequences, sorted."""
        return self._sequences

    def __contains__(self, sequence: Sequence[int]) -> bool:
        sequence = tuple(sequence)
        i = bisect_left(self._sequences, sequence)
        return i < len(self._sequences) and self._sequences[i] == sequence

    @property
    def max_length(self) -> int:
        return max((len(s) for s in self._sequences), default=0)

    def _range(self, prefix: tuple[int, ...]) -> tuple[int, int]:
        if not prefix:
            return 0, len(self._sequences)
        lo = bisect_left(self._sequences, prefix)
        hi = bisect_left(self._sequences, prefix[:-1] + (prefix[-1] + 1,), lo)
        return lo, hi

    def next_tokens(self, prefix: Sequence[int]) -> list[int]:
        """Tokens that extend ``prefix`` towards some candidate (empty: no candidate does)."""
        prefix = tuple(prefix)
        lo, hi = self._range(prefix)
        depth = len(prefix)
        found = []
        i = lo
        while i < hi:
            sequence = self._sequences[i]
            if len(sequence) == depth:  # the prefix is itself a whole candidate
                i += 1
                continue
            token = sequence[depth]
            found.append(token)
            i = bisect_left(self._sequences, prefix + (token + 1,), i, hi)
        return found


# Where byte-level BPE with GPT-2 style pre-tokenization can never merge two characters:
# before a single space between non-space characters, and (in ASCII text outside string
# literals) between a letter or digit and punctuation. Tokenising the pieces and
# concatenating then gives the ids of the whole query; a sample is checked at run time and
# any other tokenizer falls back to tokenising each query whole.
_ASCII_PUNCT = r"[!-&(-/:-@\[-`{-~]"  # ASCII punctuation except the apostrophe (contractions)
_OUTSIDE_CUT = re.compile(rf"(?<=\S)(?= \S)|(?<=[A-Za-z0-9])(?={_ASCII_PUNCT})|(?<={_ASCII_PUNCT})(?=[A-Za-z0-9])")
_SPACE_CUT = re.compile(r"(?<=\S)(?= \S)")
# A string literal with the punctuation glued to it on either side (and one space before),
# which the pre-tokenizer may merge with the quotes.
_LITERAL = re.compile(rf'( ?{_ASCII_PUNCT}*"(?:[^"\\]|\\.)*"{_ASCII_PUNCT}*)')
_SAMPLE_CHECK = 32


@lru_cache(maxsize=65_536)
def _outside_pieces(segment: str) -> tuple[str, ...]:
    return tuple(piece for piece in _OUTSIDE_CUT.split(segment) if piece)


def _literal_pieces(segment: str) -> list[str]:
    words = segment.split(" ")
    if "" in words[1:]:  # runs of spaces: the pre-tokenizer treats them specially
        return [piece for piece in _SPACE_CUT.split(segment) if piece]
    return [words[0], *(" " + word for word in words[1:])] if words[0] else [" " + w for w in words[1:]]


def _pieces(query: str) -> list[str]:
    pieces: list[str] = []
    for index, segment in enumerate(_LITERAL.split(query)):
        if segment:
            pieces.extend(_literal_pieces(segment) if index % 2 else _outside_pieces(segment))
    return pieces


def _tokenize_whole(tokenizer, queries: Sequence[str], eos: int) -> list[tuple[int, ...]]:
    return [tuple(ids) + (eos,) for ids in tokenizer(list(queries), add_special_tokens=False)["input_ids"]]


def _tokenize_by_pieces(tokenizer, queries: Sequence[str], eos: int) -> list[tuple[int, ...]]:
    """Candidates share most of their text; each distinct piece is tokenised once."""
    split = [_pieces(query) for query in queries]
    pieces = list({piece for parts in split for piece in parts})
    for parts in split:
        parts.append(None)  # stands for eos
    backend = getattr(tokenizer, "_tokenizer", None)
    if backend is not None:  # the Rust tokenizer directly: same ids, a fraction of the time
        ids = [encoding.ids for encoding in backend.encode_batch_fast(pieces, add_special_tokens=False)]
    else:
        ids = tokenizer(pieces, add_special_tokens=False)["input_ids"]
    ids_of = dict(zip(pieces, ids))
    ids_of[None] = (eos,)
    lookup = ids_of.__getitem__
    return [tuple(chain.from_iterable(map(lookup, parts))) for parts in split]


def candidate_sequences(tokenizer, queries: Sequence[str]) -> list[tuple[int, ...]]:
    """Invariant 4: each candidate is ``tokenizer(query, add_special_tokens=False) + [eos]``."""
    eos = tokenizer.eos_token_id
    queries = list(queries)
    encoded = None
    if len(queries) > _SAMPLE_CHECK:
        encoded = _tokenize_by_pieces(tokenizer, queries, eos)
        step = max(1, len(queries) // _SAMPLE_CHECK)
        sample = list(range(0, len(queries), step))[:_SAMPLE_CHECK]
        whole = _tokenize_whole(tokenizer, [queries[i] for i in sample], eos)
        if any(encoded[i] != ids for i, ids in zip(sample, whole)):
            encoded = None  # this tokenizer merges across spaces: tokenise each query whole
    return encoded if encoded is not None else _tokenize_whole(tokenizer, queries, eos)


class CandidateIndex:
    """The trie plus the way back from a token sequence to its query (lookup, never parsing)."""

    def __init__(self, tokenizer, queries: Sequence[str]):
        # Building allocates a tuple per candidate and token list; the cyclic garbage
        # collector would walk them all repeatedly (none can form a cycle).
        collecting = gc.isenabled()
        gc.disable()
        try:
            sequences = candidate_sequences(tokenizer, queries)
            self.trie = TokenTrie(sequences)
            self._query_of = dict(zip(sequences, queries))
        finally:
            if collecting:
                gc.enable()
        self.eos_token_id = tokenizer.eos_token_id
        self._radix = None

    def __len__(self) -> int:
        return len(self._query_of)

    def radix(self):
        """The trie as a radix tree (runs of single-child tokens as one edge), built once."""
        if self._radix is None:
            from graphraft.inference.decoding.radix import build_radix

            self._radix = build_radix(self.trie.sequences)
        return self._radix

    def query_for(self, generated: Sequence[int], pad_token_id: int | None = None) -> str | None:
        """The candidate a generated row spells, or None (it spells none)."""
        tokens = list(generated)
        while tokens and pad_token_id is not None and tokens[-1] == pad_token_id and tokens[-1] != self.eos_token_id:
            tokens.pop()
        if self.eos_token_id in tokens:
            tokens = tokens[: tokens.index(self.eos_token_id) + 1]
        return self._query_of.get(tuple(tokens))
