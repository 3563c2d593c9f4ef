"""Training questions of the query language's forms from the graph alone (`synthesize
--from-graph --language-share S`): a property of a named node, how many nodes a path reaches, a
label's nodes filtered by a value one of them holds, the first k by a property, a property's
highest, lowest, average or total, the node with the most neighbours of a kind, the nodes that
lack a kind of relationship, the most common values of a text property. With ``composed_forms``
(``--composed-forms``), also forms that compose a step with the clauses, as people's questions do:
a label's nodes related to nodes that hold a value (the persons that acted in a movie released
after 2000), the first k of them, their count or a number's average; a named node's neighbours
filtered, ordered and limited, or counted; the k nodes with the most neighbours; two kinds of
relationship between the same two nodes.

Like the path questions (``from_graph.py``), every word comes from the schema (a label is a
noun, a property key and a relationship type are split into words) or from a few general English
words for comparisons and aggregates; no phrase is written for any one data set. Every value a
question states is one the graph holds, and each kept question's query is checked to be one that
`ask --language full` can write for it: its clauses among the question's grounded choices
(``ClauseSpace.contains``), its path among those around the anchors `ask` finds."""

from __future__ import annotations

import functools
import random
import re
import time
from dataclasses import dataclass
from typing import Any

from graphraft.errors import GraphRAFTError
from graphraft.graph.cypher_text import label_expression, quote_identifier
from graphraft.graph.loaders.questions import split_of
from graphraft.graph.records import domain_labels
from graphraft.graph.schema import number_of
from graphraft.synthesis.clauses import NUMERIC, ClauseSpace
from graphraft.synthesis.language import (
    EXISTENCE,
    Filter,
    Order,
    Projection,
    Query,
    is_node_column,
    is_number,
    render_query,
)
from graphraft.synthesis.literals import question_literals
from graphraft.synthesis.patterns import AnchorRef, Pattern, Step, label_roots, path_text
from graphraft.synthesis.rows import AnchorRow, SynthesisRow
from graphraft.synthesis.verbalise import Verbaliser, participle, reads_as_verb, words_of

#: the forms, each asked in turn (a label's or a relationship type's, or a named node's)
FORMS = ("filter", "contains", "value", "top", "aggregate", "most", "lacking", "lookup", "count", "common")
#: the forms that compose a step with the clauses (``GenerationConfig.composed_forms``), after FORMS
COMPOSED_FORMS = (
    "most_composed",
    "related",
    "related_top",
    "related_aggregate",
    "neighbours_filter",
    "neighbours_top",
    "neighbours_count",
    "same",
)
#: general English for a comparison with a number (never a data set's own words)
COMPARISON_WORDS = {
    ">": ("greater than", "more than", "above"),
    "<": ("less than", "below", "under"),
    ">=": ("at least",),
    "<=": ("at most",),
    "=": ("equal to", ""),
}
#: general English for a comparison with a whole number that reads as a year (1000-2100)
YEAR_WORDS = {">": ("after",), "<": ("before",)}
#: the longest text value a composed question states
MAX_SAID = 40
AGGREGATE_WORDS = {"max": "highest", "min": "lowest", "avg": "average", "sum": "total"}


def _compared(rng: random.Random, op: str, value: Any) -> str:
    """A comparison with a number in words: "greater than 5", "at least 3", "after 2000"."""
    words = COMPARISON_WORDS[op]
    if isinstance(value, int) and not isinstance(value, bool) and 1000 <= value <= 2100:
        words = words + YEAR_WORDS.get(op, ())
    return f"{rng.choice(words)} {value}".strip()


def _that(clause: str) -> str:
    """A relative clause opened with "that" once: "that acted in a movie", "that a person ... directed"."""
    return clause if clause.startswith("that ") else f"that {clause}"


def _article(noun: str) -> str:
    return "an" if noun[:1] in "aeiou" else "a"


@dataclass(frozen=True)
class LanguagePlan:
    """One question of the language to write: its query, its words, the named node it starts
    from (None: a label)."""

    qid: str
    form: str
    query: Query
    question: str
    anchor_name: str | None = None
    marked: bool = False  # the anchor's name is marked [so] in the question


def _key_words(identifier: str) -> str:
    """A key's or a relationship type's words (``releaseYear`` -> "release year", ``ACTED_IN`` -> "acted in")."""
    return " ".join(words_of(identifier)) or identifier.lower()


