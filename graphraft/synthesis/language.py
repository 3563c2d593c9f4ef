"""The query language L1 writes, and its one renderer (DESIGN.md invariant 3).

A ``Query`` is a path (``patterns.Pattern``: 0 to 3 steps from an anchor or a label, with its
target) and the clauses that follow it, each decided after the one before::

    MATCH <path> [WHERE <path conditions> AND <filters>]
    RETURN <projection> [ORDER BY <alias> ASC|DESC] [LIMIT <k>]

- filters: ``<var>.<key> <op> <literal>`` on any node (``n1.released > 2000``) or relationship
  (``r1.rating >= 80``) of the path, op one of ``OPERATORS``; ``IS NULL`` / ``IS NOT NULL``;
  a node with no relationship of a kind (``NOT (n0)-[:ACTED_IN]->(:Movie)``: who never acted);
  text that holds numbers (``schema.numeric_text``: a graph loaded from CSV) compared with a
  number as one, ``toFloat(n1.freight) > 50``;
- the projection: the target's ids (``DISTINCT n1.id AS id``) and any of its properties
  (``, n1.born AS born``), then other nodes of the path beside it, themselves or a property
  (``, n0.id AS id_0, n0.born AS born_0``: who acted in each movie), then properties of its
  relationships (``, r1.rating AS rating_r1``: each review's rating); ``count(DISTINCT n1) AS
  count``, or every time the path reaches one (``count(n2) AS count``: how many times products were
  ordered, an order line each); ``min|max|avg|sum(n1.key) AS min|max|avg|sum`` (or of a relationship's property,
  ``avg(r1.rating) AS avg``, the target then the path's last node; of text that holds numbers,
  ``sum(toFloat(n1.freight)) AS sum``); an aggregate per another node of
  the path (``n0.id AS id, count(DISTINCT n1) AS count``) or per value of a text property of a
  node of the path, the target's own too (``n0.country AS country_0, count(DISTINCT n0) AS
  count``: customers per country), or only the groups whose aggregate compares with a number
  (``WITH n0, count(DISTINCT n1) AS count WHERE count > 2 RETURN n0.id AS id[, count AS
  count]``);
- ``ORDER BY`` an alias the projection names (a property or the aggregate; text that holds
  numbers as numbers, ``ORDER BY toFloat(freight) DESC``, or as text, as a query that forgets
  ``toFloat`` does), then ``LIMIT k``;
  or the target nodes ordered (and limited) by a property of theirs that is not returned, before
  what is returned: ``WITH DISTINCT n0 ORDER BY n0.released ASC LIMIT 3 RETURN n0.id AS id``
  (Cypher reads no variable but the returned ones after a ``RETURN DISTINCT``).

Values are written as Cypher literals by the renderer (escaped); they come from the question
or from the database (``clauses.py``), never from model text: model output is mapped back to a
``Query`` by looking its text up among the candidates."""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field
from typing import Any

from graphraft.graph.cypher_text import quote_identifier, string_literal
from graphraft.synthesis.patterns import Pattern, path_conditions, path_text

Value = str | int | float | bool

COMPARISONS = ("=", "<>", "<", "<=", ">", ">=")
STRING_OPERATORS = ("CONTAINS", "STARTS WITH")
NULL_TESTS = ("IS NULL", "IS NOT NULL")
#: ``NOT (var)-[:TYPE]->(:Label)``: the node has no such relationship (the key is the type, the
#: value the label at its other end, ``outgoing`` its direction)
EXISTENCE = ("NOT EXISTS",)
OPERATORS = COMPARISONS + STRING_OPERATORS + NULL_TESTS + EXISTENCE
AGGREGATES = ("count", "min", "max", "avg", "sum")
#: the most rows a query may ask for with LIMIT
MAX_LIMIT = 1000


@functools.lru_cache(maxsize=4096)
def alias(key: str) -> str:
    """The column name a property or aggregate is returned as: a plain identifier (letters,
    digits, ``_`` inside), so that no alias needs quoting and the text after it can be told
    apart from it without reading on (``unit price`` -> ``unit_price``)."""
    word = re.sub(r"[^A-Za-z0-9_]+", "_", key).strip("_") or "value"
    return word if word[0].isalpha() else "v" + word


