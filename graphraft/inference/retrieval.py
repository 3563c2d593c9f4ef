"""Run the chosen queries on the read-only path and textualise what they reach.

Queries run in score order, each with a timeout, until a node budget is spent. The
subgraph is written out in the style of the paper's Figure 4: one line per pattern, then
the nodes it reached with their details, within a token budget."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from graphraft.deadline import Deadline
from graphraft.errors import DatabaseUnavailableError, DeadlineExceededError, GraphRAFTError
from graphraft.graph.records import NAME_KEY_PROPERTY, NAME_TEXT_PROPERTY
from graphraft.graph.store import GraphStore
from graphraft.inference.generation import GeneratedQuery
from graphraft.inference.prompts import DETAIL_CHARS, VALUE_ROWS
from graphraft.synthesis.language import Query, is_node_column, render_query
from graphraft.synthesis.patterns import Pattern, executable

HIDDEN_PROPERTIES = {"id", "name", NAME_KEY_PROPERTY, NAME_TEXT_PROPERTY, "embedding"}


@dataclass
class QueryRun:
    cypher: str
    score: float
    node_ids: list[str] = field(default_factory=list)
    seconds: float = 0.0
    error: str | None = None
    #: a query of the language: the rows it returned, by column (ids for nodes, then values)
    rows: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Retrieval:
    runs: list[QueryRun] = field(default_factory=list)
    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> {id, name, labels, properties}
    order: list[str] = field(default_factory=list)  # node ids in query-score order
    truncated: bool = False  # the node budget stopped execution (of the paths' queries)


def execute(
    store: GraphStore,
    queries: Sequence[GeneratedQuery],
    node_budget: int = 100,
    timeout_ms: int | None = None,
    deadline: Deadline | None = None,
    patterns: dict[str, Pattern] | None = None,
) -> Retrieval:
    """Each query within ``timeout_ms`` and what is left of ``deadline``; a query that fails
    is recorded with its error and the next one runs, but a deadline passed or a database
    gone ends the whole retrieval. The node budget stops the paths' queries once spent, and
    names at most that many nodes. A query that is a candidate (in ``patterns``) runs in its
    executable form (confined to the store's graph); any other text runs as it is."""
    patterns = patterns or {}
    deadline = deadline or Deadline(None)
    timeout_ms = timeout_ms or store.query_timeout_ms
    result = Retrieval()
    seen: set[str] = set()
    for query in queries:
        # a query of the language runs whatever the budget (L2 chooses among their results;
        # the budget bounds the nodes named); a path's would only add nodes past it
        if len(seen) >= node_budget and query.query is None:
            result.truncated = True
            break
        started = time.perf_counter()
        run = QueryRun(query.cypher, query.score)
        try:
            pattern = patterns.get(query.cypher)
            limit = deadline.limit_ms(timeout_ms, "running the queries")
            if query.query is not None:
                run.rows = _language_rows(store, query.query, limit)
                rows = run.rows if query.query.returns_nodes else []
            elif pattern is not None:
                # a candidate's rows have no order of their own (no ORDER BY; each store returns
                # them its way): by id, so that answers and L2's evidence are the same on every store
                rows = sorted(store.read(executable(pattern, store), timeout_ms=limit), key=lambda row: str(row["id"]))
            else:  # text no candidate holds: a model's free query, only reading the graph
                rows = store.read_untrusted(query.cypher, timeout_ms=limit)
        except (DeadlineExceededError, DatabaseUnavailableError):
            raise
        except GraphRAFTError as exc:
            run.error = str(exc)
            rows = []
        if rows and "id" not in rows[0]:  # a query written freely may return anything
            run.error, rows = "the query returns no `id` column", []
        for row in rows:
            node_id = row["id"]
            if not isinstance(node_id, str):  # a free query's `id` that names no node (null, a number)
                continue
            run.node_ids.append(node_id)
            if node_id not in seen and len(seen) < node_budget:
                seen.add(node_id)
                result.order.append(node_id)
        run.seconds = time.perf_counter() - started
        result.runs.append(run)
    # other nodes of the path a query returned beside its answers (``id_0``), to be named
    beside = [
        value
        for run in result.runs
        for row in run.rows
        for column, value in row.items()
        if column != "id" and is_node_column(column) and isinstance(value, str) and value not in seen
    ]
    beside = list(dict.fromkeys(beside))[:node_budget]
    fetch = result.order + beside
    for row in store.nodes_by_id(fetch, timeout_ms=deadline.limit_ms(timeout_ms, "reading the answers")):
        props = row["properties"]
        name = row["name"] if row["name"] is not None else row["id"]
        result.nodes[row["id"]] = {
            "id": row["id"],
            "name": name,
            "labels": row["labels"],
            # the property that names the node (a Movie's title) is shown once, as its name
            "properties": {
                k: v for k, v in props.items() if k not in HIDDEN_PROPERTIES and not (isinstance(v, str) and v == name)
            },
        }
    return result


def _language_rows(store: GraphStore, query: Query, timeout_ms: int) -> list[dict[str, Any]]:
    """What a query of the language returns, confined to the store's graph; rows in its own
    ORDER BY, else by their values (each store returns unordered rows its own way)."""
    rows = store.read(render_query(query, store.graph_label), timeout_ms=timeout_ms)
    columns = query.projection.aliases
    rows = [{column: row.get(column) for column in columns} for row in rows]
    if query.order is None:
        rows.sort(key=lambda row: tuple(repr(row[column]) for column in columns))
    return rows


def describe_pattern(pattern: Pattern, anchor_names: dict[str, str]) -> str:
    """``(Tom Hanks:Person)<-[:STARRED_ACTORS]-(?:Movie)``: the anchors named, the target marked."""

    def node(labels, name=None, target=False):
        label = ":".join(labels)
        return f"({name}:{label})" if name else f"({'?' if target else ''}:{label})"

    text = node(pattern.anchor.labels, anchor_names.get(pattern.anchor.id, pattern.anchor.id))
    for index, step in enumerate(pattern.steps, 1):
        arrow = f"-[:{step.type}]->" if step.outgoing else f"<-[:{step.type}]-"
        if index == len(pattern.steps) and pattern.end_anchor is not None:
            end = pattern.end_anchor
            text += arrow + node(end.labels, anchor_names.get(end.id, end.id))
        else:
            text += arrow + node(step.labels, target=index == pattern.target)
    return text


def returns_values(run: QueryRun) -> bool:
    """Whether a run's rows hold values (properties, counts, aggregates) beside or instead of
    the node ids a path returns."""
    return bool(run.rows) and any(column != "id" for column in run.rows[0])


def value_row_text(row: dict[str, Any], nodes: dict[str, dict[str, Any]]) -> str:
    """One row of values as the evidence shows it and L2 writes it: ``column: value; …``, a
    node column's node by name."""
    cells = []
    for column, value in row.items():
        node = nodes.get(value) if is_node_column(column) and isinstance(value, str) else None
        cells.append(f"{column}: {node['name'] if node else value}")
    return "; ".join(cells)


def patterns_shown(evidence: str) -> int:
    """How many patterns `textualise` fitted in the budget (the first runs, in order)."""
    return sum(line.startswith("Pattern ") for line in evidence.splitlines())


def textualise(
    retrieval: Retrieval,
    patterns: dict[str, Pattern],
    anchor_names: dict[str, str],
    token_budget: int = 1_500,
    count_tokens: Callable[[str], int] | None = None,
    detail_chars: int = DETAIL_CHARS,
    max_patterns: int | None = None,
    value_rows: int = VALUE_ROWS,
) -> str:
    """Pattern lines, then ``- name (Label): details``, cut when the token budget is spent; a
    query of the language that returns values shows its first ``value_rows`` rows (``- column:
    value; …``) and how many it returned in all, so that every query's result has room.

    ``detail_chars`` 0 leaves the details out; ``max_patterns`` keeps the first runs only."""
    count_tokens = count_tokens or (lambda text: len(text) // 4 + 1)
    lines: list[str] = []
    used = 0
    shown: set[str] = set()
    for number, run in enumerate(retrieval.runs[:max_patterns], 1):
        pattern = patterns.get(run.cypher)
        header = f"Pattern {number}: " + (describe_pattern(pattern, anchor_names) if pattern else run.cypher)
        block = [header]
        if returns_values(run):  # values: the rows themselves
            block += ["- " + value_row_text(row, retrieval.nodes) for row in run.rows[:value_rows]]
            if len(run.rows) > value_rows:
                block.append(f"- … {len(run.rows)} rows in all")
            run_nodes: list[str] = []
        else:
            run_nodes = run.node_ids
        for node_id in run_nodes:
            node = retrieval.nodes.get(node_id)
            if node is None:
                continue
            labels = ", ".join(node["labels"])
            if node_id in shown:
                block.append(f"- {node['name']} ({labels})")
                continue
            details = "; ".join(f"{k}: {v}" for k, v in sorted(node["properties"].items())) if detail_chars else ""
            if len(details) > detail_chars:
                details = details[: detail_chars - 3] + "..."
            block.append(f"- {node['name']} ({labels})" + (f": {details}" if details else ""))
            shown.add(node_id)
        for line in block:
            cost = count_tokens(line)
            if used + cost > token_budget:
                return "\n".join(lines)
            lines.append(line)
            used += cost
    return "\n".join(lines)