class LanguagePlanner:
    """Plans questions of the language's forms over a store's schema, deterministic for a seed."""

    def __init__(self, store, verbaliser: Verbaliser, seed: int, max_answers: int, timeout_ms: int | None):
        self.store, self.verbaliser, self.seed = store, verbaliser, seed
        self.max_answers, self.timeout_ms = max_answers, timeout_ms
        self.schema = store.schema()

    def naming(self, label: str) -> str | None:
        """The property that names the label's nodes (``graph.naming``)."""
        return self.store.naming.property_for(label, self.schema.properties.get(label, {}))

    # ------------------------------------------------------------------ the graph's values
    def values(self, label: str, key: str, limit: int = 200) -> list[Any]:
        """Values of a label's property that its nodes hold, in the store's order."""
        rows = self.store.read(
            f"MATCH (n{label_expression((label, self.store.entity_label))}) "
            f"WHERE n.{quote_identifier(key)} IS NOT NULL RETURN n.{quote_identifier(key)} AS v LIMIT {limit}",
            timeout_ms=self.timeout_ms,
        )
        return [row["v"] for row in rows]

    def rows(self, query: Query) -> list[dict] | None:
        try:
            return self.store.read(render_query(query, self.store.graph_label), timeout_ms=self.timeout_ms)
        except GraphRAFTError:
            return None

    # ------------------------------------------------------------------ one question a form
    def plan(self, form: str, rng: random.Random, anchors: list[tuple[AnchorRef, str]]) -> tuple[Query, str] | None:
        """A query of the form and its question, or None where the graph offers none."""
        return getattr(self, f"_{form}")(rng, anchors)

    def _them(self, label: str) -> str:
        return self.verbaliser.noun((label,), many=True)

    def _one(self, label: str) -> str:
        return self.verbaliser.noun((label,))

    def _keys(self, rng: random.Random, kind: str) -> tuple[Pattern, str, list[str]] | None:
        """A label (by the seed), its root, and its keys of a kind: ``number``, ``measure`` (numbers
        and text that holds numbers, read with toFloat), ``text`` (texts of many values, the name
        last resort) or ``few`` (texts of a few values)."""
        labels = sorted(self.schema.labels)
        if not labels:
            return None
        label = rng.choice(labels)
        props = self.schema.properties.get(label, {})
        if kind in ("number", "measure"):
            keys = sorted(
                k for k, info in props.items() if info.type in NUMERIC or (kind == "measure" and info.numeric)
            )
        elif kind == "few":
            keys = sorted(k for k, info in props.items() if info.type == "string" and info.few)
        else:  # a text other than the name first: a name's words are the anchors' business
            keys = sorted(k for k, info in props.items() if info.type == "string" and not info.few)
            keys = [k for k in keys if k != self.naming(label)] or keys
        return (Pattern(AnchorRef(None, (label,)), (), 0), label, keys) if keys else None

    def _filter(self, rng, anchors):
        found = self._keys(rng, "measure")
        if found is None:
            return None
        root, label, keys = found
        key = rng.choice(keys)
        text = self.schema.properties[label][key].numeric  # read with toFloat
        values = [number_of(v) if text else v for v in self.values(label, key)]
        values = [v for v in values if is_number(v)]
        if not values:
            return None
        value, op = rng.choice(values), rng.choice(sorted(COMPARISON_WORDS))
        said, them, words = f"{rng.choice(COMPARISON_WORDS[op])} {value}".strip(), self._them(label), _key_words(key)
        forms = [f"which {them} have a {words} {said}", f"list the {them} whose {words} is {said}"]
        question = rng.choice([*forms, f"{them} with {words} {said}"])
        return Query(root, (Filter(0, key, op, value, numeric=text),)), question

    def _contains(self, rng, anchors):
        found = self._keys(rng, "text")
        if found is None:
            return None
        root, label, keys = found
        key = rng.choice(keys)
        texts = [v for v in self.values(label, key) if isinstance(v, str)]
        words = sorted({w for v in texts for w in re.findall(r"[A-Za-z]{4,}", v)})
        if not words:
            return None
        word, them, named = rng.choice(words), self._them(label), _key_words(key)
        question = rng.choice(
            [f"which {them} have a {named} containing '{word}'", f"{them} whose {named} contains the word '{word}'"]
        )
        return Query(root, (Filter(0, key, "CONTAINS", word),)), question

    def _value(self, rng, anchors):
        found = self._keys(rng, "few")
        if found is None:
            return None
        root, label, keys = found
        key = rng.choice(keys)
        values = [v for v in self.schema.properties[label][key].values or [] if isinstance(v, str) and v.strip()]
        if not values:
            return None
        value, them, named = rng.choice(values), self._them(label), _key_words(key)
        question = rng.choice([f"which {them} have {named} {value}", f"the {them} whose {named} is {value}"])
        return Query(root, (Filter(0, key, "=", value),)), question

    def _top(self, rng, anchors):
        found = self._keys(rng, "measure")
        if found is None:
            return None
        root, label, keys = found
        key, descending, k = rng.choice(keys), rng.random() < 0.5, rng.choice((1, 3, 5))
        most, named, them = "highest" if descending else "lowest", _key_words(key), self._them(label)
        if k == 1:
            question = f"which {self._one(label)} has the {most} {named}"
        else:
            question = rng.choice([f"{lead} {k} {them} with the {most} {named}" for lead in ("the", "list")])
        numeric = self.schema.properties[label][key].numeric  # ordered by toFloat
        return Query(root, order=Order(key, descending, before=True, numeric=numeric), limit=k), question

    def _aggregate(self, rng, anchors):
        found = self._keys(rng, "measure")
        labels = sorted(self.schema.labels)
        if found is None or rng.random() < 0.25:  # how many: any label
            if not labels:
                return None
            label = found[1] if found is not None else rng.choice(labels)
            root = Pattern(AnchorRef(None, (label,)), (), 0)
            question = rng.choice([f"how many {self._them(label)} are there", f"count the {self._them(label)}"])
            return Query(root, projection=Projection(aggregate="count")), question
        root, label, keys = found
        key, fn = rng.choice(keys), rng.choice(sorted(AGGREGATE_WORDS))
        words, named, them = AGGREGATE_WORDS[fn], _key_words(key), self._them(label)
        question = rng.choice([f"what is the {words} {named} of all {them}", f"the {words} {named} among {them}"])
        numeric = self.schema.properties[label][key].numeric
        return Query(root, projection=Projection(aggregate=fn, key=key, numeric=numeric)), question

    def _link(self, rng) -> tuple[str, str, str, bool] | None:
        """A relationship of the schema seen from one end (by the seed): (its type, the root's
        label, the other end's label, outgoing from the root)."""
        links = sorted((p.source, p.type, p.target) for p in self.schema.patterns)
        if not links:
            return None
        source, kind, target = rng.choice(links)
        outgoing = rng.random() < 0.5
        return (kind, source, target, True) if outgoing else (kind, target, source, False)

    def _most(self, rng, anchors):
        found = self._link(rng)
        if found is None:
            return None
        kind, root, other, outgoing = found
        verb = _key_words(kind)
        pattern = Pattern(AnchorRef(None, (root,)), (Step(kind, outgoing, (other,)),), 1)
        if outgoing:
            question = f"which {self._one(root)} {verb} the most {self._them(other)}"
        else:
            question = f"which {self._one(root)} was {verb} by the most {self._them(other)}"
        projection = Projection(aggregate="count", group=0)
        return Query(pattern, projection=projection, order=Order("count", True), limit=1), question

    def _most_composed(self, rng, anchors):
        """The node or the k nodes with the most neighbours of a kind, sometimes only those that
        hold a value counted, the step read in its voice ("the 3 movies that were written by the
        most persons", "which category the most products are part of")."""
        found = self._link(rng)
        if found is None:
            return None
        kind, root, other, outgoing = found
        verb, k = _key_words(kind), rng.choice((1, 1, 3, 5))
        pattern = Pattern(AnchorRef(None, (root,)), (Step(kind, outgoing, (other,)),), 1)
        who = (
            f"which {self._one(root)}"
            if k == 1
            else rng.choice([f"the {k} {self._them(root)}", f"top {k} {self._them(root)}"])
        )
        # sometimes only the neighbours that hold a value count: the most movies released after 2000
        condition = self._condition(rng, other, 1) if rng.random() < 0.3 else None
        filters, most = (
            ((condition[0],), f"the most {self._them(other)} {condition[1]}")
            if condition
            else ((), f"the most {self._them(other)}")
        )
        is_verb, done = reads_as_verb(kind), participle(kind)
        if outgoing:  # which person acted in the most movies / which product is part of the most ...
            said = verb if is_verb else ("is " if k == 1 else "are ") + verb
            question = f"{who} {said} {most}" if k == 1 else f"{who} that {said} {most}"
        elif is_verb or done is not None:  # ORDERS: ordered by; ACTED_IN: acted in by
            question = f"{who} {'was' if k == 1 else 'that were'} {done or verb} by {most}"
        else:  # which category the most products are part of
            question = f"{who} {'' if k == 1 else 'that '}{most} are {verb}"
        projection = Projection(aggregate="count", group=0)
        return Query(pattern, filters, projection=projection, order=Order("count", True), limit=k), question

    def _common(self, rng, anchors):
        """How many of a label's nodes share each value of a text property: the most common k
        values, or every value with its count."""
        found = self._keys(rng, "few") if rng.random() < 0.5 else None
        found = found or self._keys(rng, "text")
        if found is None:
            return None
        root, label, keys = found
        key, k = rng.choice(keys), rng.choice((None, 1, 3, 5))
        named, them = _key_words(key), self._them(label)
        projection = Projection(aggregate="count", group=0, group_key=key)
        if k is None:
            question = rng.choice([f"how many {them} are there for each {named}", f"the number of {them} per {named}"])
            return Query(root, projection=projection), question
        if k == 1:
            question = f"which {named} is the most common among {them}"
        else:
            question = rng.choice([f"the {k} most common {named}s of {them}", f"list the top {k} {named}s by {them}"])
        return Query(root, projection=projection, order=Order("count", True), limit=k), question

    def _lacking(self, rng, anchors):
        found = self._link(rng)
        if found is None:
            return None
        kind, root, other, outgoing = found
        verb = _key_words(kind)
        lacking = Filter(0, kind, "NOT EXISTS", other, outgoing=outgoing)
        if outgoing:
            question = f"which {self._them(root)} {verb} no {self._one(other)}"
        else:
            question = f"which {self._them(root)} no {self._one(other)} {verb}"
        return Query(Pattern(AnchorRef(None, (root,)), (), 0), (lacking,)), question

    def _lookup(self, rng, anchors):
        if not anchors:
            return None
        ref, name = rng.choice(anchors)
        props: dict = {}
        for label in ref.labels:
            props.update(self.schema.properties.get(label, {}))
        named = {self.naming(label) for label in ref.labels}  # "the name of X" asks nothing
        keys = sorted(k for k, info in props.items() if info.type in NUMERIC | {"string"} and k not in named)
        if not keys:
            return None
        key = rng.choice(keys)
        words = _key_words(key)
        question = rng.choice([f"what is the {words} of {name}", f"tell me the {words} of {name}"])
        return Query(Pattern(ref, (), 0), projection=Projection((key,))), question

    def _count(self, rng, anchors):
        """How many nodes one of the node's own relationships reaches."""
        found = self._anchor_step(rng, anchors)
        if found is None:
            return None
        ref, name, step = found
        verb, others = _key_words(step.type), self._them(step.labels[0])
        question = f"how many {others} has {name} {verb}" if step.outgoing else f"how many {others} {verb} {name}"
        return Query(Pattern(ref, (step,), 1), projection=Projection(aggregate="count")), question

    # ------------------------------------------------------------------ a step and its clauses
    def _measures(self, label: str) -> list[str]:
        """A label's keys that hold numbers (or text that holds numbers, read with toFloat)."""
        props = self.schema.properties.get(label, {})
        return sorted(k for k, info in props.items() if info.type in NUMERIC or info.numeric)

    def _condition(self, rng, label: str, element: int) -> tuple[Filter, str] | None:
        """A filter on node ``element`` of a path, of label ``label``, by a value its nodes hold
        (a number compared, or one of a few-valued text's values), and its words ("whose released
        is after 2000", "with country France")."""
        props = self.schema.properties.get(label, {})
        measures = self._measures(label)
        few = sorted(k for k, info in props.items() if info.type == "string" and info.few and info.values)
        choices = [(True, k) for k in measures] + [(False, k) for k in few]
        if not choices:
            return None
        measure, key = rng.choice(choices)
        named = _key_words(key)
        if measure:
            text = props[key].numeric  # read with toFloat
            values = [number_of(v) if text else v for v in self.values(label, key)]
            values = [v for v in values if is_number(v)]
            if not values:
                return None
            value, op = rng.choice(values), rng.choice(sorted(COMPARISON_WORDS))
            said = _compared(rng, op, value)
            words = rng.choice([f"whose {named} is {said}", f"with {named} {said}", f"with a {named} {said}"])
            return Filter(element, key, op, value, numeric=text), words
        # a value a person would type (not a picture's bytes as text)
        values = [v for v in props[key].values or [] if isinstance(v, str) and v.strip() and len(v) <= MAX_SAID]
        if not values:
            return None
        value = rng.choice(values)
        return Filter(element, key, "=", value), rng.choice([f"whose {named} is {value}", f"with {named} {value}"])

    def _ordering(self, rng, label: str) -> tuple[Order, str] | None:
        """An order of a label's nodes by a number of theirs, not returned, and its words ("with
        the highest born")."""
        keys = self._measures(label)
        if not keys:
            return None
        key, descending = rng.choice(keys), rng.random() < 0.5
        words = f"with the {'highest' if descending else 'lowest'} {_key_words(key)}"
        return Order(key, descending, before=True, numeric=self.schema.properties[label][key].numeric), words

    def _relating(self, rng) -> tuple[Pattern, Filter, str, str] | None:
        """A label's nodes related by a step of the schema to nodes that hold a value: the path
        (its root the target), the filter on the other end, the clause that says both ("acted
        in a movie whose released is after 2000") and the root's label."""
        found = self._link(rng)
        if found is None:
            return None
        kind, root, other, outgoing = found
        condition = self._condition(rng, other, 1)
        if condition is None:
            return None
        item, said = condition
        verb, one = _key_words(kind), self._one(other)
        is_verb = reads_as_verb(kind)
        if outgoing:  # the persons that acted in a movie whose released is after 2000 / are part of
            clause = f"{verb if is_verb else 'are ' + verb} {_article(one)} {one} {said}"
        elif (done := participle(kind)) is not None:  # the movies written by a person born ...
            clause = rng.choice([f"were {done} by", f"{done} by"]) + f" {_article(one)} {one} {said}"
        else:  # the movies that a person whose born is below 1960 acted in / is part of
            clause = f"that {_article(one)} {one} {said} {verb if is_verb else 'is ' + verb}"
        pattern = Pattern(AnchorRef(None, (root,)), (Step(kind, outgoing, (other,)),), 0)
        return pattern, item, clause, root

    def _related(self, rng, anchors):
        found = self._relating(rng)
        if found is None:
            return None
        pattern, item, clause, root = found
        them, k = self._them(root), rng.choice((None, None, 3, 5))
        if k is None:
            question = rng.choice(
                [f"which {them} {clause}", f"the {them} {_that(clause)}", f"list the {them} {_that(clause)}"]
            )
            return Query(pattern, (item,)), question
        question = rng.choice([f"name {k} {them} {_that(clause)}", f"the first {k} {them} {_that(clause)}"])
        return Query(pattern, (item,), limit=k), question

    def _related_top(self, rng, anchors):
        found = self._relating(rng)
        if found is None:
            return None
        pattern, item, clause, root = found
        ordering = self._ordering(rng, root)
        if ordering is None:
            return None
        order, words = ordering
        them, k = self._them(root), rng.choice((1, 3, 5))
        if k == 1:  # one node: "was written by"
            one = re.sub(r"^are ", "is ", re.sub(r"^were ", "was ", clause))
            question = f"which {self._one(root)} {words} {one}"
        else:
            question = rng.choice(
                [f"the {k} {them} {words} {_that(clause)}", f"top {k} {them} {_that(clause)}, {words}"]
            )
        return Query(pattern, (item,), order=order, limit=k), question

    def _related_aggregate(self, rng, anchors):
        """How many of a label's nodes are related to nodes that hold a value, or a number of
        theirs at its highest, lowest or on average: "how many persons acted in a movie whose
        released is after 2000", "the average born of the persons that directed a movie ..."."""
        found = self._relating(rng)
        if found is None:
            return None
        pattern, item, clause, root = found
        them = self._them(root)
        keys = self._measures(root)
        if not keys or rng.random() < 0.5:
            question = rng.choice([f"how many {them} {clause}", f"count the {them} {_that(clause)}"])
            return Query(pattern, (item,), projection=Projection(aggregate="count")), question
        key, fn = rng.choice(keys), rng.choice(("avg", "max", "min"))
        question = f"what is the {AGGREGATE_WORDS[fn]} {_key_words(key)} of the {them} {_that(clause)}"
        projection = Projection(aggregate=fn, key=key, numeric=self.schema.properties[root][key].numeric)
        return Query(pattern, (item,), projection=projection), question

    def _neighbours(self, rng, anchors) -> tuple[Pattern, str, str] | None:
        """A named node's neighbours along one of its relationships: the path (the neighbour
        its target), their words ("the movies Tom Hanks acted in", "the persons that directed
        X") and their label."""
        found = self._anchor_step(rng, anchors)
        if found is None:
            return None
        ref, name, step = found
        verb, them = _key_words(step.type), self._them(step.labels[0])
        words = f"{them} {name} {verb}" if step.outgoing else f"{them} that {verb} {name}"
        return Pattern(ref, (step,), 1), words, step.labels[0]

    def _neighbours_holding(self, rng, anchors) -> tuple[Pattern, str, Filter, str] | None:
        """A named node's neighbours that hold a value: the path, their words, the filter and its
        words ("whose released is after 2000")."""
        found = self._neighbours(rng, anchors)
        if found is None:
            return None
        pattern, words, label = found
        condition = self._condition(rng, label, 1)
        return None if condition is None else (pattern, words, *condition)

    def _neighbours_filter(self, rng, anchors):
        found = self._neighbours_holding(rng, anchors)
        if found is None:
            return None
        pattern, words, item, said = found
        question = rng.choice([f"which {words} {said}", f"the {words}, {said}", f"list the {words} {said}"])
        return Query(pattern, (item,)), question

    def _neighbours_top(self, rng, anchors):
        found = self._neighbours(rng, anchors)
        if found is None:
            return None
        pattern, words, label = found
        ordering = self._ordering(rng, label)
        if ordering is None:
            return None
        order, said = ordering
        k = rng.choice((1, 3, 5))
        if k == 1:
            noun, rest = words.split(" ", 1)
            question = f"which of the {noun} {rest} has the {said.removeprefix('with the ')}"
        else:
            question = rng.choice([f"the {k} {words} {said}", f"top {k} {words}, {said}"])
        return Query(pattern, order=order, limit=k), question

    def _neighbours_count(self, rng, anchors):
        found = self._neighbours_holding(rng, anchors)
        if found is None:
            return None
        pattern, words, item, said = found
        question = rng.choice([f"how many {words} {said}", f"count the {words} {said}"])
        return Query(pattern, (item,), projection=Projection(aggregate="count")), question

    def _same(self, rng, anchors):
        """Two kinds of relationship from the same node to the same node: "the movies written
        and directed by the same person", "the persons that acted in and directed the same
        movie" (a closed path of two steps from a label, `patterns.label_roots`). Such a path is
        walked four ways (from either label, either type first) with the same results; the one
        of earliest text is asked, as a training pair of such a question is (synthesis keeps the
        simplest, then the earliest text), and the verbs are said in either order."""
        ways = self._closed_ways
        if not ways:
            return None
        (agent, other, types, asks_agent), pattern = rng.choice(ways)
        types = list(types) if rng.random() < 0.5 else list(reversed(types))
        if asks_agent:
            them, verbs = self._them(agent), [_key_words(t) for t in types]
            said = f"{verbs[0]} and {verbs[1]} the same {self._one(other)}"
            question = rng.choice([f"which {them} {said}", f"the {them} that {said}", f"list the {them} that {said}"])
        else:
            them, done = self._them(other), [participle(t) or _key_words(t) for t in types]
            said = f"{done[0]} and {done[1]} by the same {self._one(agent)}"
            question = rng.choice([f"which {them} were {said}", f"the {them} {said}", f"list the {them} {said}"])
        return Query(pattern), question

    @functools.cached_property
    def _closed_ways(self) -> list[tuple[tuple, Pattern]]:
        """The schema's closed paths of two steps that leave one node twice, one per (the node
        both leave, the other, the two types, which is asked): of its four ways, the earliest text."""
        ways: dict[tuple, Pattern] = {}
        for pattern in label_roots(self.schema):
            first, then = pattern.steps if pattern.closed and len(pattern.steps) == 2 else (None, None)
            # the node both relationships leave: the root (out, in) or the node between (in, out)
            if first is None or first.outgoing == then.outgoing:
                continue
            agent_is_root = first.outgoing
            agent = pattern.anchor.labels[0] if agent_is_root else first.labels[0]
            other = first.labels[0] if agent_is_root else pattern.anchor.labels[0]
            asks_agent = pattern.target == (0 if agent_is_root else 1)
            key = (agent, other, tuple(sorted((first.type, then.type))), asks_agent)
            if key not in ways or path_text(pattern) < path_text(ways[key]):
                ways[key] = pattern
        return sorted(ways.items(), key=lambda w: w[0])

    def _anchor_step(self, rng, anchors) -> tuple[AnchorRef, str, Step] | None:
        """A named node (by the seed), its name and one of its kinds of relationship."""
        if not anchors:
            return None
        ref, name = rng.choice(anchors)
        steps = self._steps_of(ref)
        return (ref, name, rng.choice(steps)) if steps else None

    def _steps_of(self, ref: AnchorRef) -> list[Step]:
        """The kinds of relationship a named node has (type, direction, the other end's label)."""
        rows = self.store.read(
            f"MATCH (a{label_expression((self.store.entity_label,))} {{id: $id}})-[r]-(b) "
            "RETURN DISTINCT type(r) AS type, startNode(r) = a AS outgoing, labels(b) AS labels",
            {"id": ref.id},
            timeout_ms=self.timeout_ms,
        )
        steps = [
            Step(r["type"], bool(r["outgoing"]), tuple(domain_labels(r["labels"])[:1]))
            for r in rows
            if domain_labels(r["labels"])
        ]
        return sorted(steps, key=lambda s: (s.type, s.outgoing, s.labels))

    def keep(self, query: Query, question: str, paths: list[Pattern] | None) -> list[dict] | None:
        """The query's rows when it is a question worth training on: one `ask` can write for the
        question (``paths``: the paths `ask` starts from for it, ``language_paths``; None: not
        checked), answered by 1..max_answers rows (an aggregate by a value)."""
        clauses = ClauseSpace(self.schema, question_literals(question), question)
        if not clauses.contains(query) or (paths is not None and query.pattern not in paths):
            return None
        rows = self.rows(query)
        # the nodes that lack a relationship are often many: what L1 learns is the query
        if not rows or (len(rows) > self.max_answers and not any(f.op in EXISTENCE for f in query.filters)):
            return None
        columns = query.projection.aliases
        if any(row.get(columns[-1]) is None for row in rows) or (
            query.projection.aggregate == "count" and rows[0].get("count") == 0
        ):
            return None
        return rows