def is_node_column(column: str) -> bool:
    """Whether a column of a query's rows holds nodes (as their ids): ``id`` (the target, or
    the group of an aggregate) and ``id_I`` (the path's I-th node beside the target)."""
    return column == "id" or re.fullmatch(r"id_\d+", column) is not None


def is_number(value: object) -> bool:
    """A number of Cypher's: an int or a float, not a boolean (which Python counts as an int)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def as_number(owner: str, key: str, numeric: bool) -> str:
    """A property read as a number: itself, or, for text that holds numbers, ``toFloat`` of it."""
    text = f"{owner}.{quote_identifier(key)}"
    return f"toFloat({text})" if numeric else text


#: what ``query_shape`` masks: quoted text (the anchors' ids, text literals), numbers (literals,
#: LIMIT's k; not the digits of a variable, ``n1``) and booleans
_SHAPE_TEXT = re.compile(r'"(?:[^"\\]|\\.)*"')
_SHAPE_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])|\b(?:true|false)\b")


def query_shape(cypher: str) -> str:
    """A query's text with what the question supplies masked — the anchors' ids and the
    literals (``"…"`` as ``S``, numbers and booleans as ``N``) — and all it decides from the
    question's wording left: labels, relationships, directions, keys, operators, aggregates,
    order. Two questions asked alike of other things have queries of one shape."""
    return _SHAPE_NUMBER.sub("N", _SHAPE_TEXT.sub("S", cypher))


def literal(value: Value) -> str:
    """A value as Cypher text: strings quoted and escaped, booleans lower case, numbers as
    they are (a float always with its point, so that it is not read back as an integer)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("a literal must be a finite number")
        return repr(value)
    if isinstance(value, str):
        return string_literal(value)
    raise TypeError(f"no literal for a {type(value).__name__}")


@dataclass(frozen=True, order=True)
class Filter:
    """``<element>.<key> <op> <value>``. ``element``: a node's place on the path (0: the root),
    or with ``relationship`` a step's (1: the first relationship). ``NOT EXISTS``: the node has
    no relationship of type ``key`` in direction ``outgoing`` to a node of label ``value``."""

    element: int
    key: str
    op: str
    value: Value | None = None
    relationship: bool = False
    outgoing: bool | None = None  # an existence test's direction
    #: the property is text that holds numbers (``schema.numeric_text``), compared as a number:
    #: ``toFloat(o.freight) > 50``
    numeric: bool = False

    def __post_init__(self) -> None:
        if self.op not in OPERATORS:
            raise ValueError(f"unknown operator {self.op!r}")
        if self.numeric and (self.op not in COMPARISONS or not is_number(self.value)):
            raise ValueError("text that holds numbers is compared with a number")
        if (self.op in EXISTENCE) != (self.outgoing is not None):
            raise ValueError("a direction goes with an existence test, and only with it")
        if self.op in EXISTENCE and (self.relationship or not isinstance(self.value, str)):
            raise ValueError("an existence test is on a node, towards a label")
        if (self.op in NULL_TESTS) != (self.value is None):
            raise ValueError(f"{self.op} takes {'no value' if self.op in NULL_TESTS else 'a value'}")
        if self.op in STRING_OPERATORS and not isinstance(self.value, str):
            raise ValueError(f"{self.op} takes a string")

    @property
    def place(self) -> int:
        """Its place along the path, root first: r1 after the root, n1 after r1, ..."""
        return 2 * self.element - (1 if self.relationship else 0)


def other_column(node: int, key: str | None) -> str:
    """The column name of another node of the path beside the target (``id_0``: node 0 itself)
    or of its property (``born_0``)."""
    return f"{alias(key) if key is not None else 'id'}_{node}"


def edge_column(step: int, key: str) -> str:
    """The column name of a property of the path's ``step``-th relationship (``rating_r1``)."""
    return f"{alias(key)}_r{step}"


