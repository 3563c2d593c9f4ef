"""The queries of the language that give a known result: which of a question's candidate
queries return exactly what a gold query returned.

Used to measure the language's ceiling on a question set with gold Cypher (is the gold result
reachable at all?) and to turn (question, Cypher) pairs into training pairs of the language.

Listing and running every query is too slow (a 1-hop path with two numbers in the question has
thousands), so the search runs each path with each set of its filters once, reading back every
binding of the path's variables, and works out in Python what each way of returning, ordering
and limiting would give. Python only proposes: a query is kept only when the database, running
its one rendered text, returns the gold result (``evaluation.execution``: rows as sets, a node
as its name). Where rows tie at a LIMIT, Python's pick and the database's may differ; the
database decides, so a proposal can fail and a tie the database would break the gold's way can
be missed: the ceiling may be slightly under-counted, never over-counted."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from graphraft.errors import GraphRAFTError
from graphraft.graph.cypher_text import quote_identifier
from graphraft.graph.records import NAME_TEXT_PROPERTY
from graphraft.graph.store import GraphStore
from graphraft.synthesis.clauses import ClauseSpace
from graphraft.synthesis.language import Filter, Order, Projection, Query, alias, filter_order, render_query
from graphraft.synthesis.patterns import Pattern

#: a path and filters whose bindings exceed this are not worked through (their queries are skipped)
MAX_BINDINGS = 20_000


@dataclass
class Reproduction:
    queries: list[Query]  # confirmed by the database, in the order found
    proposed: int = 0  # proposals Python made (each run once on the database)
    matches: int = 0  # (path, filters) pairs run for their bindings
    skipped: int = 0  # pairs with too many bindings or an error


def filter_sets(clauses: ClauseSpace, pattern: Pattern) -> Iterator[tuple[Filter, ...]]:
    """Every set of filters the clause space allows on a path, in the renderer's order."""
    allowed = sorted(clauses.filters(pattern), key=filter_order)
    for size in range(clauses.max_filters + 1):
        yield from itertools.combinations(allowed, size)


def projections(clauses: ClauseSpace, pattern: Pattern) -> Iterator[Projection]:
    """Every projection of the clause space: the aggregates, and ids with up to
    ``max_properties`` properties (one column name each)."""
    keys = sorted(clauses.properties(pattern.labels_of(pattern.target)))
    for projection, following in clauses.projections(pattern):
        if following != "properties":
            yield projection
            continue
        for size in range(clauses.max_properties + 1):
            for chosen in itertools.combinations(keys, size):
                if len({alias(k) for k in chosen} | {"id"}) == size + 1:
                    yield Projection(chosen)


def bindings_text(query: Query, keys: list[str], graph_label: str | None) -> str:
    """The query's MATCH and WHERE, returning each node's id and name (``vI_id``, ``vI_name``)
    and the target's properties ``keys`` (``pJ``): what any projection of the path reads."""
    pattern = query.pattern
    columns = []
    for node in range(len(pattern.steps) + 1):
        variable = pattern.variable(node)
        columns += [f"{variable}.id AS v{node}_id", f"{variable}.{NAME_TEXT_PROPERTY} AS v{node}_name"]
    target = pattern.variable(pattern.target)
    columns += [f"{target}.{quote_identifier(key)} AS p{j}" for j, key in enumerate(keys)]
    text = render_query(query, graph_label)
    return text[: text.index(" RETURN ")] + " RETURN " + ", ".join(columns)


def _bindings(pattern: Pattern, keys: list[str], rows: list[dict], names: dict[str, str]) -> list[dict[str, dict]]:
    """Rows of ``bindings_text`` as {variable: {"id": ..., key: value}}, names noted in ``names``."""
    out = []
    for row in rows:
        binding = {}
        for node in range(len(pattern.steps) + 1):
            node_id = row[f"v{node}_id"]
            if node_id is not None and row[f"v{node}_name"] is not None:
                names[node_id] = row[f"v{node}_name"]
            binding[pattern.variable(node)] = {"id": node_id}
        binding[pattern.variable(pattern.target)].update({key: row[f"p{j}"] for j, key in enumerate(keys)})
        out.append(binding)
    return out


