"""The order ``ask`` tries L1's queries of the language in: the answer is the first query tried
that returns something, so this order decides among queries L1 scored close.

Two rules, each on by default (``AskConfig.stated_first``, ``AskConfig.asked_label_first``),
L1's order within what they leave tied (``sorted`` is stable):

1. the queries that say more of the values the question states, less what it does not, first
   (``synthesis.literals.stated_balance``: the rule synthesis chooses a training pair's query by);
2. then those that answer with nodes of the label the question asks for: the first label the
   question names ("which *suppliers* have the most products": suppliers, counted by products; not
   the products counted by supplier), a label after "how many" or "number of" being what is
   counted, not what is asked for, and a question that opens with "who" or "whom" naming none.

Paths (no values to say; MetaQA's) have a rule of their own (``AskConfig.asked_type_first``):
those whose answer nodes have the label the question asks for come first, L1's order within.
What it asks for is in its words (``asked_phrase``: "which *films* ...", "what is the *genre*
of ...", "*who* ..." for a person), and the label is the one whose name reads nearest to them
(``nearest_label``, MiniLM): "films" is a ``Movie``, "who" a ``Person``, with no word of any
graph written here."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from graphraft.graph.embeddings import cosine
from graphraft.synthesis.language import Query
from graphraft.synthesis.literals import question_literals, stated_balance
from graphraft.synthesis.patterns import Pattern
from graphraft.synthesis.verbalise import plurals, singular, words_of

#: words after which a label's noun is what is counted, not what is asked for
COUNTED_AFTER = (("many",), ("number", "of"))
#: a question that opens with one of these asks for what no label word names
ASKS_FOR_NO_LABEL = frozenset({"who", "whom"})
#: the words what a question asks for follows ("which films", "what is the genre of")
ASKING = frozenset({"which", "what"})
#: skipped after them: "what *is the* genre of [X]"
LEADING = frozenset({"is", "are", "was", "were", "the", "a", "an", "do", "does", "did", "has", "have"})
#: words of the asked-for phrase kept (2 measured above 3 on MetaQA's training questions: README)
PHRASE_WORDS = 2
#: "who" and "whom" ask for a person: the words a label's name is compared with for them
PERSON = "person"


def asked_label(question: str, labels: Iterable[str]) -> str | None:
    """The label the question asks for: the first whose noun it names, singular or plural
    (``OrderDetail``: "order detail" or "order details"; ``Person``: "persons" or "people",
    ``verbalise.IRREGULAR_PLURALS``), not after "how many" or "number of";
    None when it names none, or opens with "who"."""
    words = re.findall(r"[a-z0-9]+", question.casefold())
    if not words or words[0] in ASKS_FOR_NO_LABEL:
        return None
    forms: dict[tuple[str, ...], str] = {}
    for label in labels:
        noun = " ".join(words_of(label))
        for form in (noun, *plurals(noun), singular(noun)) if noun else ():
            forms.setdefault(tuple(form.split()), label)
    longest_first = sorted(forms.items(), key=lambda item: -len(item[0]))  # "order detail" before "order"
    for index in range(len(words)):
        if any(tuple(words[max(0, index - len(c)) : index]) == c for c in COUNTED_AFTER):
            continue
        for form, label in longest_first:
            if tuple(words[index : index + len(form)]) == form:
                return label
    return None


def answered_labels(query: Query) -> tuple[str, ...] | None:
    """The labels of the nodes a query answers with: its group's for an aggregate per group, its
    target's without an aggregate; None for an aggregate of the whole match (a number, no node)."""
    projection, pattern = query.projection, query.pattern
    if projection.aggregate is not None:
        return None if projection.group is None else pattern.labels_of(projection.group)
    return pattern.labels_of(pattern.target)


def answers_asked(query: Query, asked: str | None) -> bool:
    """Whether ``query`` answers with what the question asks for (or it asks for no label, or
    the query answers with no node)."""
    if asked is None:
        return True
    labels = answered_labels(query)
    return labels is None or asked in labels


def tried_order(
    generated: list,
    question: str,
    names: dict[str, str],
    labels: Iterable[str] = (),
    stated: bool = True,
    asked: bool = True,
) -> list:
    """L1's queries (``GeneratedQuery``) in the order ``ask`` tries them (the module's rules;
    ``names``: anchor id -> name, ``labels``: the graph's)."""
    if not (stated or asked):
        return generated
    literals = question_literals(question)
    label = asked_label(question, labels) if asked else None

    def key(g) -> tuple[int, int]:
        if g.query is None:
            return (0, 0)
        balance = stated_balance(g.query, literals, question, names) if stated else 0
        return (-balance, 0 if answers_asked(g.query, label) else 1)

    return sorted(generated, key=key)  # stable: L1's order within each key, each key computed once


def asked_phrase(question: str, mentions: Iterable[str] = ()) -> str | None:
    """What the question asks for, in its own words: the first ``PHRASE_WORDS`` words after its
    first "which" or "what" (past "is", "the", ...: ``LEADING``), stopping at an entity it names
    (``mentions``); ``PERSON`` when "who" or "whom" comes first; None when it has none of these
    ("can you describe [X]")."""
    text = question.casefold()
    for mention in sorted(set(mentions), key=len, reverse=True):
        if mention.strip():
            text = text.replace(mention.casefold(), " | ")
    words = re.findall(r"[a-z0-9']+|\|", text)
    for index, word in enumerate(words):
        if word in ASKS_FOR_NO_LABEL:
            return PERSON
        if word in ASKING:
            rest = words[index + 1 :]
            while rest and rest[0] in LEADING:
                rest = rest[1:]
            phrase = []
            for following in rest[:PHRASE_WORDS]:
                if following == "|":
                    break
                phrase.append(following)
            return " ".join(phrase) or None
    return None


def nearest_label(
    phrase: str | None, labels: Sequence[str], embed: Callable[[list[str]], list[list[float]]], cache: dict
) -> str | None:
    """The label whose name (its words: ``ProductCategory`` "product category") reads nearest to
    ``phrase`` (cosine similarity of ``embed``'s vectors); ``cache`` keeps the labels' vectors
    between calls. None without a phrase or labels."""
    if not phrase or not labels:
        return None
    missing = [label for label in labels if label not in cache]
    if missing:
        cache.update(zip(missing, embed([" ".join(words_of(label)) or label for label in missing])))
    (asked,) = embed([phrase])
    return max(labels, key=lambda label: cosine(asked, cache[label]))


def answers_label(pattern: Pattern | None, label: str | None) -> bool:
    """Whether the path's answer nodes (its target) have ``label``."""
    return pattern is not None and label is not None and label in pattern.labels_of(pattern.target)


def asked_type_order(generated: list, patterns: dict[str, Pattern], label: str | None) -> list:
    """L1's path queries (``GeneratedQuery``) with those whose answer nodes (the pattern's
    target) have ``label`` first, L1's order within each part; as they are without a label."""
    if label is None:
        return generated
    return sorted(generated, key=lambda g: 0 if answers_label(patterns.get(g.cypher), label) else 1)