@dataclass(frozen=True, order=True)
class Projection:
    """What a query returns. Nodes: the target's ids and ``properties`` of it, and ``others``:
    other nodes of the path beside it, ``(node, None)`` the node itself, ``(node, key)`` its
    property; ``edges``: properties of the path's relationships, ``(step, key)`` (the rating of
    each review). An aggregate (``count`` of the target nodes; ``min``/``max``/``avg``/``sum`` of
    their property ``key``, or of the ``step``-th relationship's: the average rating of the
    reviews), per node ``group`` of the path when given; ``having`` ``(op, number)``: only the
    groups whose aggregate compares so (people who directed more than 2 movies), the aggregate
    returned beside them unless ``hidden``. ``group_key``: grouped by that property's values of
    node ``group`` (the target's too: customers per country), not by the nodes. ``values``: the
    target's properties alone, without its ids (``RETURN DISTINCT n1.born AS born``: the distinct
    birth years, not one row a person). ``every``: count counts every binding of the path (the
    times the target is reached: ``count(n2)``, an order line each), not the distinct targets.
    ``numeric``: the aggregated property is text that holds numbers, read with ``toFloat``."""

    properties: tuple[str, ...] = ()
    aggregate: str | None = None
    key: str | None = None
    group: int | None = None
    others: tuple[tuple[int, str | None], ...] = ()
    edges: tuple[tuple[int, str], ...] = ()
    step: int | None = None
    having: tuple[str, int | float] | None = None
    hidden: bool = False
    values: bool = False
    group_key: str | None = None
    every: bool = False
    #: the aggregated property is text that holds numbers: ``sum(toFloat(o.freight))``
    numeric: bool = False

    def __post_init__(self) -> None:
        if self.numeric and (self.aggregate in (None, "count")):
            raise ValueError("only min, max, avg and sum read text that holds numbers")
        if self.every and self.aggregate != "count":
            raise ValueError("every binding is counted by count alone")
        if self.group_key is not None and self.group is None:
            raise ValueError("a group's property goes with a group")
        if self.values and (self.aggregate is not None or not self.properties or self.beside):
            raise ValueError("values alone are the target's properties, one or more, and nothing else")
        if self.having is not None:
            op, value = self.having
            if self.group is None or op not in COMPARISONS:
                raise ValueError("groups are kept by comparing their aggregate (=, <>, <, <=, >, >=)")
            if not is_number(value):
                raise ValueError("an aggregate is compared with a number")
        elif self.hidden:
            raise ValueError("only an aggregate that keeps groups may be left out")
        if self.aggregate is None:
            if self.key is not None or self.group is not None or self.step is not None:
                raise ValueError("a key, a group or a relationship goes with an aggregate")
            if list(self.properties) != sorted(self.properties):
                raise ValueError("properties are returned in the order of their keys")
            if list(self.others) != sorted(set(self.others), key=other_order):
                raise ValueError("other nodes' columns are returned once each, along the path")
            if list(self.edges) != sorted(set(self.edges)):
                raise ValueError("relationships' columns are returned once each, along the path")
            if len(set(self.aliases)) != len(self.aliases):
                raise ValueError("a property is returned once, under a column name of its own")
            return
        if self.aggregate not in AGGREGATES:
            raise ValueError(f"unknown aggregate {self.aggregate!r}")
        if self.properties or self.beside:
            raise ValueError("an aggregate returns no properties beside it")
        if (self.aggregate == "count") != (self.key is None):
            raise ValueError("count counts nodes; min, max, avg and sum take a property")
        if self.step is not None and (self.step < 1 or self.key is None):
            raise ValueError("a relationship's aggregate takes a property of the path's 1st, 2nd or 3rd relationship")

    @property
    def columns(self) -> tuple[str, ...]:
        """What it returns: ``id``, then the properties' keys, the other nodes' columns and the
        relationships', or the aggregate's name."""
        if self.values:
            return self.properties
        if self.aggregate is None:
            others = (other_column(*o) for o in self.others)
            return ("id", *self.properties, *others, *(edge_column(*e) for e in self.edges))
        group = "id" if self.group_key is None else other_column(self.group, self.group_key)
        if self.hidden:
            return (group,)
        return ((group,) if self.group is not None else ()) + (self.aggregate,)

    @property
    def orderable(self) -> tuple[str, ...]:
        """The columns an ORDER BY may name: every one but the ids."""
        return self.columns if self.values or self.group_key is not None else self.columns[1:]

    @property
    def beside(self) -> bool:
        """It returns columns of the path beside the target's (other nodes', relationships'):
        a row per binding of the path, not one per target."""
        return bool(self.others or self.edges)

    @property
    def aliases(self) -> tuple[str, ...]:
        """The names of the columns it returns, as the query names them."""
        return tuple(alias(column) for column in self.columns)


