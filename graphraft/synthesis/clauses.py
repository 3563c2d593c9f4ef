"""What may follow a path: every grounded choice of each clause, decided one after another.

A query is decided in the order its text is written (``language.render_query``): its target
(with the conditions that keep the path a path), each filter along the path, what it returns,
the properties beside the ids, the order, the limit. ``ClauseSpace.choices`` gives, for some
partly decided queries, each next piece of text and the queries it leads to, so that decoding
can expand the space as the search goes instead of listing every query (paths x filters x
returns x orders is too many to list).

Grounded: property keys and their types come from the schema (``GraphSchema.properties``, the
relationship types' ``relationship_properties``), values from the question (``literals.py``)
or from the schema's list of a few-valued property's values where the question spells one out;
nothing else can be written. Anchors are fixed by id, so only the path's other nodes and its
relationships are filtered."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from itertools import product

from graphraft.graph.schema import ISO_DATE, GraphSchema, PropertyInfo
from graphraft.synthesis.language import (
    AGGREGATES,
    COMPARISONS,
    NULL_TESTS,
    Filter,
    Order,
    Projection,
    Query,
    alias,
    before_piece,
    edge_column,
    edge_piece,
    filter_order,
    filter_piece,
    having_piece,
    limit_piece,
    order_piece,
    other_column,
    other_order,
    other_piece,
    path_conditions_piece,
    property_piece,
    render_query,
    returns_piece,
)
from graphraft.synthesis.literals import Literals, mentioned_values
from graphraft.synthesis.patterns import Pattern, path_text

NUMERIC = frozenset({"integer", "float"})
TEXT_OPERATORS = ("=", "<>", "CONTAINS", "STARTS WITH")


def numbers(properties: dict[str, PropertyInfo]) -> list[tuple[str, bool]]:
    """(key, whether it is text that holds numbers) of each property min, max, avg and sum read."""
    return sorted((key, info.numeric) for key, info in properties.items() if info.type in NUMERIC or info.numeric)


def orderings(numeric: bool) -> list[tuple[bool, bool]]:
    """How a column may be ordered, ``(descending, as_number)``: ascending or descending, and
    text that holds numbers (``numeric``) as numbers (``Order.numeric``) or as the text it is
    (what a query that forgets ``toFloat`` does, and so what its result is)."""
    return list(product((False, True), (False, True) if numeric else (False,)))


@dataclass(frozen=True)
class Partial:
    """A query decided up to ``stage`` ("start", "filters", "returns", "properties", "others",
    "edges", "order", "limit", "end"; "having" after groups kept by their aggregate; with an
    order before the projection, "returns" is followed by "before-limit" and "before-returns")."""

    pattern: Pattern
    stage: str = "start"
    filters: tuple[Filter, ...] = ()
    projection: Projection | None = None
    order: Order | None = None
    limit: int | None = None
    conditions: bool = False  # a WHERE has been written

    def query(self) -> Query:
        return Query(self.pattern, self.filters, self.projection or Projection(), self.order, self.limit)


@dataclass
class ClauseSpace:
    """The grounded clauses for one question over one graph's schema."""

    schema: GraphSchema
    literals: Literals = field(default_factory=Literals)
    question: str = ""
    max_filters: int = 2
    max_properties: int = 2
    max_others: int = 2  # columns of other nodes beside the target
    max_edges: int = 2  # columns of the path's relationships' properties

    def __post_init__(self) -> None:
        # made once each: the search asks again at every node it expands below a path
        self._properties: dict[tuple[str, ...], dict[str, PropertyInfo]] = {}
        self._node_filters: dict[tuple[str, ...], list[tuple[str, str, object, bool]]] = {}
        self._rel_filters: dict[str, list[tuple[str, str, object, bool]]] = {}
        self._filters: dict[Pattern, list[Filter]] = {}

    # -- what the schema and the question allow ----------------------------------------------
    def properties(self, labels: Sequence[str]) -> dict[str, PropertyInfo]:
        """A node's properties: its labels', the first label's info where two share a key."""
        labels = tuple(labels)
        if labels not in self._properties:
            found: dict[str, PropertyInfo] = {}
            for label in labels:
                for key, info in self.schema.properties.get(label, {}).items():
                    found.setdefault(key, info)
            self._properties[labels] = dict(sorted(found.items()))
        return self._properties[labels]

    def _comparisons(self, properties: dict[str, PropertyInfo]) -> list[tuple[str, str, object, bool]]:
        """(key, operator, value, numeric) for every filter these properties allow (``numeric``:
        text that holds numbers compared with a number, ``toFloat``)."""
        out: list[tuple[str, str, object, bool]] = []
        for key, info in properties.items():
            if info.type in NUMERIC or info.numeric:
                out += [(key, op, n, info.numeric) for n in self.literals.numbers for op in COMPARISONS]
            if info.type == "string":
                out += [(key, op, s, False) for s in self.literals.strings for op in TEXT_OPERATORS]
                out += [(key, "STARTS WITH", y, False) for y in self.literals.years if y not in self.literals.strings]
                if info.dates:  # dates as ISO text compare in their order: before, after a quoted date
                    dates = [d for d in self.literals.strings if ISO_DATE.fullmatch(d)]
                    out += [(key, op, d, False) for d in dates for op in ("<", "<=", ">", ">=")]
                named = mentioned_values(self.question, info.values or [])
                named = [v for v in named if v not in self.literals.strings]
                out += [(key, op, v, False) for v in named for op in ("=", "<>")]
            elif info.type == "boolean":
                out += [(key, "=", True, False), (key, "=", False, False)]
            out += [(key, op, None, False) for op in NULL_TESTS]
        return out

    def links(self, labels: Sequence[str]) -> list[tuple[str, bool, str]]:
        """(type, outgoing, the other end's label) of every relationship the schema has for a
        node of these labels: what a node may be said to lack (``NOT (n0)-[:ACTED_IN]->(:Movie)``)."""
        found = []
        for link in self.schema.patterns:
            if link.source in labels:
                found.append((link.type, True, link.target))
            if link.target in labels:
                found.append((link.type, False, link.source))
        return sorted(set(found))

    def node_filters(self, pattern: Pattern, node: int) -> list[Filter]:
        labels = pattern.labels_of(node)
        if labels not in self._node_filters:
            self._node_filters[labels] = self._comparisons(self.properties(labels))
        found = [Filter(node, key, op, value, numeric=n) for key, op, value, n in self._node_filters[labels]]
        return found + [
            Filter(node, kind, "NOT EXISTS", other, outgoing=outgoing) for kind, outgoing, other in self.links(labels)
        ]

    def relationship_filters(self, pattern: Pattern, step: int) -> list[Filter]:
        kind = pattern.steps[step - 1].type
        if kind not in self._rel_filters:
            props = dict(sorted(self.schema.relationship_properties.get(kind, {}).items()))
            self._rel_filters[kind] = self._comparisons(props)
        return [
            Filter(step, key, op, value, relationship=True, numeric=n) for key, op, value, n in self._rel_filters[kind]
        ]

    def filters(self, pattern: Pattern) -> list[Filter]:
        """Every filter on the path, in the renderer's order: on each node but the anchors, and
        on each relationship."""
        if pattern not in self._filters:
            self._filters[pattern] = self._path_filters(pattern)
        return self._filters[pattern]

    def _path_filters(self, pattern: Pattern) -> list[Filter]:
        anchors = {len(pattern.steps)} if pattern.end_anchor is not None else set()
        if not pattern.anchor.is_label_root:
            anchors.add(0)
        found = []
        for step in range(1, len(pattern.steps) + 1):
            found += self.relationship_filters(pattern, step)
        for node in pattern.nodes:
            if node not in anchors:
                found += self.node_filters(pattern, node)
        return sorted(found, key=filter_order)

    def projections(self, pattern: Pattern) -> list[tuple[Projection, str]]:
        """What the query may return, and the stage that follows: the target's ids (properties
        next), or an aggregate of the target nodes, over the whole path or per another node."""
        target = pattern.target
        out: list[tuple[Projection, str]] = [(Projection(), "properties")]
        if target == 0 and not pattern.anchor.is_label_root:
            return out  # the anchor itself: one node, nothing to count
        numeric = numbers(self.properties(pattern.labels_of(target)))
        # count the distinct targets, or (along a path) every time the path reaches one
        aggregates = [("count", None, None, False, False)] + (
            [("count", None, None, True, False)] if pattern.steps else []
        )
        aggregates += [(fn, key, None, False, text) for key, text in numeric for fn in AGGREGATES[1:]]
        if target == len(pattern.steps) and not pattern.closed:  # of a relationship's property too
            for step, item in enumerate(pattern.steps, 1):
                keys = numbers(self.schema.relationship_properties.get(item.type, {}))
                aggregates += [(fn, key, step, False, text) for key, text in keys for fn in AGGREGATES[1:]]
        out += [
            (Projection(aggregate=fn, key=key, step=s, every=e, numeric=t), "end") for fn, key, s, e, t in aggregates
        ]
        free = [node for node in pattern.nodes if pattern.variable(node) not in ("a", "b")]  # not anchors
        # per another node, or per value of a text property of a node of the path (the target's too)
        groups: list[tuple[int, str | None]] = [(node, None) for node in free if node != target]
        groups += [
            (node, key)
            for node in free
            for key, info in self.properties(pattern.labels_of(node)).items()
            if info.type == "string"
        ]
        unique = {key for key, info in self.properties(pattern.labels_of(target)).items() if info.unique}

        def degenerate(group: int, group_key: str | None, step: int | None, every: bool) -> bool:
            """The target's own count or property per a text no two targets share (a product's
            name): a group per target, its count 1, its average the target's own value — a filter
            in disguise. Not every binding counted per target, nor its relationships' property
            (the quantity ordered per product)."""
            return group == target and group_key in unique and step is None and not every

        aggregates_of = {(g, k): [a for a in aggregates if not degenerate(g, k, a[2], a[3])] for g, k in groups}
        out += [
            (Projection(aggregate=fn, key=key, group=g, step=s, group_key=k, every=e, numeric=t), "order")
            for g, k in groups
            for fn, key, s, e, t in aggregates_of[g, k]
        ]
        # the groups whose aggregate compares with a number of the question (the aggregate then
        # returned beside them or not: the "having" stage)
        out += [
            (
                Projection(
                    aggregate=fn, key=key, group=g, step=s, having=(op, n), hidden=True, group_key=k, every=e, numeric=t
                ),
                "having",
            )
            for g, k in groups
            for fn, key, s, e, t in aggregates_of[g, k]
            for n in self.literals.numbers
            for op in COMPARISONS
        ]
        return out

    def other_columns(self, pattern: Pattern) -> list[tuple[int, str | None]]:
        """What may be returned beside the target from the path's other nodes (not its anchors,
        whose values the question states): each node itself, then each of its properties."""
        out: list[tuple[int, str | None]] = []
        for node in pattern.nodes:
            if node == pattern.target or pattern.variable(node) in ("a", "b"):
                continue
            out += [(node, None)] + [(node, key) for key in self.properties(pattern.labels_of(node))]
        return sorted(out, key=other_order)

    def edge_columns(self, pattern: Pattern) -> list[tuple[int, str]]:
        """What may be returned beside the target from the path's relationships: each one's
        properties (the schema's for its type), along the path."""
        out: list[tuple[int, str]] = []
        for step, item in enumerate(pattern.steps, 1):
            out += [(step, key) for key in sorted(self.schema.relationship_properties.get(item.type, {}))]
        return out

    def numeric_columns(self, pattern: Pattern, projection: Projection) -> frozenset[str]:
        """The columns ``projection`` returns that are text holding numbers (``schema.numeric_text``):
        ordered as numbers (``Order.numeric``)."""
        out = set()
        target = self.properties(pattern.labels_of(pattern.target))
        out |= {key for key in projection.properties if key in target and target[key].numeric}
        for node, key in projection.others:
            info = self.properties(pattern.labels_of(node)).get(key) if key is not None else None
            if info is not None and info.numeric:
                out.add(other_column(node, key))
        for step, key in projection.edges:
            info = self.schema.relationship_properties.get(pattern.steps[step - 1].type, {}).get(key)
            if info is not None and info.numeric:
                out.add(edge_column(step, key))
        return frozenset(out)

    # -- the choices, one clause after another -------------------------------------------------
    def start(self, patterns: Iterable[Pattern]) -> list[Partial]:
        return [Partial(pattern) for pattern in patterns]

    def _options(self, partial: Partial) -> list[tuple[str | None, Partial]]:
        """Each next piece of text ("": nothing written; None: the end) and what it decides."""
        pattern, stage = partial.pattern, partial.stage
        if stage == "start":
            text = path_conditions_piece(pattern)
            return [(text, replace(partial, stage="filters", conditions=bool(text)))]
        if stage == "filters":
            out: list[tuple[str | None, Partial]] = [("", replace(partial, stage="returns"))]
            if len(partial.filters) < self.max_filters:
                last = filter_order(partial.filters[-1]) if partial.filters else None
                query = partial.query()
                for item in self.filters(pattern):
                    if last is None or filter_order(item) > last:
                        text = filter_piece(query, item, first=not partial.conditions)
                        nxt = replace(partial, filters=partial.filters + (item,), conditions=True)
                        out.append((text, nxt))
            return out
        if stage == "returns":
            out = []
            for projection, following in self.projections(pattern):
                decided = replace(partial, projection=projection, stage=following)
                out.append((returns_piece(decided.query()), decided))
            # a property's distinct values alone, no ids (more properties may follow)
            for key in self.properties(pattern.labels_of(pattern.target)):
                decided = replace(partial, projection=Projection((key,), values=True), stage="properties")
                out.append((returns_piece(decided.query()), decided))
            if self.literals.limits and not (pattern.target == 0 and not pattern.anchor.is_label_root):
                # the first k target nodes by a property that is not returned
                for key, info in self.properties(pattern.labels_of(pattern.target)).items():
                    for descending, as_number in orderings(info.numeric):
                        order = Order(key, descending, before=True, numeric=as_number)
                        out.append((before_piece(pattern, order), replace(partial, order=order, stage="before-limit")))
            return out
        if stage == "having":  # the aggregate returned beside the groups it kept, or not
            shown = replace(partial.projection, hidden=False)
            return [
                ("", replace(partial, stage="limit")),
                (having_piece(shown), replace(partial, projection=shown, stage="order")),
            ]
        if stage == "before-limit":
            return [(limit_piece(k), replace(partial, limit=k, stage="before-returns")) for k in self.literals.limits]
        if stage == "before-returns":
            decided = replace(partial, projection=Projection(), stage="properties")
            return [(returns_piece(decided.query()), decided)]
        if stage == "properties":
            projection = partial.projection or Projection()
            before = partial.order is not None and partial.order.before
            out = [("", replace(partial, stage="end" if before else "order" if projection.values else "others"))]
            if len(projection.properties) < self.max_properties:
                chosen = projection.properties
                taken = {alias(k) for k in chosen} | {"id"}
                for key in self.properties(pattern.labels_of(pattern.target)):
                    if (not chosen or key > chosen[-1]) and alias(key) not in taken:
                        more = replace(projection, properties=chosen + (key,))
                        out.append((property_piece(pattern, key), replace(partial, projection=more)))
            return out
        if stage == "others":
            projection = partial.projection or Projection()
            out = [("", replace(partial, stage="edges"))]
            if len(projection.others) < self.max_others:
                last = other_order(projection.others[-1]) if projection.others else None
                taken = set(projection.aliases)
                for item in self.other_columns(pattern):
                    if (last is None or other_order(item) > last) and other_column(*item) not in taken:
                        decided = Projection(projection.properties, others=projection.others + (item,))
                        out.append((other_piece(pattern, *item), replace(partial, projection=decided)))
            return out
        if stage == "edges":
            projection = partial.projection or Projection()
            out = [("", replace(partial, stage="order"))]
            if len(projection.edges) < self.max_edges:
                taken = set(projection.aliases)
                for item in self.edge_columns(pattern):
                    if (not projection.edges or item > projection.edges[-1]) and edge_column(*item) not in taken:
                        decided = replace(projection, edges=projection.edges + (item,))
                        out.append((edge_piece(*item), replace(partial, projection=decided)))
            return out
        if stage == "order":
            out = [("", replace(partial, stage="limit"))]
            projection = partial.projection or Projection()
            numeric = self.numeric_columns(pattern, projection)
            for column in projection.orderable:
                for descending, as_number in orderings(column in numeric):
                    order = Order(column, descending, numeric=as_number)
                    out.append((order_piece(order), replace(partial, order=order, stage="limit")))
            return out
        if stage == "limit":
            out = [("", replace(partial, stage="end"))]
            out += [(limit_piece(k), replace(partial, limit=k, stage="end")) for k in self.literals.limits]
            return out
        return [(None, partial)]  # "end"

    def choices(self, partials: Iterable[Partial]) -> dict[str | None, list[Partial]]:
        """The next pieces of text after ``partials`` (which share the text written so far),
        each with the partial queries it leads to; a choice that writes nothing is taken at
        once. ``None``: the query ends (its partials are finished queries)."""
        out: dict[str | None, list[Partial]] = {}
        stack = list(partials)[::-1]
        while stack:
            partial = stack.pop()
            for text, nxt in self._options(partial):
                if text == "":
                    stack.append(nxt)
                else:
                    out.setdefault(text, []).append(nxt)
        return out

    def contains(self, query: Query) -> bool:
        """Whether the space holds ``query``: its text can be written piece by piece from its
        path's choices (what decoding can produce for this question), without listing them."""
        text = render_query(query)
        start = path_text(query.pattern)
        if not text.startswith(start):
            return False
        stack = [(len(start), self.start([query.pattern]))]
        while stack:
            at, partials = stack.pop()
            for piece, following in self.choices(partials).items():
                if piece is None:
                    if at == len(text) and any(p.query() == query for p in following):
                        return True
                elif text.startswith(piece, at):
                    stack.append((at + len(piece), following))
        return False

    def queries(self, patterns: Iterable[Pattern]) -> list[Query]:
        """Every query of the space, by walking every choice (for tests and small spaces)."""
        found, stack = [], [self.start(patterns)]
        while stack:
            for text, partials in self.choices(stack.pop()).items():
                if text is None:
                    found += [p.query() for p in partials]
                else:
                    stack.append(partials)
        return found
