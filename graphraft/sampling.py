"""Stable samples: the same items on every run and machine, in equal shares per hop.

Python's ``hash`` changes between runs; a SHA-1 of the item's id does not."""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable
from typing import TypeVar

T = TypeVar("T")


def stable_hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def stable_groups(items: Iterable[T], group_of: Callable[[T], Hashable], key_of: Callable[[T], str]) -> dict:
    """Items grouped (by hop, say), groups in sorted order, each in the order of its key's hash."""
    groups: dict = defaultdict(list)
    for item in items:
        groups[group_of(item)].append(item)
    return {group: sorted(groups[group], key=lambda item: stable_hash(key_of(item))) for group in sorted(groups)}
