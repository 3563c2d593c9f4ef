"""Which label a question asks for: what ``ask`` prefers its queries to answer with
(``inference.query_order``; the queries' order itself is tested on a graph in test_ask_language)."""

from __future__ import annotations

import pytest

from graphraft.inference.query_order import asked_label

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
