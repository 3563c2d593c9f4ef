"""The values a question states, which are all a query's filters and limits may say.

Numbers (``2000``, ``3.5``, ``1,000``; a decade, ``1960s``, states its first year and the next
decade's, the bounds of its range; ``'90s`` names no century and states nothing) and quoted
text (``'Speed has no limits'``, ``"Matrix"``, typographic quotes too) are read from the
question's characters, in any language. Numbers spelled out (``the three newest movies``) are
read by text2num's ``alpha2digit`` in the question's language (``NUMBER_WORDS``: English; it
knows French, Spanish, Portuguese, German, Italian and Dutch too), small ones too ("zero units",
"the two newest", "more than one category": its threshold 0; ordinals, "first", are not numbers
to compare with); besides them only the words that negate a boolean property's name
(``NEGATIONS``, English: "not discontinued") are words of a language. A property
with few values (the schema lists them) may also be compared with one of its values that the
question spells out (``France``), found by looking the values up in the question, not the
question's words up in a list; a boolean property is stated true where the question names it
("discontinued products"), false where a negation comes just before ("not discontinued")."""

from __future__ import annotations

import re
from dataclasses import dataclass

from graphraft.synthesis.language import EXISTENCE, MAX_LIMIT, NULL_TESTS, Query, Value
from graphraft.synthesis.verbalise import words_of

# a four-digit year of tens followed by "s": the decade starting there
_DECADE = re.compile(r"(?<![\w.])(\d{3}0)s(?!\w)")
_NUMBER = re.compile(r"(?<![\w.])-?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w.])|(?<![\w.])-?\d+(?:\.\d+)?(?![\w])")
# a single quote opens only where no letter is before it and closes only where none is after
# it: "Keanu Reeves' movies" and "O'Brien" hold no quotation
_QUOTED = re.compile(r"(?<!\w)'([^']+)'(?!\w)|\"([^\"]+)\"|‘([^’]+)’|“([^”]+)”|«([^»]+)»")


@dataclass(frozen=True)
class Literals:
    numbers: tuple[int | float, ...] = ()
    strings: tuple[str, ...] = ()

    @property
    def limits(self) -> tuple[int, ...]:
        """What LIMIT may say: 1 (the one most or least ...), and each whole number the question states."""
        return tuple(sorted({1} | {n for n in self.numbers if isinstance(n, int) and 1 <= n <= MAX_LIMIT}))

    @property
    def years(self) -> tuple[str, ...]:
        """What a text value may start with: each four-digit whole number the question states, as
        text (a date kept as text: ``o.orderDate STARTS WITH '1996'`` for "orders placed in 1996")."""
        return tuple(str(n) for n in self.numbers if isinstance(n, int) and 1000 <= n <= 9999)


#: the language whose number words are read (a text2num language code; None: digits only)
NUMBER_WORDS: str | None = "en"


def digits(text: str, language: str | None = NUMBER_WORDS) -> str:
    """``text`` with the numbers it spells out in ``language`` written in digits."""
    if not language:
        return text
    from text_to_num import alpha2digit

    return alpha2digit(text, language, threshold=0)


def question_literals(question: str, language: str | None = NUMBER_WORDS) -> Literals:
    """The numbers (in digits, or spelled out in ``language``) and quoted strings of a question,
    each once, in the order they appear."""
    strings = [next(group for group in match.groups() if group) for match in _QUOTED.finditer(question)]
    unquoted = digits(_QUOTED.sub(" ", question), language)
    found: list[tuple[int, list[int | float]]] = []  # (where, its numbers)
    for match in _DECADE.finditer(unquoted):
        start = int(match.group(1))
        found.append((match.start(), [start, start + 10]))  # >= 1960 AND < 1970
    for match in _NUMBER.finditer(_DECADE.sub(lambda m: " " * len(m.group(0)), unquoted)):
        text = match.group(0).replace(",", "")
        found.append((match.start(), [float(text) if "." in text else int(text)]))
    numbers = [n for _, values in sorted(found, key=lambda f: f[0]) for n in values]
    return Literals(tuple(dict.fromkeys(numbers)), tuple(dict.fromkeys(s.strip() for s in strings if s.strip())))