def language_row(
    plan: LanguagePlan, rows: list[dict], names: dict[str, str], seed: int, started: float
) -> SynthesisRow:
    """The synthesis row of a kept question: its query and its answers (nodes by name, values as
    text, a row's columns joined)."""
    query = plan.query
    columns = query.projection.aliases
    ids = [row["id"] for row in rows if "id" in columns and row.get("id") is not None]
    answers = [
        ", ".join(str(names.get(row[c], row[c]) if is_node_column(c) else row[c]) for c in columns) for row in rows
    ]
    anchors = []
    if not query.pattern.anchor.is_label_root and plan.anchor_name:
        ref = query.pattern.anchor
        anchors = [
            AnchorRow(
                mention=plan.anchor_name,
                id=ref.id,
                name=plan.anchor_name,
                labels=list(ref.labels),
                method="graph",
                score=1.0,
            )
        ]
    return SynthesisRow(
        qid=plan.qid,
        question=plan.question,
        hops=len(query.pattern.steps),
        qtype="graph:" + plan.form,
        split=split_of(plan.qid),
        answers=answers,
        answer_ids=ids,
        mentions=[a.mention for a in anchors],
        anchors=anchors,
        status="ok",
        reason=None,
        cypher=render_query(query),
        pattern=query.pattern.to_dict(),
        query=query.to_dict(),
        hits=len(rows),
        total=len(rows),
        precision=1.0,
        recall=1.0,
        alternatives=[],
        closest=None,
        enumerated=1,
        timeouts=[],
        hubs_skipped=0,
        source={"kind": "graph", "seed": seed, "form": plan.form, "marked": plan.marked, "template": None},
        timings={"total": round(time.perf_counter() - started, 5)},
    )


def name_of(store, ids: list[str]) -> dict[str, str]:
    """Node ids -> their naming values."""
    if not ids:
        return {}
    return {n["id"]: str(n["name"]) for n in store.nodes_by_id(ids) if n.get("name") is not None}