def other_order(item: tuple[int, str | None]) -> tuple:
    """Where another node's column is written: along the path, the node itself before its properties."""
    node, key = item
    return (node, key is not None, key or "")


@dataclass(frozen=True, order=True)
class Order:
    by: str  # a column the projection returns (a property's key, or the aggregate's name)
    descending: bool = False
    #: ordered before the projection: ``by`` is a property key of the target, not returned
    before: bool = False
    #: the column is text that holds numbers (``schema.numeric_text``), ordered as numbers:
    #: ``ORDER BY toFloat(freight)`` (as text, ``'9.5'`` follows ``'10.25'``; both are offered,
    #: ``clauses.orderings``: a gold query that forgot ``toFloat`` gave the text's order)
    numeric: bool = False


@dataclass(frozen=True, order=True)
class Query:
    pattern: Pattern
    filters: tuple[Filter, ...] = ()
    projection: Projection = field(default_factory=Projection)
    order: Order | None = None
    limit: int | None = None

    def __post_init__(self) -> None:
        nodes, hops = len(self.pattern.nodes), len(self.pattern.steps)
        for item in self.filters:
            if item.relationship and not 1 <= item.element <= hops:
                raise ValueError(f"no relationship {item.element} on the path")
            if not item.relationship and not 0 <= item.element < nodes:
                raise ValueError(f"no node {item.element} on the path")
        if list(self.filters) != sorted(set(self.filters), key=filter_order):
            raise ValueError("filters are given once each, in their order along the path")
        for node, _ in self.projection.others:
            if not 0 <= node < nodes or node == self.pattern.target:
                raise ValueError("other columns come from another node of the path")
        for step, _ in self.projection.edges:
            if not 1 <= step <= hops:
                raise ValueError(f"no relationship {step} on the path")
        group = self.projection.group
        if group is not None and not 0 <= group < nodes:
            raise ValueError(f"no node {group} on the path")
        if group == self.pattern.target and self.projection.group_key is None:
            raise ValueError("an aggregate is grouped by another node of the path, or by a property's values")
        if self.projection.step is not None:
            if self.projection.step > hops:
                raise ValueError(f"no relationship {self.projection.step} on the path")
            if self.pattern.target != hops or self.pattern.closed:
                # one text, one query: the target is not written, so it is the path's last node
                raise ValueError("a relationship's aggregate asks for the path's last node")
        if self.order is not None and self.order.before:
            if self.projection.aggregate is not None or self.projection.beside or self.projection.values:
                raise ValueError("an order before the projection returns the target's ids and properties only")
        elif self.order is not None and self.order.by not in self.projection.orderable:
            raise ValueError(f"ORDER BY {self.order.by!r}: not a column the query returns")
        if self.order is not None and self.projection.aggregate and group is None:
            raise ValueError("one aggregate row has nothing to order")
        if self.limit is not None and not 1 <= self.limit <= MAX_LIMIT:
            raise ValueError(f"LIMIT is 1 to {MAX_LIMIT}")

    @property
    def returns_nodes(self) -> bool:
        """Its ``id`` column holds nodes (a node answer, or the group an aggregate is per)."""
        if self.projection.values:
            return False
        if self.projection.aggregate is None:
            return True
        return self.projection.group is not None and self.projection.group_key is None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"pattern": self.pattern.to_dict()}
        if self.filters:
            data["filters"] = [
                {"element": f.element, "key": f.key, "op": f.op, "value": f.value, "relationship": f.relationship}
                | ({"outgoing": f.outgoing} if f.outgoing is not None else {})
                | ({"numeric": True} if f.numeric else {})
                for f in self.filters
            ]
        if self.projection != Projection():
            data["projection"] = {
                "properties": list(self.projection.properties),
                "aggregate": self.projection.aggregate,
                "key": self.projection.key,
                "group": self.projection.group,
            }
            if self.projection.group_key is not None:
                data["projection"]["group_key"] = self.projection.group_key
            if self.projection.step is not None:
                data["projection"]["step"] = self.projection.step
            if self.projection.having is not None:
                data["projection"]["having"] = list(self.projection.having)
                data["projection"]["hidden"] = self.projection.hidden
            if self.projection.others:
                data["projection"]["others"] = [list(item) for item in self.projection.others]
            if self.projection.edges:
                data["projection"]["edges"] = [list(item) for item in self.projection.edges]
            if self.projection.values:
                data["projection"]["values"] = True
            if self.projection.every:
                data["projection"]["every"] = True
            if self.projection.numeric:
                data["projection"]["numeric"] = True
        if self.order is not None:
            data["order"] = {"by": self.order.by, "descending": self.order.descending}
            if self.order.before:
                data["order"]["before"] = True
            if self.order.numeric:
                data["order"]["numeric"] = True
        if self.limit is not None:
            data["limit"] = self.limit
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Query:
        projection = data.get("projection")
        order = data.get("order")
        return cls(
            Pattern.from_dict(data["pattern"]),
            tuple(
                Filter(
                    int(f["element"]),
                    f["key"],
                    f["op"],
                    f.get("value"),
                    bool(f.get("relationship", False)),
                    f.get("outgoing"),
                    bool(f.get("numeric", False)),
                )
                for f in data.get("filters", ())
            ),
            Projection(
                tuple(projection.get("properties", ())),
                projection.get("aggregate"),
                projection.get("key"),
                projection.get("group"),
                tuple((int(node), key) for node, key in projection.get("others", ())),
                tuple((int(step), key) for step, key in projection.get("edges", ())),
                projection.get("step"),
                tuple(projection["having"]) if projection.get("having") else None,
                bool(projection.get("hidden", False)),
                bool(projection.get("values", False)),
                projection.get("group_key"),
                bool(projection.get("every", False)),
                bool(projection.get("numeric", False)),
            )
            if projection
            else Projection(),
            (
                Order(
                    order["by"],
                    bool(order["descending"]),
                    bool(order.get("before", False)),
                    bool(order.get("numeric", False)),
                )
                if order
                else None
            ),
            data.get("limit"),
        )


