"""Execution accuracy: an answer's rows, compared with a gold query's as sets of rows
(``synthesis/results.py``: a node as its name, column order and naming ignored)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from typing import Any

from graphraft.errors import GraphRAFTError
from graphraft.synthesis.language import Order, Query, is_node_column, render_query
from graphraft.synthesis.reproduce import cypher_ordered, picked_among, tie_pool
from graphraft.synthesis.results import named_by, result_key, same_result, some_rows_of
from graphraft.synthesis.synthesizer import gold_order

__all__ = [
    "QueryResult",
    "answer_rows",
    "answered_by",
    "each_query",
    "picked_among_ties",
    "picked_by",
    "same_result",
    "some_rows_of",
]


def answer_rows(answer, use_selection: bool, store=None) -> list[list[Any]]:
    """What an answer says, as rows with nodes by name: the value rows of L2's chosen query
    (``use_selection``) or of the first query that returned anything, where they are values;
    else L2's chosen nodes (``use_selection``), or the nodes of the first query that returned
    any — all of them: those past the answer's node budget, which it does not name, are named
    from ``store``."""
    values = answer.named_values(query_order=not use_selection)
    if values:
        return [list(row.values()) for row in values]
    names = {node.id: node.name for node in [*answer.retrieved, *answer.answers]}
    if use_selection and answer.selected_by == "l2":
        return [[node.name] for node in answer.answers]
    top = next((q for q in answer.queries if q.ids), None)
    ids = top.ids if top else []
    unnamed = list(dict.fromkeys(node_id for node_id in ids if node_id not in names))
    if unnamed and store is not None:
        names |= node_names(store, unnamed)
    return [[names.get(node_id, node_id)] for node_id in ids]


def node_names(store, ids, timeout_ms: int | None = None) -> dict[str, str]:
    """Nodes' naming values by id, from ``store`` (a node with none: its id)."""
    rows = store.nodes_by_id(list(ids), timeout_ms=timeout_ms) if ids else []
    return {row["id"]: row["name"] if row["name"] is not None else row["id"] for row in rows}


def picked_among_ties(
    answer, gold_rows, gold_cypher: str | None, store, timeout_ms: int | None = None, use_selection: bool = False
) -> bool:
    """Whether the gold rows are another pick of the query the answer's rows came from: a query
    ordered as the gold query is (``synthesizer.gold_order``: its key or aggregate and direction)
    with the gold's LIMIT, which cuts through rows tied on that order — the gold's database picked
    other tied rows than this one does (Neo4j's gold against FalkorDB). The same rule the
    ceiling's search keeps (``reproduce.tie_pool``, ``picked_among``); runs the query once more
    without its LIMIT. ``use_selection``: the query L2 chose, where it chose one."""
    top = answered_by(answer, use_selection)
    query = answer.structure_of(top) if top is not None else None
    return picked_by(query, gold_rows, gold_cypher, store, timeout_ms)


def answered_by(answer, use_selection: bool) -> str | None:
    """The query whose result a method answers with: L2's choice (``use_selection``, where L2
    chose), else the first query that returned anything (None: none did)."""
    if use_selection and answer.selected_by == "l2" and answer.values_from is not None:
        return answer.values_from
    return next((q.cypher for q in answer.queries if q.ran and q.rows), None)


def picked_by(query, gold_rows, gold_cypher: str | None, store, timeout_ms: int | None = None) -> bool:
    """``picked_among_ties`` for one query of the language (``query``; anything else: False)."""
    order = gold_order(gold_cypher)
    gold = result_key(gold_rows)
    if (
        order is None
        or store is None
        or not isinstance(query, Query)
        or query.order is None
        or query.limit != len(gold)
        or (query.order.by, query.order.descending) != order
    ):
        return False
    whole = _unlimited(query)
    if whole is None:
        return False
    try:
        rows = store.read(render_query(whole, store.graph_label), timeout_ms=timeout_ms)
    except GraphRAFTError:
        return False
    aliases = whole.projection.aliases
    column = whole.projection.columns.index(whole.order.by)
    ordered = cypher_ordered(
        [tuple(row.get(a) for a in aliases) for row in rows], column, whole.order.descending, whole.order.numeric
    )
    if len(ordered) <= query.limit:
        return False
    sure, among = tie_pool(ordered, column, query.limit, whole.order.numeric)
    width = len(query.projection.columns)  # the order's key, where added, is the last column
    nodes = [i for i, a in enumerate(aliases[:width]) if is_node_column(a)]
    ids = {row[i] for row in ordered for i in nodes if isinstance(row[i], str)}
    try:
        name_of = named_by(node_names(store, sorted(ids), timeout_ms))
    except GraphRAFTError:
        return False
    pool = (result_key((r[:width] for r in sure), name_of), result_key((r[:width] for r in sure + among), name_of))
    return picked_among(gold, pool, len(gold))


def each_query(answer, gold_rows, gold_cypher: str | None, store, timeout_ms: int | None = None) -> list[QueryResult]:
    """Each query of the language L1 wrote for ``answer`` that ran, in the order `ask` tried them
    (L1's, less what the rules of ``inference.query_order`` move): its score,
    whether its rows are the gold's (as ``graphraft eval`` counts the answer's: exactly, or
    another pick among rows tied at the gold's LIMIT) and a digest of its result (queries with
    the same result share it). The query runs again, its whole result (an answer keeps only its
    best query's rows); one that fails is left out."""
    gold = result_key(gold_rows)
    out = []
    for info in answer.queries:
        query = answer.structure_of(info.cypher)
        if not info.ran or info.error or not isinstance(query, Query) or store is None:
            continue
        try:
            rows = store.read(render_query(query, store.graph_label), timeout_ms=timeout_ms)
            aliases = query.projection.aliases
            values = [tuple(row.get(a) for a in aliases) for row in rows]
            nodes = [i for i, a in enumerate(aliases) if is_node_column(a)]
            ids = sorted({row[i] for row in values for i in nodes if isinstance(row[i], str)})
            got = result_key(values, named_by(node_names(store, ids, timeout_ms)))
        except GraphRAFTError:
            continue
        right = got == gold or picked_by(query, gold_rows, gold_cypher, store, timeout_ms)
        digest = hashlib.sha1(repr(sorted(map(_row_text, got))).encode()).hexdigest()[:12]
        out.append(QueryResult(info.score, right, digest, len(values), info.l2_score, info.cypher))
    return out


@dataclass(frozen=True)
class QueryResult:
    """One of L1's queries against a gold result (``each_query``)."""

    score: float  # L1's log-probability of it
    right: bool
    digest: str  # the same for queries whose results are equal
    rows: int
    l2: float | None = None  # L2's score of its result as the reply (QueryInfo.l2_score)
    cypher: str | None = None  # the query


def _row_text(row: frozenset) -> str:
    """A row of a result key as text in one order (a digest's input)."""
    return repr(sorted(map(repr, row)))


def _unlimited(query: Query) -> Query | None:
    """The query without its LIMIT, returning the column it orders by: a key ordered before the
    projection (``WITH DISTINCT t ORDER BY t.key``) becomes a returned column, last."""
    order = query.order
    if not order.before:
        return replace(query, limit=None)
    projection = query.projection
    try:
        if order.by not in projection.properties:
            projection = replace(projection, properties=(*projection.properties, order.by))
        return replace(
            query, projection=projection, order=Order(order.by, order.descending, numeric=order.numeric), limit=None
        )
    except ValueError:  # not a query of the language: no pick is counted
        return None