def mentioned_values(question: str, values: list[Value]) -> list[Value]:
    """The values (of a property with few) that the question spells out as words of its own,
    in any case: ``France`` in "orders shipped to france", not ``UK`` inside "Ukraine"."""
    text = question.casefold()
    found = []
    for value in values:
        if isinstance(value, bool) or not isinstance(value, str) or not value.strip():
            continue
        if re.search(rf"(?<!\w){re.escape(value.casefold())}(?!\w)", text):
            found.append(value)
    return found


#: words that negate the boolean property named just after them (English; empty: none read)
NEGATIONS: frozenset[str] = frozenset({"not", "no", "non", "never", "without", "nor", "un"})
#: how many words before a property's name a negation reaches ("not yet discontinued")
NEGATION_REACH = 3
#: leading words of a boolean property's name that the question need not say (``isActive``: "active")
BOOLEAN_PREFIXES = ("is", "has", "was")


def stated_boolean(question: str, key: str) -> bool | None:
    """The value the question gives boolean property ``key`` by naming it: True where it names
    it (``discontinued``: "the discontinued products"; ``isActive``: "active users"), False where
    a negation (``NEGATIONS``, or a word ending in n't) comes within ``NEGATION_REACH`` words
    before ("products not yet discontinued"), None where it does not name it."""
    name = words_of(key)
    while len(name) > 1 and name[0] in BOOLEAN_PREFIXES:
        name = name[1:]
    words = re.findall(r"[\w']+", question.casefold())
    for index in range(len(words) - len(name) + 1):
        if words[index : index + len(name)] == name:
            before = words[max(0, index - NEGATION_REACH) : index]
            return not any(w in NEGATIONS or w.endswith("n't") for w in before)
    return None


#: filters that compare with nothing the question states (a negated value, a null test, a lacking link)
STATES_NOTHING = ("<>", *NULL_TESTS, *EXISTENCE)


def stated_balance(query: Query, literals: Literals | None, question: str, names: dict[str, str] | None = None) -> int:
    """How many of the values the question states ``query`` says, less the things it says that
    the question does not: what synthesis's training pairs prefer among queries with one result
    (``synthesizer.simplicity``) and what ``ask`` tries first among L1's queries
    (``AskConfig.stated_first``).

    A value the question states (a number, a quoted string, a property value it spells out) is
    said by a filter that keeps it (not ``<>``) or a condition on an aggregate, by a LIMIT of
    that number (not 1: "the most ..." states no number), or by an anchor of that name
    (``names``: anchor id -> name), each value once; a boolean property's value by a filter
    ``= true`` where the question names the property, ``= false`` where it negates it
    (``stated_boolean``). A filter that compares with nothing the question states (``IS NULL``,
    ``NOT (n)-[...]``, ``<>``), a boolean filter against what the question states, and a LIMIT
    of a number it does not state each say something it does not."""
    stated = set(literals.numbers) | set(literals.strings) if literals else set()
    unstated = 0

    def states(value) -> bool:
        if isinstance(value, bool):
            return False
        if value in stated:
            return True
        return isinstance(value, str) and bool(value.strip()) and bool(mentioned_values(question, [value]))

    said = {_said(item.value) for item in query.filters if item.op not in STATES_NOTHING and states(item.value)}
    for item in query.filters:  # a boolean the question states by naming its property, or negating it
        if item.op == "=" and isinstance(item.value, bool):
            told = stated_boolean(question, item.key)
            if told is not None and told == item.value:
                said.add(f"{item.key} = {told}")
            elif told is not None:
                unstated += 1
    if query.projection.having is not None:  # the groups kept by their aggregate: a filter too
        op, value = query.projection.having
        if op not in STATES_NOTHING and states(value):
            said.add(_said(value))
    unstated += sum(item.op in STATES_NOTHING for item in query.filters)
    if query.limit is not None:
        if query.limit in stated and query.limit != 1:
            said.add(_said(query.limit))
        elif query.limit not in stated:
            unstated += 1
    for anchor in (query.pattern.anchor, query.pattern.end_anchor):
        name = (names or {}).get(anchor.id) if anchor is not None and anchor.id else None
        if name and states(name):
            said.add(_said(name))
    return len(said) - unstated


def _said(value) -> str:
    """One form of a value the question states, whatever its type in the query: its 3 said by
    `LIMIT 3` and by `shipVia = "3"` is one value, said once."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).strip().casefold()