def filter_order(item: Filter) -> tuple:
    """Where a filter is written among the others: along the path, then by key, operator, value."""
    return (item.place, item.key, item.op, str(type(item.value)), str(item.value), str(item.outgoing))


def sorted_filters(filters) -> tuple[Filter, ...]:
    """Filters in the order the renderer writes them: along the path, then by key and operator."""
    return tuple(sorted(set(filters), key=filter_order))


# -- the renderer, piece by piece: each piece is what one decision writes, in the order they are
# made; ``render_query`` joins them, and decoding (``clauses.ClauseSpace``) offers them one by one


def path_conditions_piece(pattern: Pattern) -> str:
    """What the choice of target writes after the path: the conditions that keep the path a
    path and its target apart from the anchors (``patterns.path_conditions``), or nothing."""
    conditions = path_conditions(pattern)
    return (" WHERE " + " AND ".join(conditions)) if conditions else ""


def filter_piece(query: Query, item: Filter, first: bool) -> str:
    """One filter, after the conditions written before it (``first``: none were)."""
    variable = f"r{item.element}" if item.relationship else query.pattern.variable(item.element)
    subject = as_number(variable, item.key, item.numeric)
    if item.op in EXISTENCE:
        link = f"[:{quote_identifier(item.key)}]"
        link = f"-{link}->" if item.outgoing else f"<-{link}-"
        condition = f"NOT ({variable}){link}(:{quote_identifier(str(item.value))})"
    elif item.op in NULL_TESTS:
        condition = f"{subject} {item.op}"
    else:
        condition = f"{subject} {item.op} {literal(item.value)}"
    return (" WHERE " if first else " AND ") + condition


