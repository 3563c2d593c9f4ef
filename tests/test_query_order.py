"""Which label a question asks for: what ``ask`` prefers its queries to answer with
(``inference.query_order``; the queries' order itself is tested on a graph in test_ask_language and, for
paths, test_ask)."""

from __future__ import annotations

import pytest

from graphraft.inference.query_order import asked_label, asked_phrase, nearest_label

NORTHWIND = ["Product", "Order", "Customer", "Supplier", "Category", "OrderDetail"]


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("Which 3 suppliers have the most products?", "Supplier"),  # the first it names
        ("List the top 5 most frequently ordered products.", "Product"),  # "ordered" is no noun
        ("Which categories hold a product over $20?", "Category"),  # plural -ies
        ("Name the category of Chai.", "Category"),  # singular
        ("How many products are in each category?", "Category"),  # what "how many" counts is not asked for
        ("What is the number of orders per customer?", "Customer"),
        ("Which order details have a discount?", "OrderDetail"),  # the longest noun at a word
        ("Who supplies the most products?", None),  # "who" asks for what no label names
        ("What is the price of Chai?", None),  # names no label
        ("How many products are there?", None),
    ],
)
def test_the_label_a_question_asks_for(question, asked):
    assert asked_label(question, NORTHWIND) == asked


def test_a_label_given_in_the_plural_is_named_in_the_singular_too():
    assert asked_label("which product sold best", ["Products", "People"]) == "Products"


def test_a_label_is_named_by_englishs_own_plural_too():
    """``Person`` is asked for as "people" (English's irregular plural), not passed over for the movies."""
    labels = ["Movie", "Person"]
    assert asked_label("Show the top 5 people who have reviewed the most movies.", labels) == "Person"
    assert asked_label("Show the top 5 persons who have reviewed the most movies.", labels) == "Person"
    assert asked_label("Which children attend the most schools?", ["School", "Child"]) == "Child"


@pytest.mark.parametrize(
    ("question", "mentions", "phrase"),
    [
        ("the actor of [Torpedo Run] also starred in which films", ["Torpedo Run"], "films"),
        ("what is the genre of [Victor Victoria]", ["Victor Victoria"], "genre of"),  # past "is the"
        ("which movies was What Women Want in", ["What Women Want"], "movies was"),  # the entity's "what" skipped
        ("which [Tom Hanks] films came out in 1994", ["Tom Hanks"], None),  # stops at the entity
        ("who acted together with [Tom Berenger]", ["Tom Berenger"], "person"),
        ("whom did [Tom Hanks] marry", ["Tom Hanks"], "person"),
        ("can you describe [High Crimes] in a few words", ["High Crimes"], None),  # asks for nothing named
    ],
)
def test_the_words_a_question_asks_for_follow_its_which_or_what(question, mentions, phrase):
    assert asked_phrase(question, mentions) == phrase


def test_the_label_asked_for_is_the_one_whose_name_reads_nearest(embedder):
    """The real MiniLM: "films" is a Movie, "who" (a person) a Person, "genre of" a Genre; the
    labels' vectors are made once and kept."""
    labels = ["Movie", "Person", "Genre", "ReleaseYear"]
    cache: dict = {}
    calls = []

    def embed(texts):
        calls.append(list(texts))
        return embedder.embed(texts)

    assert nearest_label("films", labels, embed, cache) == "Movie"
    assert nearest_label("person", labels, embed, cache) == "Person"
    assert nearest_label("genre of", labels, embed, cache) == "Genre"
    assert nearest_label("year", labels, embed, cache) == "ReleaseYear"  # compared as "release year"
    assert calls[0] == ["movie", "person", "genre", "release year"] and len(calls) == 5  # labels once, then phrases
    assert nearest_label(None, labels, embed, cache) is None and len(calls) == 5
