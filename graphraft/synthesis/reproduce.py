"""The queries of the language that give a known result: which of a question's candidate
queries return exactly what a gold query returned.

Used to measure the language's ceiling on a question set with gold Cypher (is the gold result
reachable at all?) and to turn (question, Cypher) pairs into training pairs of the language.

Listing and running every query is too slow (a 1-hop path with two numbers in the question has
thousands), so the search runs each path once, reading back every binding of its variables with
their properties, and works out in Python what each set of filters (``holds``: Cypher's rules for a
comparison) and each way of returning, ordering and limiting would give. Python only proposes:
a query is kept only when the database, running its one rendered text, returns the gold result
(``synthesis.results``: rows as sets, a node as its name). Where rows tie at a LIMIT, Python's
pick and the database's may differ; the database decides, so a proposal can fail and a tie the
database would break the gold's way can be missed: the ceiling may be slightly under-counted, never
over-counted. A confirmed query whose LIMIT cut through such a tie is marked (``Reproduction.tied``):
the database's pick, not the query, gave the gold rows, and a training pair prefers another."""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import operator
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from graphraft.errors import GraphRAFTError
from graphraft.graph.cypher_text import quote_identifier
from graphraft.graph.records import NAME_TEXT_PROPERTY
from graphraft.graph.schema import number_of
from graphraft.graph.store import GraphStore
from graphraft.synthesis.clauses import ClauseSpace, orderings
from graphraft.synthesis.language import (
    EXISTENCE,
    Filter,
    Order,
    Projection,
    Query,
    filter_order,
    is_number,
    render_query,
)
from graphraft.synthesis.patterns import AnchorRef, Pattern, Step, path_text

#: a path and filters whose bindings exceed this are not worked through (their queries are skipped)
MAX_BINDINGS = 20_000


@dataclass
class Reproduction:
    queries: list[Query]  # confirmed by the database (``lazy``: foreseen, not yet run), in the order found
    proposed: int = 0  # proposals Python made (each run once on the database, unless ``lazy``)
    ran: int = 0  # queries run on the database to confirm their result
    matches: int = 0  # paths run for their bindings
    skipped: int = 0  # paths with too many bindings or an error
    exhausted: bool = False  # the budget ended the search before every path was worked through
    work: float = 0  # what the search did, in WORK units (``reproduce``'s budget counts them)
    #: what it did, by kind (``WORK``'s keys): how many of each thing
    parts: dict[str, int] = dataclasses.field(default_factory=dict)
    #: the rendered texts of confirmed queries whose LIMIT cuts through rows tied on their order:
    #: the database's arbitrary pick among them gave the gold result (``ties_at_limit``)
    tied: set[str] = dataclasses.field(default_factory=set)
    #: of those, the texts whose rows are another pick among the tied rows than the gold's (its
    #: LIMIT keeps every row any pick keeps, and the gold's rows are one pick too)
    picked: set[str] = dataclasses.field(default_factory=set)

    #: ``lazy``: whether the database gives a foreseen query's result (``first_confirmed``)
    confirm: Callable[[Query], bool] | None = dataclasses.field(default=None, repr=False)

    def count(self, kind: str, things: int = 1) -> None:
        """``things`` of a kind of work done (``WORK``)."""
        self.parts[kind] = self.parts.get(kind, 0) + things
        self.work += WORK[kind] * things

    def first_confirmed(self, queries: Iterable[Query]) -> Query | None:
        """The first of ``queries`` the database confirms: each is run, in turn, until one gives
        the gold result (a search run ``lazy``, whose queries Python foresaw), or the first of them
        (a search whose queries the database confirmed as it found them)."""
        for query in queries:
            if self.confirm is None or self.confirm(query):
                return query
        return None


#: ``admit(variable, key)``: whether a column of that variable's ``key`` (``id``: the node) may
#: be returned — some binding's value of it is among the gold's values
Admit = Callable[[str, str], bool]


