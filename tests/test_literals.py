"""The values a question states: what filters and limits may say, and nothing else."""

from __future__ import annotations

import pytest

from graphraft.synthesis.literals import Literals, mentioned_values, question_literals


@pytest.mark.parametrize(
    "question, numbers, strings",
    [
        ("Name the first 3 people born before 1970 who produced a movie released after 2000.", (3, 1970, 2000), ()),
        ("Products under 3.5 or over 1,000 units?", (3.5, 1000), ()),
        ("Which movies have the tagline 'Speed has no limits'?", (), ("Speed has no limits",)),
        ('Titles containing "Matrix" or “Reloaded” from 1999', (1999,), ("Matrix", "Reloaded")),
        ("Keanu Reeves' movies with O'Brien", (), ()),  # apostrophes are not quotes
        ("films by R2D2 in 'the 80s' of 1999", (1999,), ("the 80s",)),  # numbers inside words and quotes are not
        # a decade states its range's bounds, in its place among the others; '90s names no century
        ("the 3 films of the 1990s after 1995, the '90s", (3, 1990, 2000, 1995), ()),
        ("100s of 1960s, 1995s", (1960, 1970), ()),
        ("", (), ()),
        # spelled out (text2num, English), small numbers too; ordinals are not numbers to compare with
        ("the three newest of twenty-one movies, the first one", (3, 21, 1), ()),
        ("the two newest with zero units, in more than one category, the second", (2, 0, 1), ()),
        ("the top five of 'Three Kings' in 1999", (5, 1999), ("Three Kings",)),  # quoted text stays text
    ],
)
def test_numbers_and_quoted_text_are_read_from_the_question(question, numbers, strings):
    assert question_literals(question) == Literals(numbers, strings)


def test_limits_are_one_and_the_whole_numbers_stated():
    assert question_literals("the 5 oldest of 2,000 people, 2.5 each").limits == (1, 5)
    assert Literals((0, -3, 5000)).limits == (1,)  # nothing a LIMIT can say


def test_few_values_are_found_as_words_of_the_question():
    values = ["France", "UK", "Ukraine", "New Zealand", True, 3]
    found = mentioned_values("orders shipped to france or to NEW ZEALAND from Ukraine", values)
    assert found == ["France", "Ukraine", "New Zealand"]  # in the values' order; "UK" is not "Ukraine"


def test_number_words_are_read_only_in_the_language_asked():
    assert question_literals("the three newest movies", language=None) == Literals()
    assert question_literals("les trois films", language="fr").numbers == (3,)


def test_a_year_stated_is_what_a_text_value_may_start_with():
    """A date kept as text (``orderDate: "1996-07-04"``) is compared with the year as its start."""
    assert question_literals("orders placed in 1996, the 5 first, 3.5 kg, 12000 units").years == ("1996",)


@pytest.mark.parametrize(
    "question, key, stated",
    [
        ("What are the discontinued products?", "discontinued", True),
        ("Which products are reordered but not discontinued?", "discontinued", False),
        ("products that are not yet discontinued", "discontinued", False),  # a negation reaches 3 words
        ("products that aren't discontinued", "discontinued", False),
        ("list non-discontinued products", "discontinued", False),
        ("not one of the products we have is discontinued", "discontinued", True),  # too far to negate it
        ("Which products are in stock?", "discontinued", None),  # names no such property
        ("the active users", "isActive", True),  # a leading is/has need not be said
        ("users with a verified email", "hasVerifiedEmail", True),
    ],
)
def test_a_boolean_property_is_stated_by_naming_it_or_negating_it(question, key, stated):
    from graphraft.synthesis.literals import stated_boolean

    assert stated_boolean(question, key) is stated


@pytest.mark.parametrize(
    "question, kept",
    [("which discontinued products are there", True), ("which products are not discontinued", False)],
)
def test_the_boolean_the_question_states_is_said_and_its_opposite_is_not(question, kept):
    """`discontinued = true` says what "discontinued products" states; `= false` says something
    it does not; a negated name turns both round. Neither counts where the question is silent."""
    from graphraft.synthesis.language import Filter, Query
    from graphraft.synthesis.literals import stated_balance
    from graphraft.synthesis.patterns import AnchorRef, Pattern

    root = Pattern(AnchorRef(None, ("Product",)), (), 0)
    literals = question_literals(question)
    balance = {
        v: stated_balance(Query(root, (Filter(0, "discontinued", "=", v),)), literals, question) for v in (True, False)
    }
    assert balance[kept] == 1 and balance[not kept] == -1
    silent = "which products are there"
    assert stated_balance(Query(root, (Filter(0, "discontinued", "=", kept),)), question_literals(silent), silent) == 0
