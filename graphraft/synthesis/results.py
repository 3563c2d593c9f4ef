"""Results compared as execution accuracy compares them: does one result equal a gold query's?

Both sides become sets of rows; within a row, column order and naming are ignored and a value
counted once (an answer's ``id, title`` row is the gold's ``m.title`` row once the id is the
node's name). Values compare by kind: a node as its naming value, numbers as numbers (``3`` and
``3.0`` equal, to 6 significant digits: FalkorDB reads text as a number, ``toFloat('754.26')``,
in single precision, 754.260009765625, where Neo4j gives 754.26), text stripped, dates and times
as ISO text, lists and maps by their contents. Ordering and ``LIMIT`` are not compared beyond the rows they keep."""

from __future__ import annotations

import datetime
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

Key = Any


def normalise(value: Any, name_of: Callable[[Any], str | None] | None = None) -> Key:
    """A value as something hashable that equal results share. ``name_of`` turns a node (or
    a node id, for an answer's ``id`` column) into its name; None leaves the value as it is."""
    if name_of is not None:
        name = name_of(value)
        if name is not None:
            return ("text", name.strip())
    if value is None:
        return ("null",)
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, (int, float)):
        number = float(value)
        if math.isnan(number):
            return ("number", "nan")
        return ("number", float(f"{number:.6g}") if math.isfinite(number) else number)
    if isinstance(value, str):
        return ("text", value.strip())
    if isinstance(value, (datetime.date, datetime.time, datetime.datetime)):
        return ("text", value.isoformat())
    if hasattr(value, "iso_format"):  # neo4j.time values
        return ("text", value.iso_format())
    if isinstance(value, Mapping):
        return ("map", tuple(sorted((str(k), normalise(v, name_of)) for k, v in value.items())))
    if isinstance(value, Iterable):
        return ("list", tuple(normalise(v, name_of) for v in value))
    return ("text", str(value))


def row_key(values: Iterable[Any], name_of: Callable[[Any], str | None] | None = None) -> frozenset:
    """One row: its values, each once, in no order."""
    return frozenset(normalise(v, name_of) for v in values)


def result_key(rows: Iterable[Iterable[Any]], name_of: Callable[[Any], str | None] | None = None) -> frozenset:
    """A whole result: its rows, each once, in no order."""
    return frozenset(row_key(row, name_of) for row in rows)


def named_by(names: Mapping[str, str]) -> Callable[[Any], str | None]:
    """``name_of`` for rows whose node ids ``names`` names (id -> name)."""
    return lambda value: names.get(value) if isinstance(value, str) else None


def candidate_key(rows: Iterable[Iterable[Any]], names: Mapping[str, str]) -> frozenset:
    """A candidate query's result, its node ids named by ``names``: what ``reproduce`` compares
    with a gold result."""
    return result_key(rows, named_by(names))


def same_result(answer: Iterable[Iterable[Any]], gold: Iterable[Iterable[Any]], name_of=None) -> bool:
    """Whether an answer's rows are the gold rows (gold rows already normalised or plain values;
    ``name_of`` names the answer's node ids)."""
    return result_key(answer, name_of) == result_key(gold)


def some_rows_of(answer: Iterable[Iterable[Any]], pool: Iterable[Iterable[Any]], count: int, name_of=None) -> bool:
    """Whether an answer's rows are ``count`` distinct rows of ``pool`` (or all of them, when it
    has fewer): as good an answer as the gold's where the gold query ends in a ``LIMIT`` with no
    ``ORDER BY``, whose pick among ``pool`` (its result without the LIMIT) is arbitrary."""
    mine, whole = result_key(answer, name_of), result_key(pool)
    return mine <= whole and len(mine) == min(count, len(whole))