def returns_piece(query: Query) -> str:
    """``RETURN`` and what the projection returns first: the target's ids (its properties follow,
    ``property_piece``), or the aggregate (per its group's ids)."""
    projection, pattern = query.projection, query.pattern
    target = pattern.variable(pattern.target)
    if query.order is not None and query.order.before:
        return f" RETURN {target}.id AS id"  # the nodes are distinct already
    if projection.values:  # the first property; the others follow (``property_piece``)
        first = projection.properties[0]
        return f" RETURN DISTINCT {target}.{quote_identifier(first)} AS {alias(first)}"
    if projection.aggregate is None:
        return f" RETURN DISTINCT {target}.id AS id"
    if projection.aggregate == "count":
        value = f"count({target}) AS count" if projection.every else f"count(DISTINCT {target}) AS count"
    else:
        owner = target if projection.step is None else f"r{projection.step}"
        value = (
            f"{projection.aggregate}({as_number(owner, projection.key, projection.numeric)}) AS {projection.aggregate}"
        )
    if projection.group is None:
        return " RETURN " + value
    group = pattern.variable(projection.group)
    # the groups: the nodes (WITH n0, returned as their ids) or a property's values (named once)
    if projection.group_key is not None:
        column = other_column(projection.group, projection.group_key)
        grouped = returned = f"{group}.{quote_identifier(projection.group_key)} AS {column}"
        kept = f"{column} AS {column}"
    else:
        grouped, returned, kept = group, f"{group}.id AS id", f"{group}.id AS id"
    if projection.having is not None:  # the groups kept, then (``having_piece``) their aggregate
        op, number = projection.having
        return f" WITH {grouped}, {value} WHERE {projection.aggregate} {op} {literal(number)} RETURN {kept}"
    return f" RETURN {returned}, {value}"


def having_piece(projection: Projection) -> str:
    """The aggregate that kept the groups, returned beside them."""
    return f", {projection.aggregate} AS {projection.aggregate}"


def property_piece(pattern: Pattern, key: str) -> str:
    """One property of the target, returned beside its ids."""
    return f", {pattern.variable(pattern.target)}.{quote_identifier(key)} AS {alias(key)}"


def other_piece(pattern: Pattern, node: int, key: str | None) -> str:
    """Another node of the path returned beside the target: itself (its ids) or a property."""
    value = f"{pattern.variable(node)}.{quote_identifier(key) if key is not None else 'id'}"
    return f", {value} AS {other_column(node, key)}"


def edge_piece(step: int, key: str) -> str:
    """A property of one of the path's relationships, returned beside the target."""
    return f", r{step}.{quote_identifier(key)} AS {edge_column(step, key)}"


def before_piece(pattern: Pattern, order: Order) -> str:
    """The target nodes, each once, ordered by a property of theirs before the projection."""
    target = pattern.variable(pattern.target)
    direction = "DESC" if order.descending else "ASC"
    return f" WITH DISTINCT {target} ORDER BY {as_number(target, order.by, order.numeric)} {direction}"


def order_piece(order: Order) -> str:
    column = f"toFloat({alias(order.by)})" if order.numeric else alias(order.by)
    return f" ORDER BY {column} {'DESC' if order.descending else 'ASC'}"


def limit_piece(limit: int) -> str:
    return f" LIMIT {limit}"


def render_query(query: Query, graph_label: str | None = None) -> str:
    """The one Cypher text of a query, written left to right: the path, then what keeps it a
    path (``path_conditions``), the filters along it, what it returns, its order and limit.
    A query that returns its target's ids and nothing else renders as ``patterns.render``.

    ``graph_label``: the executed form in a database that holds other graphs too."""
    pattern = query.pattern
    text = path_text(pattern, graph_label) + path_conditions_piece(pattern)
    for index, item in enumerate(query.filters):
        text += filter_piece(query, item, first=index == 0 and not path_conditions(pattern))
    before = query.order is not None and query.order.before
    if before:
        text += before_piece(pattern, query.order) + (limit_piece(query.limit) if query.limit is not None else "")
    following = query.projection.properties[1:] if query.projection.values else query.projection.properties
    text += returns_piece(query) + "".join(property_piece(pattern, key) for key in following)
    if query.projection.having is not None and not query.projection.hidden:
        text += having_piece(query.projection)
    text += "".join(other_piece(pattern, node, key) for node, key in query.projection.others)
    text += "".join(edge_piece(step, key) for step, key in query.projection.edges)
    if query.order is not None and not before:
        text += order_piece(query.order)
    if query.limit is not None and not before:
        text += limit_piece(query.limit)
    return text