def _aggregate(function: str, values: list[Any], count_ids: set | None = None) -> Any:
    if function == "count":
        return len(count_ids or ())
    values = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if function == "sum":
        return sum(values) if values else 0
    if not values:
        return None
    if function == "min":
        return min(values)
    if function == "max":
        return max(values)
    return sum(values) / len(values)


def rows_of(query: Query, bindings: list[dict[str, dict]]) -> list[tuple]:
    """What ``query`` returns over the path's bindings, before ORDER BY and LIMIT."""
    pattern, projection = query.pattern, query.projection
    target = pattern.variable(pattern.target)
    if projection.aggregate is None:
        return list(
            dict.fromkeys((b[target].get("id"), *(b[target].get(k) for k in projection.properties)) for b in bindings)
        )
    if projection.group is None:
        groups = {None: bindings}
    else:
        group_variable = pattern.variable(projection.group)
        groups = {}
        for binding in bindings:
            groups.setdefault(binding[group_variable].get("id"), []).append(binding)
    rows = []
    for key, members in groups.items():
        value = _aggregate(
            projection.aggregate,
            [m[target].get(projection.key) for m in members] if projection.key else [],
            {m[target].get("id") for m in members},
        )
        rows.append((value,) if projection.group is None else (key, value))
    return rows


def _ordered(rows: list[tuple], column: int, descending: bool) -> list[tuple]:
    """Rows by one column as Cypher orders them (nulls last ascending, first descending)."""
    present = [r for r in rows if r[column] is not None]
    missing = [r for r in rows if r[column] is None]
    try:
        present.sort(key=lambda r: r[column], reverse=descending)
    except TypeError:  # mixed types: the database decides
        return []
    return (missing + present) if descending else (present + missing)


def reproduce(
    store: GraphStore,
    patterns: Iterable[Pattern],
    clauses: ClauseSpace,
    gold: frozenset,
    result_key: Callable[[list[tuple], dict[str, str]], frozenset],
    timeout_ms: int | None = None,
    first: bool = False,
) -> Reproduction:
    """The queries over ``patterns`` and ``clauses`` whose result is ``gold`` (a result key,
    ``evaluation.execution.result_key``). ``result_key(rows, names)`` makes a candidate's key, a
    node id named by ``names``. ``first``: stop at the first confirmed query."""
    found = Reproduction([])
    names: dict[str, str] = {}
    tried: set[str] = set()

    def confirm(query: Query) -> bool:
        text = render_query(query)
        if text in tried:
            return False
        tried.add(text)
        found.proposed += 1
        try:
            rows = store.read(render_query(query, store.graph_label), timeout_ms=timeout_ms)
        except GraphRAFTError:
            return False
        columns = query.projection.aliases
        if result_key([tuple(row.get(c) for c in columns) for row in rows], names) == gold:
            found.queries.append(query)
            return True
        return False

    for pattern in patterns:
        keys = sorted(clauses.properties(pattern.labels_of(pattern.target)))
        for filters in filter_sets(clauses, pattern):
            found.matches += 1
            text = bindings_text(Query(pattern, filters), keys, store.graph_label)
            try:
                rows = store.read(text + f" LIMIT {MAX_BINDINGS + 1}", timeout_ms=timeout_ms)
            except GraphRAFTError:
                found.skipped += 1
                continue
            if len(rows) > MAX_BINDINGS:
                found.skipped += 1
                continue
            if not rows:
                continue
            bindings = _bindings(pattern, keys, rows, names)
            for projection in projections(clauses, pattern):
                query = Query(pattern, filters, projection)
                full = rows_of(query, bindings)
                key = result_key(full, names)
                if key == gold:
                    if confirm(query) and first:
                        return found
                    continue
                if not gold < key:
                    continue
                # a part of the result: an order and a limit may keep just the gold rows
                for limit in clauses.literals.limits:
                    if limit >= len(full):
                        continue
                    for index, column in enumerate(projection.columns[1:], 1):
                        for descending in (False, True):
                            ordered = _ordered(full, index, descending)
                            if ordered and result_key(ordered[:limit], names) == gold:
                                candidate = Query(pattern, filters, projection, Order(column, descending), limit)
                                if confirm(candidate) and first:
                                    return found
    return found