def projections(clauses: ClauseSpace, pattern: Pattern, admit: Admit | None = None) -> Iterator[Projection]:
    """Every projection of the clause space: the aggregates, and ids with up to
    ``max_properties`` properties, ``max_others`` other nodes' columns and ``max_edges``
    relationships' (one column name each). ``admit``: only those whose every returned column
    it admits (the group of an aggregate too; an aggregate's own value is not checked)."""
    admit = admit or (lambda variable, key: True)
    target = pattern.variable(pattern.target)
    keys = [k for k in sorted(clauses.properties(pattern.labels_of(pattern.target))) if admit(target, k)]
    others = [(n, k) for n, k in clauses.other_columns(pattern) if admit(pattern.variable(n), k or "id")]
    edges = [(step, k) for step, k in clauses.edge_columns(pattern) if admit(f"r{step}", k)]
    for projection, following in clauses.projections(pattern):
        if projection.group is not None and not admit(pattern.variable(projection.group), projection.group_key or "id"):
            continue
        if following == "having":  # the groups kept, with their aggregate beside them or not
            yield projection
            yield dataclasses.replace(projection, hidden=False)
            continue
        if following != "properties":
            yield projection
            continue
        for size in range(1, clauses.max_properties + 1):  # values alone, no ids
            for chosen in itertools.combinations(keys, size):
                yield Projection(chosen, values=True)
        if not admit(target, "id"):  # every other row holds the target itself
            continue
        for size in range(clauses.max_properties + 1):
            for chosen in itertools.combinations(keys, size):
                for count in range(clauses.max_others + 1):
                    for beside in itertools.combinations(others, count):
                        for many in range(clauses.max_edges + 1):
                            for along in itertools.combinations(edges, many):
                                with contextlib.suppress(ValueError):  # two columns of one name
                                    yield Projection(chosen, others=beside, edges=along)


def _keys_of(clauses: ClauseSpace, pattern: Pattern) -> dict[str, list[str]]:
    """For each variable of the path, the property keys a filter or a projection may read."""
    keys = {}
    for node in pattern.nodes:
        keys[pattern.variable(node)] = sorted(clauses.properties(pattern.labels_of(node)))
    for step in range(1, len(pattern.steps) + 1):
        kind = pattern.steps[step - 1].type
        keys[f"r{step}"] = sorted(clauses.schema.relationship_properties.get(kind, {}))
    return keys


def bindings_text(pattern: Pattern, keys: dict[str, list[str]], graph_label: str | None) -> str:
    """The path (with the conditions that keep it a path), returning each node's id and name and
    every property in ``keys``: what any filter and projection of the path reads."""
    columns = []
    for index, (variable, names) in enumerate(keys.items()):
        if not variable.startswith("r"):
            columns += [f"{variable}.id AS c{index}_id", f"{variable}.{NAME_TEXT_PROPERTY} AS c{index}_name"]
        columns += [f"{variable}.{quote_identifier(key)} AS c{index}_{j}" for j, key in enumerate(names)]
    text = render_query(Query(pattern), graph_label)
    return text[: text.index(" RETURN ")] + " RETURN " + ", ".join(columns)


def _frozen(value: Any) -> Any:
    """A list property (an actor's ``roles``) as a tuple, so that rows holding it can be told
    apart as Cypher's DISTINCT does (a tuple compares as the list would)."""
    return tuple(_frozen(v) for v in value) if isinstance(value, list) else value


def _bindings(keys: dict[str, list[str]], rows: list[dict], names: dict[str, str]) -> list[dict[str, dict]]:
    """Rows of ``bindings_text`` as {variable: {"id": ..., key: value}}, names noted in ``names``."""
    out = []
    for row in rows:
        binding = {}
        for index, (variable, props) in enumerate(keys.items()):
            values = {key: _frozen(row[f"c{index}_{j}"]) for j, key in enumerate(props)}
            if not variable.startswith("r"):
                values["id"] = row[f"c{index}_id"]
                if values["id"] is not None and row[f"c{index}_name"] is not None:
                    names[values["id"]] = row[f"c{index}_name"]
            binding[variable] = values
        out.append(binding)
    return out


def _linked(
    store: GraphStore, labels: tuple[str, ...], item: Filter, cache: dict, timeout_ms: int | None
) -> set | None:
    """The ids of the nodes of ``labels`` that have the relationship an existence test names
    (None: the database did not say)."""
    key = (labels, item.key, item.outgoing, item.value)
    if key not in cache:
        probe = Query(Pattern(AnchorRef(None, labels), (Step(item.key, bool(item.outgoing), (str(item.value),)),), 0))
        try:
            cache[key] = {
                row["id"] for row in store.read(render_query(probe, store.graph_label), timeout_ms=timeout_ms)
            }
        except GraphRAFTError:
            cache[key] = None
    return cache[key]


def _admitted(bindings: list[dict[str, dict]], gold_values: frozenset, key: Callable[[Any], frozenset]) -> Admit:
    """``admit`` for a path's bindings: a column may be returned only if some binding's value of it
    is one of the gold's values (``key(value)``: the result key of one row of that value). Every
    value a result returns is in one of its rows, so a column none of whose values is the gold's
    cannot give the gold result, whatever the filters, order or limit keep."""
    memo: dict[tuple[str, str], bool] = {}

    def admit(variable: str, name: str) -> bool:
        if (variable, name) not in memo:
            values = {binding[variable].get(name) for binding in bindings}
            memo[variable, name] = any(next(iter(next(iter(key(v))))) in gold_values for v in values)
        return memo[variable, name]

    return admit


def _kind(value: Any) -> str | None:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "text"
    return None


#: the comparisons of the language (a filter's, a kept group's), as Python's operators
COMPARE = {
    "=": operator.eq,
    "<>": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def holds(item: Filter, value: Any) -> bool:
    """Whether a filter keeps a row whose filtered property is ``value`` (Cypher's rules: a
    comparison with null, or between values of different kinds, keeps nothing)."""
    if item.op == "IS NULL":
        return value is None
    if item.op == "IS NOT NULL":
        return value is not None
    if item.numeric:
        value = number_of(value)
    if value is None or _kind(value) is None or _kind(value) != _kind(item.value):
        return False
    if item.op == "CONTAINS":
        return item.value in value
    if item.op == "STARTS WITH":
        return value.startswith(item.value)
    if item.op not in ("=", "<>") and _kind(value) == "bool":  # booleans are not ordered
        return False
    return COMPARE[item.op](value, item.value)


def _aggregate(function: str, values: list[Any], numeric: bool = False) -> Any:
    """The min, max, avg or sum of a group: of the numbers among ``values`` (of text read as
    numbers where ``numeric``; count is ``_group_aggregates``' own)."""
    if numeric:
        values = [number_of(v) for v in values]
    values = [v for v in values if is_number(v)]
    if function == "sum":
        return sum(values) if values else 0
    if not values:
        return None
    if function == "min":
        return min(values)
    if function == "max":
        return max(values)
    return sum(values) / len(values)


def rows_of(
    query: Query, bindings: list[dict[str, dict]], targets: list[dict] | None = None, memo: dict | None = None
) -> list[tuple]:
    """What ``query`` returns over the path's bindings, before ORDER BY and LIMIT (``targets``:
    the distinct target nodes of the bindings, when already known; ``memo``: the groups'
    aggregates worked out before on the same bindings, kept for the next query)."""
    pattern, projection = query.pattern, query.projection
    target = pattern.variable(pattern.target)
    if projection.values:  # DISTINCT over the values: targets sharing them give one row
        if targets is None:
            targets = list({b[target].get("id"): b[target] for b in bindings}.values())
        return list(dict.fromkeys(tuple(t.get(k) for k in projection.properties) for t in targets))
    if projection.aggregate is None and projection.beside:
        beside = [(pattern.variable(node), key or "id") for node, key in projection.others]
        beside += [(f"r{step}", key) for step, key in projection.edges]
        return list(
            dict.fromkeys(
                (b[target].get("id"), *(b[target].get(k) for k in projection.properties))
                + tuple(b[variable].get(key) for variable, key in beside)
                for b in bindings
            )
        )
    if projection.aggregate is None:
        if targets is None:
            targets = list({b[target].get("id"): b[target] for b in bindings}.values())
        return list(dict.fromkeys((t.get("id"), *(t.get(k) for k in projection.properties)) for t in targets))
    memo = {} if memo is None else memo
    found = (
        projection.group,
        projection.group_key,
        projection.aggregate,
        projection.key,
        projection.step,
        projection.every,
        projection.numeric,
    )
    if found not in memo:
        memo[found] = _group_aggregates(query, bindings, memo)
    if projection.having is None:
        return [(value,) if projection.group is None else (key, value) for key, value in memo[found]]
    compare, number = COMPARE[projection.having[0]], projection.having[1]
    # a number compared with a number (an aggregate of nothing is null, and keeps nothing)
    kept = [(key, value) for key, value in memo[found] if is_number(value) and compare(value, number)]
    return [(key,) for key, _ in kept] if projection.hidden else kept


def groups_of(query: Query, bindings: list[dict[str, dict]], memo: dict) -> dict[Any, list]:
    """The bindings by the query's group (its node, or that node's property; no group: one, key
    None), made once for the bindings ``memo`` is kept with."""
    pattern, projection = query.pattern, query.projection
    if projection.group is None:
        return {None: bindings}
    variable, key = pattern.variable(projection.group), projection.group_key or "id"
    if (variable, key) not in memo:
        grouped: dict[Any, list] = {}
        for binding in bindings:
            grouped.setdefault(binding[variable].get(key), []).append(binding)
        memo[variable, key] = grouped
    return memo[variable, key]


def _group_aggregates(query: Query, bindings: list[dict[str, dict]], memo: dict) -> list[tuple]:
    """(the group's key, its aggregate) for each group of the bindings (one group: key None)."""
    pattern, projection = query.pattern, query.projection
    target = pattern.variable(pattern.target)
    owner = target if projection.step is None else f"r{projection.step}"  # whose property is aggregated
    groups = groups_of(query, bindings, memo)
    if projection.aggregate == "count":  # the targets counted: each binding's, or each once
        return [
            (
                key,
                len(members) if projection.every else len({m[target].get("id") for m in members}),
            )
            for key, members in groups.items()
        ]
    return [
        (
            key,
            _aggregate(projection.aggregate, [m[owner].get(projection.key) for m in members], projection.numeric),
        )
        for key, members in groups.items()
    ]


def _order_value(value: Any, numeric: bool) -> Any:
    """What an order sorts on: the value, or for text that holds numbers ordered as numbers
    (``Order.numeric``) ``toFloat`` of it."""
    return number_of(value) if numeric else value


def cypher_ordered(rows: list[tuple], column: int, descending: bool, numeric: bool = False) -> list[tuple]:
    """Rows by one column as Cypher orders them (nulls last ascending, first descending);
    ``numeric``: text that holds numbers, ordered by ``toFloat`` of it (``Order.numeric``)."""

    def value(row: tuple) -> Any:
        return _order_value(row[column], numeric)

    present = [r for r in rows if value(r) is not None]
    missing = [r for r in rows if value(r) is None]
    try:
        present.sort(key=value, reverse=descending)
    except TypeError:  # mixed types: the database decides
        return []
    return (missing + present) if descending else (present + missing)


#: where a LIMIT cuts through tied rows: (the rows any pick keeps, the rows it picks from), result keys
Pool = tuple[frozenset, frozenset]


def tie_pool(ordered: list[tuple], column: int, limit: int, numeric: bool = False) -> tuple[list[tuple], list[tuple]]:
    """Rows ordered by ``column``, cut by a LIMIT of ``limit``: those ordered before the last
    kept row's value (kept whatever the database picks) and those tied with it (it picks among them)."""

    cut = _order_value(ordered[limit - 1][column], numeric)
    return (
        [r for r in ordered[:limit] if _order_value(r[column], numeric) != cut],
        [r for r in ordered if _order_value(r[column], numeric) == cut],
    )


def picked_among(result: frozenset, pool: Pool, count: int) -> bool:
    """Whether ``result`` is one pick of a LIMIT of ``count`` through tied rows: every row it
    must keep, and the rest from the tied ones."""
    sure, every = pool
    return len(result) == count and sure <= result <= every


def ties_at_limit(ordered: list[tuple], column: int, limit: int, numeric: bool = False) -> bool:
    """Whether a LIMIT of ``limit`` cuts through rows tied on ``column`` (ordered by it): which of
    them it keeps is the database's arbitrary pick, not anything the query says."""
    if not 0 < limit < len(ordered):
        return False
    return _order_value(ordered[limit - 1][column], numeric) == _order_value(ordered[limit][column], numeric)


def _fits(projection: Projection, widths: set[int], rows: int) -> bool:
    """Whether a projection can give rows as wide as the gold's (a row's values counted once: an
    id named like one of the properties beside it counts once)."""
    if projection.values:
        return len(projection.properties) in widths
    if projection.aggregate is None:
        width = len(projection.properties) + len(projection.others) + len(projection.edges) + 1
        nodes = 1 + sum(key is None for _, key in projection.others)  # each may be named beside it
        return any(width - nodes <= w <= width for w in widths)
    if projection.group is None:
        return rows == 1 and widths == {1}
    if projection.hidden:
        return 1 in widths
    return any(w in (1, 2) for w in widths)


#: the most bindings the search keeps read between its passes (paths beyond it are read again)
KEPT_BINDINGS = 200_000

#: The search's work, counted the same on any machine and beside any other search, so its budget
#: stops it at the same point: the same pairs wherever and however many at a time they are made.
#: Units per thing done (``Reproduction.parts`` counts the things), fitted by
#: ``benchmarks/work_fit.py`` (non-negative least squares) on the times of northwind searches: a
#: unit is about a microsecond of one core of the machine fitted on, alone; whole searches of
#: 6-80 s were predicted off by 10 % of their seconds in all, 22 % at most for one (README "Synthesis").
WORK: dict[str, float] = {
    "cell": 12,  # a value read from the database (a path's bindings, before the search)
    "filtered": 1.25,  # a binding tested by a filter
    "intersected": 0.16,  # a binding one filter keeps, looked up among those another keeps
    "projection": 5,  # a projection worked out over a filter set's bindings ...
    "grouped": 0.9,  # ... a binding grouped and aggregated (once per group and aggregate: kept after)
    "row": 3.5,  # ... and a row of its result
    "sorted": 1,  # a row sorted by an order (each order of each projection's rows, each key's targets)
    "pooled": 35,  # a row of the rows tied at a LIMIT, made a result to compare
    "query": 1700,  # a query the database runs to confirm a result
}


@dataclass
class _PathState:
    """What the search knows of one path between its passes: its bindings, which projections
    could give rows as wide as the gold's, the bindings each filter keeps, and the sets of
    bindings a filter set already kept, each with what gave the gold over them (another set
    keeping the same gives the same results: only those need the database's word again)."""

    pattern: Pattern
    every: list[dict[str, dict]]
    shaped: list[Projection]
    allowed: list[Filter]
    kept: dict[Filter, frozenset[int]] = dataclasses.field(default_factory=dict)
    #: bindings kept -> (projection, order, limit, tied) of each query confirmed over them
    subsets: dict[frozenset[int], list[tuple]] = dataclasses.field(default_factory=dict)
    #: every binding's index (what no filter keeps)
    everything: frozenset[int] = dataclasses.field(init=False)

    def __post_init__(self) -> None:
        self.everything = frozenset(range(len(self.every)))


def reproduce(
    store: GraphStore,
    patterns: Iterable[Pattern],
    clauses: ClauseSpace,
    gold: frozenset,
    result_key: Callable[[list[tuple], dict[str, str]], frozenset],
    timeout_ms: int | None = None,
    first: bool = False,
    budget: int | None = None,
    budget_s: float | None = None,
    order: tuple[str, bool] | None = None,
    lazy: bool = False,
) -> Reproduction:
    """The queries over ``patterns`` and ``clauses`` whose result is ``gold`` (a result key,
    ``synthesis.results.result_key``). ``result_key(rows, names)`` makes a candidate's key, a
    node id named by ``names``. ``first``: stop at the first confirmed query; ``budget``: stop
    after that much work (``WORK`` units: the same point on any machine); ``budget_s``: after
    that many seconds, whatever the work (``exhausted`` says either). ``order``: the gold query's
    (key, descending), where its LIMIT may keep every row: no result tells that order, so a query
    that gives the gold with a stated LIMIT is also confirmed ordered so (``hinted_order``); and
    where a query ordered so cuts through tied rows, the gold's pick among them (another
    database's) is as good as this one's (``Reproduction.picked``). ``lazy``: the queries whose
    result Python foresees to be the gold are kept without running them (work counted as if they
    ran: the budget stops at the same point); ``Reproduction.first_confirmed`` runs those a caller
    wants, best first — on a small graph thousands of queries give a count's result, and a query
    of a new shape takes Neo4j tens of milliseconds to plan.

    Simplest first: the queries of fewest steps and filters together (a label's nodes with no
    filter; then with one filter, or one step away with none; ...), every path at each count
    before the next — a gold query of a 1-hop path is not left behind the thousands of filter
    sets of a 0-hop one, so a search the budget stops has tried the simpler queries everywhere.
    Where the question names an entity, a label root counts one step more: the paths from the
    entity, few bindings each, come before the label's filters. At each count, the paths of fewest
    bindings first (a budget spent on one path's thousands of filter sets has tried the others);
    of a label root's path and its mirror (``one_of_mirrors``), only the one a pair could teach."""
    found = Reproduction([])
    started = time.perf_counter()
    widths = {len(row) for row in gold}
    gold_values = frozenset().union(*gold)  # a row is a set of values: each of a result's is one of these
    names: dict[str, str] = {}
    tried: set[str] = set()
    linked: dict[tuple, set | None] = {}  # the ids of a label's nodes that have a kind of relationship
    patterns = one_of_mirrors(list(patterns))
    states: dict[int, _PathState | None] = {}  # kept between passes
    #: a MATCH's bindings and the bindings each filter keeps, up to KEPT_BINDINGS bindings in all
    read: dict[str, tuple[list[dict[str, dict]], dict[Filter, frozenset[int]]]] = {}
    sizes: dict[int, int] = {}  # each path's number of bindings, once read
    held = 0

    foreseen: dict[str, tuple[bool, Pool | None]] = {}  # lazy: a query's text -> (tied, pool), for its run later

    def confirm(query: Query, tied: bool = False, pool: Pool | None = None) -> bool:
        """Whether the database's rows for ``query`` are the gold's (``lazy``: kept as foreseen,
        to be run later); ``pool``, where its LIMIT cuts through tied rows: (the rows any pick
        keeps, the rows it picks from), and its own pick among them is as good as the gold's."""
        text = render_query(query)
        if text in tried:
            return False
        tried.add(text)
        found.proposed += 1
        found.count("query")
        if lazy:
            found.queries.append(query)
            if tied:
                found.tied.add(text)
            foreseen[text] = tied, pool
            return True
        return run(query, text, tied, pool)

    def run(query: Query, text: str, tied: bool, pool: Pool | None) -> bool:
        found.ran += 1
        try:
            rows = store.read(render_query(query, store.graph_label), timeout_ms=timeout_ms)
        except GraphRAFTError:
            return False
        columns = query.projection.aliases
        got = result_key([tuple(row.get(c) for c in columns) for row in rows], names)
        if got == gold or (pool is not None and picked_among(got, pool, len(gold))):
            if not lazy:
                found.queries.append(query)
            if tied:
                found.tied.add(text)
            if got != gold:
                found.picked.add(text)
            return True
        return False

    def run_foreseen(query: Query) -> bool:
        """A foreseen query (lazy), run now: whether the database gives the gold result."""
        text = render_query(query)
        return text in foreseen and run(query, text, *foreseen[text])

    if lazy:
        found.confirm = run_foreseen

    def gives_gold(rows: list[tuple]) -> bool:
        return result_key(rows, names) == gold

    def pool_of(sure: list[tuple], among: list[tuple]) -> Pool | None:
        """The rows a LIMIT keeps whatever its pick and those it picks from, as result keys,
        where the gold is one such pick (else None)."""
        found.count("pooled", 2 * len(sure) + len(among))
        pool = (result_key(sure, names), result_key(sure + among, names))
        return pool if picked_among(gold, pool, len(gold)) else None

    def over() -> bool:
        """Whether the search has spent its budget (of work, or of seconds)."""
        return (budget is not None and found.work > budget) or (
            budget_s is not None and time.perf_counter() - started > budget_s
        )

    def state_of(index: int) -> _PathState | None:
        """The path's state, read (again) when not kept; None: too many bindings, or an error.
        The paths of one MATCH (the same path, another target) share its bindings, read once,
        and the bindings each filter keeps."""
        nonlocal held
        if index in states:
            return states[index]
        pattern = patterns[index]
        keys = _keys_of(clauses, pattern)
        text = bindings_text(pattern, keys, store.graph_label)
        if text in read:
            every, kept = read[text]
        else:
            try:
                rows = store.read(text + f" LIMIT {MAX_BINDINGS + 1}", timeout_ms=timeout_ms)
            except GraphRAFTError:
                states[index] = None
                found.skipped += 1
                return None
            if len(rows) > MAX_BINDINGS:
                states[index] = None
                found.skipped += 1
                return None
            found.count("cell", len(rows) * (len(rows[0]) if rows else 0))
            every, kept = _bindings(keys, rows, names), {}
            if held + len(every) <= KEPT_BINDINGS:
                read[text] = every, kept
                held += len(every)
        sizes[index] = len(every)
        admit = _admitted(every, gold_values, lambda value: result_key([(value,)], names))
        shaped = [p for p in projections(clauses, pattern, admit) if _fits(p, widths, len(gold))]
        state = _PathState(pattern, every, shaped, sorted(clauses.filters(pattern), key=filter_order), kept)
        if text in read:
            states[index] = state
        return state

    # simplest first: a query's steps and filters counted together, a label root's as one more
    # where the question names an entity (its answer most often starts from it)
    named = any(not pattern.anchor.is_label_root for pattern in patterns)
    steps = [len(p.steps) + (1 if named and p.anchor.is_label_root else 0) for p in patterns]
    for simplicity in range(max(steps, default=0) + clauses.max_filters + 1):
        # the paths new at this count (no filter) in their order, then the others, fewest
        # bindings first: the cheap ones are all tried before one path's many filters spend the budget
        level = [i for i in range(len(patterns)) if 0 <= simplicity - steps[i] <= clauses.max_filters]
        level.sort(key=lambda i: (simplicity > steps[i], sizes.get(i, 0), i))
        for index in level:
            size = simplicity - steps[index]
            if size == 0:
                found.matches += 1
            state = state_of(index)
            if state is None:
                continue
            for filters in itertools.combinations(state.allowed, size):
                if over():
                    found.exhausted = True
                    return found
                hit = _search(
                    state,
                    filters,
                    store,
                    clauses,
                    gold,
                    gives_gold,
                    pool_of,
                    linked,
                    timeout_ms,
                    confirm,
                    first,
                    found=found,
                    order=order,
                    over=over,
                )
                if hit and first:
                    return found
    return found


def mirror(pattern: Pattern) -> Pattern | None:
    """The same path walked from its other end (a label root's, to its target): the same bindings,
    so the same results for the same clauses. None where there is none (an entity's path, a closed
    path, a path without steps)."""
    if not pattern.anchor.is_label_root or pattern.end_anchor is not None or pattern.closed or not pattern.steps:
        return None
    labels = [pattern.labels_of(node) for node in pattern.nodes]
    steps = tuple(Step(step.type, not step.outgoing, labels[i]) for i, step in reversed(list(enumerate(pattern.steps))))
    return Pattern(AnchorRef(None, labels[-1]), steps, len(pattern.steps) - pattern.target)


def one_of_mirrors(patterns: list[Pattern]) -> list[Pattern]:
    """``patterns`` less each whose mirror is among them and renders a path of earlier text: a
    query and its mirror give the same results and tie on everything a training pair weighs but
    their text (``synthesizer.simplicity``), which first differs in the path (``path_text``), so
    only the one of earlier text can be taught."""
    present = set(patterns)
    kept = []
    for pattern in patterns:
        other = mirror(pattern)
        if other is not None and other != pattern and other in present and path_text(other) < path_text(pattern):
            continue
        kept.append(pattern)
    return kept


def hinted_order(query: Query, order: tuple[str, bool] | None, clauses: ClauseSpace) -> Order | None:
    """The gold's order, ``(key, descending)``, as an order of ``query``: on a column it returns
    by that key (a property, or the aggregate of that name), else, where it returns its target
    nodes alone, on the target's property of that key before the projection; None where neither."""
    if order is None:
        return None
    key, descending = order
    projection, pattern = query.projection, query.pattern
    if key in projection.columns and key != "id":
        return Order(key, descending, numeric=key in clauses.numeric_columns(pattern, projection))
    target_keys = clauses.properties(pattern.labels_of(pattern.target))
    if _targets_alone(projection) and key in target_keys and _many_targets(pattern):
        return Order(key, descending, before=True, numeric=target_keys[key].numeric)
    return None


def _target_rows(ordered: list[tuple], projection: Projection) -> list[tuple]:
    """The rows ``projection`` returns of ``(value, target node)`` pairs: the ids, then its properties."""
    return [(t.get("id"), *(t.get(k) for k in projection.properties)) for _, t in ordered]


def _targets_alone(projection: Projection) -> bool:
    """It returns a row per target node, of the target's own columns (what an order before the
    projection may sort)."""
    return projection.aggregate is None and not projection.beside and not projection.values


def _many_targets(pattern: Pattern) -> bool:
    """Its target may be more than one node (not the entity the question names)."""
    return not (pattern.target == 0 and not pattern.anchor.is_label_root)


def _search(
    state: _PathState,
    filters: tuple[Filter, ...],
    store: GraphStore,
    clauses: ClauseSpace,
    gold: frozenset,
    gives_gold: Callable[[list[tuple]], bool],
    pool_of: Callable[[list[tuple], list[tuple]], Pool | None],
    linked: dict[tuple, set | None],
    timeout_ms: int | None,
    confirm: Callable[..., bool],
    first: bool = False,
    *,
    found: Reproduction,
    order: tuple[str, bool] | None = None,
    over: Callable[[], bool] = lambda: False,
) -> bool:
    """Work out what each projection, order and limit gives on the bindings ``filters`` keep, and
    have the database confirm those that give the gold result; whether one was confirmed
    (``first``: stop at the first). ``pool_of(sure, among)``: where a LIMIT cuts through tied
    rows of the gold's own order, whether the gold is one of its picks (``confirm``'s pool, or
    None). ``found``: where the work done is counted; ``order``: the gold's, as ``reproduce``
    takes it; ``over``: whether the budget is spent (checked before each projection: the search
    stops there, and ``reproduce`` says so)."""
    pattern, every, kept = state.pattern, state.every, state.kept
    target = pattern.variable(pattern.target)
    for item in filters:
        if item not in kept:
            found.count("filtered", len(every))
            variable = f"r{item.element}" if item.relationship else pattern.variable(item.element)
            if item.op in EXISTENCE:
                having = _linked(store, pattern.labels_of(item.element), item, linked, timeout_ms)
                kept[item] = frozenset(
                    i for i, b in enumerate(every) if having is not None and b[variable]["id"] not in having
                )
            else:
                kept[item] = frozenset(i for i, b in enumerate(every) if holds(item, b[variable].get(item.key)))

    def together(chosen_filters) -> frozenset[int]:
        """The bindings every one of ``chosen_filters`` keeps (no filter: every binding)."""
        sets = sorted((kept[item] for item in chosen_filters), key=len)
        if not sets:
            return state.everything
        if len(sets) == 1:
            return sets[0]
        found.count("intersected", len(sets[0]) * (len(sets) - 1))
        return sets[0].intersection(*sets[1:])

    chosen = together(filters)
    if not chosen:
        return False
    if chosen in state.subsets:
        # the same bindings as a filter set tried before: the same queries give the gold over
        # them, said by these filters ("reorderLevel > 3" and "unitPrice < 20" keeping the same
        # two products) — unless a filter keeps every binding the others keep (it says nothing)
        if any(together([other for other in filters if other != item]) == chosen for item in filters):
            return False
        confirmed = False
        for projection, ordering, limit, tied, pool in state.subsets[chosen]:
            if confirm(Query(pattern, filters, projection, ordering, limit), tied=tied, pool=pool):
                if first:
                    return True
                confirmed = True
        return confirmed
    gave = state.subsets[chosen] = []

    def confirm_here(query: Query, tied: bool = False, pool: Pool | None = None) -> bool:
        if confirm(query, tied=tied, pool=pool):
            gave.append((query.projection, query.order, query.limit, tied, pool))
            return True
        return False

    bindings = [every[i] for i in sorted(chosen)]
    targets = list({b[target].get("id"): b[target] for b in bindings}.values())
    limited = len(gold) in clauses.literals.limits
    confirmed = False
    memo: dict = {}  # the groups and their aggregates over these bindings
    for projection in state.shaped:
        if over():
            return confirmed
        if (
            projection.aggregate is None
            and not projection.values
            and (
                (len(targets) > len(gold) and not limited)  # a row per target at least, and no LIMIT
                or (len(targets) < len(gold) and not projection.beside)  # a row per target exactly
            )
        ):
            continue
        query = Query(pattern, filters, projection)
        found.count("projection")
        held = len(memo)
        full = rows_of(query, bindings, targets, memo)
        found.count("grouped", len(bindings) * (len(memo) - held))
        found.count("row", len(full))
        if len(full) == len(gold):
            if gives_gold(full) and confirm_here(query):
                if first:
                    return True
                confirmed = True
                # a LIMIT of a number the question states that keeps every row ("the first 3" of two),
                # and the gold's order before it ("the 5 most expensive" of three): no result tells it
                hinted = hinted_order(query, order, clauses)
                for limit in clauses.literals.limits:
                    if limit >= len(full):
                        confirm_here(dataclasses.replace(query, limit=limit))
                        if hinted is not None:
                            confirm_here(dataclasses.replace(query, order=hinted, limit=limit))
            continue
        # more rows than the gold's: an order and a LIMIT of the gold's size may keep them
        if len(full) < len(gold) or not limited:
            continue
        limit = len(gold)
        start = 0 if projection.values else 1  # the columns an order may name
        numeric = clauses.numeric_columns(pattern, projection)
        for index, column in enumerate(projection.columns[start:], start):
            for descending, as_number in orderings(column in numeric):
                ordered = cypher_ordered(full, index, descending, as_number)
                found.count("sorted", len(full))
                if not ordered:
                    continue
                query = Query(pattern, filters, projection, Order(column, descending, numeric=as_number), limit)
                tied = ties_at_limit(ordered, index, limit, as_number)
                # ordered as the gold query is, through tied rows: its pick (another database's)
                # may not be this one. Not for other orders: one that ties every row would let
                # any pick through, an unordered LIMIT's
                as_gold = tied and (column, descending) == order
                pool = pool_of(*tie_pool(ordered, index, limit, as_number)) if as_gold else None
                if (gives_gold(ordered[:limit]) or pool is not None) and confirm_here(query, tied, pool):
                    if first:
                        return True
                    confirmed = True
    # the first k target nodes by a property not returned (an order before the projection)
    if len(gold) >= len(targets) or not limited:
        return confirmed
    plain = [p for p in state.shaped if _targets_alone(p)]
    if not plain or not _many_targets(pattern):
        return confirmed
    for key, info in clauses.properties(pattern.labels_of(pattern.target)).items():
        if over():
            return confirmed
        for descending, as_number in orderings(info.numeric):
            ordered = cypher_ordered([(t.get(key), t) for t in targets], 0, descending, as_number)
            found.count("sorted", len(targets))
            tied = ties_at_limit(ordered, 0, len(gold), as_number)
            as_gold = tied and (key, descending) == order  # as above
            sure, among = tie_pool(ordered, 0, len(gold), as_number) if as_gold else ([], [])
            for projection in plain:
                before = Order(key, descending, before=True, numeric=as_number)
                query = Query(pattern, filters, projection, before, len(gold))
                pool = pool_of(_target_rows(sure, projection), _target_rows(among, projection)) if as_gold else None
                top = _target_rows(ordered[: len(gold)], projection)
                if (gives_gold(top) or pool is not None) and confirm_here(query, tied, pool):
                    if first:
                        return True
                    confirmed = True
    return confirmed
