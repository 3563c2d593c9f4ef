"""Questions from patterns, in words taken from the graph's own schema (cold start, issue 16).

No phrase is written for any particular data set: a relationship type is split into words and
read by its shape, and a label is a noun.

- ``DIRECTED_BY``, ``BORN_IN`` (a participle and a preposition): "the movies directed by X",
  "which city was X born in"; a participle with ``by`` also reads in the active voice, the verb's
  forms from lemminflect's English tables, and as its agent noun by English's regular suffixes: "the
  movies X directed", "the person that directed X", "the director of X", "which movies did X direct";
- ``HAS_GENRE`` (has + a noun): "the genre of X", "the movies with genre X";
- ``IN_LANGUAGE`` (a preposition first): "the language of X", "the movies in language X";
- ``WON`` (one word, read as a verb): "the awards X won", "the books that won X";
- anything else (``RELEASE_YEAR``, ``STARRED_ACTORS``) as a noun: "the release year of X",
  "the movies with release year X"; a noun in the plural lists members: "the starred actors in X",
  "the movies X is in".

A phrase file (YAML) written by the user for their graph replaces the words for any label or
relationship type::

    labels:
      Person: {singular: person, plural: people}
    relationships:
      DIRECTED_BY:
        forward: ["the director of {x}"]          # (x)-[:DIRECTED_BY]->(answer)
        backward: ["the films {x} directed"]     # (x)<-[:DIRECTED_BY]-(answer)

Each pattern reads as a chain of noun phrases ("the genre of the movies directed by [X]"), put in
one of several question forms (what/which, the noun phrase alone, name/list), chosen by a hash so
that the same seed gives the same questions."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from itertools import zip_longest
from pathlib import Path

from graphraft.errors import InputFileError
from graphraft.synthesis.patterns import Pattern, Step

PREPOSITIONS = frozenset("about at by for from in into of on to with under over".split())


@cache
def _lemminflect():
    try:
        import lemminflect
    except ImportError:  # the active voice is left out; the passive phrases stay
        return None
    return lemminflect


def agent_noun(base: str) -> str:
    """Who does what a verb says, by English's regular suffixes: write -> writer, direct ->
    director, act -> actor, own -> owner, supply -> supplier."""
    if base.endswith("e"):
        return base + "r"
    if base.endswith(("ct", "it")):
        return base + "or"
    if len(base) > 2 and base.endswith("y") and base[-2] not in "aeiou":
        return base[:-1] + "ier"
    if re.fullmatch(r"[^aeiou]*[aeiou][b-df-hj-np-tvz]", base):  # one syllable ending in one consonant
        return base + base[-1] + "er"
    return base + "er"


def active_verb(words: list[str] | tuple[str, ...]) -> tuple[str, str] | None:
    """(base form, past tense) of a type read as a participle and ``by`` (``DIRECTED_BY``:
    direct, directed; ``WRITTEN_BY``: write, wrote); None for any other shape of words."""
    if len(words) != 2 or words[1] != "by" or (tables := _lemminflect()) is None:
        return None
    lemma = tables.getLemma(words[0], upos="VERB")
    past = tables.getInflection(lemma[0], tag="VBD") if lemma else ()
    if not past or lemma[0] == words[0]:  # not a participle
        return None
    return lemma[0], past[0]


def participle(kind: str) -> str | None:
    """The past participle of a relationship type of one word that reads as a verb (``WROTE``
    -> written, ``DIRECTED`` -> directed), for the passive voice; None for any other."""
    words = words_of(kind)
    if len(words) != 1 or (tables := _lemminflect()) is None:
        return None
    lemma = tables.getLemma(words[0], upos="VERB")
    if not lemma or lemma[0] in ("be", "have", "do"):  # IS, HAS: no passive
        return None
    done = tables.getInflection(lemma[0], tag="VBN")
    return done[0] if done else None


def reads_as_verb(kind: str) -> bool:
    """Whether a relationship type opens with an inflected verb (``ACTED_IN``, ``WROTE``,
    ``REPORTS_TO``: "acted in a movie") rather than a noun (``PART_OF``, ``MEMBER_OF``: "is part
    of a category"), by lemminflect's English tables (without them: a verb, as before)."""
    words = words_of(kind)
    if not words or (tables := _lemminflect()) is None:
        return True
    lemma = tables.getAllLemmas(words[0]).get("VERB")
    return bool(lemma) and lemma[0] != words[0]


#: readings of a chain's earlier steps kept (each step has one to five phrases)
READINGS = 8


def words_of(identifier: str) -> list[str]:
    """``DIRECTED_BY`` -> ['directed', 'by']; ``releaseYear`` -> ['release', 'year']."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", identifier)
    return [w for w in re.split(r"[\s_\-:.]+", spaced.lower()) if w]


def plural(noun: str) -> str:
    """English plural of the last word (a rule, not a dictionary); a word that reads as a plural
    already (``tags``, ``actors``: an s after anything but s, u or i) stays."""
    head, _, last = noun.rpartition(" ")
    if re.search(r"[^siu]s$", last):
        return noun
    if re.search(r"(s|x|z|ch|sh)$", last):
        last += "es"
    elif re.search(r"[^aeiou]y$", last):
        last = last[:-1] + "ies"
    else:
        last += "s"
    return f"{head} {last}".strip()


def singular(noun: str) -> str:
    """English singular of the last word (a rule): ``starred actors`` -> ``starred actor``,
    ``categories`` -> ``category``, ``movies`` -> ``movie`` (-vies: English has few -vy nouns); a
    word that does not read as a plural stays."""
    head, _, last = noun.rpartition(" ")
    if re.search(r"vies$", last):
        last = last[:-1]
    elif re.search(r"[^aeiou]ies$", last):
        last = last[:-3] + "y"
    elif re.search(r"(x|z|ch|sh|ss)es$", last):
        last = last[:-2]
    elif re.search(r"[^siu]s$", last):
        last = last[:-1]
    return f"{head} {last}".strip()


#: English's irregular plurals (the language's own, not a data set's): the nouns a rule misses
IRREGULAR_PLURALS = {
    "person": "people",
    "child": "children",
    "man": "men",
    "woman": "women",
    "mouse": "mice",
    "foot": "feet",
    "tooth": "teeth",
    "goose": "geese",
    "ox": "oxen",
    "criterion": "criteria",
    "phenomenon": "phenomena",
    "datum": "data",
    "medium": "media",
    "analysis": "analyses",
    "thesis": "theses",
    "crisis": "crises",
    "diagnosis": "diagnoses",
    "index": "indices",
    "matrix": "matrices",
    "vertex": "vertices",
    "leaf": "leaves",
    "life": "lives",
    "wife": "wives",
    "knife": "knives",
    "shelf": "shelves",
}


def plurals(noun: str) -> tuple[str, ...]:
    """The plurals a question may use for a noun: the rule's (``persons``) and English's
    irregular one of its last word where it has one (``people``, ``children``, ``criteria``)."""
    head, _, last = noun.rpartition(" ")
    forms = [plural(noun)]
    if last in IRREGULAR_PLURALS:
        forms.append(f"{head} {IRREGULAR_PLURALS[last]}".strip())
    return tuple(dict.fromkeys(forms))


@dataclass
class Phrases:
    """What the user's phrase file says; empty by default."""

    labels: dict[str, dict[str, str]] = field(default_factory=dict)
    relationships: dict[str, dict[str, list[str]]] = field(default_factory=dict)

    @classmethod
    def from_yaml(cls, path: Path) -> Phrases:
        import yaml

        try:
            data = yaml.safe_load(Path(path).read_text(encoding="utf-8-sig")) or {}
        except OSError as exc:
            raise InputFileError(f"{path}: cannot read the phrase file ({exc.strerror})") from None
        except yaml.YAMLError as exc:
            raise InputFileError(f"{path}: not valid YAML ({str(exc).splitlines()[0]})") from None
        if not isinstance(data, dict) or set(data) - {"labels", "relationships"}:
            raise InputFileError(f"{path}: a phrase file has 'labels' and/or 'relationships' at the top")
        labels, rels = data.get("labels") or {}, data.get("relationships") or {}
        for name, entry in labels.items():
            if not isinstance(entry, dict) or set(entry) - {"singular", "plural"}:
                raise InputFileError(f"{path}: labels.{name}: give 'singular' and/or 'plural'")
        for name, entry in rels.items():
            if not isinstance(entry, dict) or set(entry) - {"forward", "backward"}:
                raise InputFileError(f"{path}: relationships.{name}: give 'forward' and/or 'backward' phrases")
            for way, phrases in entry.items():
                phrases = [phrases] if isinstance(phrases, str) else phrases
                if not phrases or not all(isinstance(p, str) and "{x}" in p for p in phrases):
                    raise InputFileError(f"{path}: relationships.{name}.{way}: each phrase needs {{x}}")
                entry[way] = phrases
        return cls(labels, rels)


class Verbaliser:
    def __init__(self, phrases: Phrases | None = None):
        self.phrases = phrases or Phrases()

    # ------------------------------------------------------------------ nouns
    def noun(self, labels: tuple[str, ...], many: bool = False) -> str:
        label = labels[0] if labels else "thing"
        given = self.phrases.labels.get(label, {})
        singular = given.get("singular") or " ".join(words_of(label)) or "thing"
        return (given.get("plural") or plural(singular)) if many else singular

    # ------------------------------------------------------------------ one step
    def step_phrases(self, step: Step, x: str) -> list[str]:
        """Noun phrases for the node a step reaches from ``x`` (already a phrase)."""
        way = "forward" if step.outgoing else "backward"
        given = self.phrases.relationships.get(step.type, {}).get(way)
        if given:
            return [p.replace("{x}", x) for p in given]
        words = words_of(step.type) or ["related"]
        them = self.noun(step.labels, many=True)
        if len(words) > 1 and words[-1] in PREPOSITIONS:  # DIRECTED_BY, BORN_IN
            verb = " ".join(words)
            active = active_verb(words)  # DIRECTED_BY: (direct, directed)
            if step.outgoing:
                phrases = [f"the {self.noun(step.labels)} that {x} was {verb}", f"the {them} {x} was {verb}"]
                if active:  # the person that directed X, the director of X
                    agent = agent_noun(active[0])
                    phrases += [f"the {self.noun(step.labels)} that {active[1]} {x}", f"the {agent} of {x}"]
                    phrases.append(f"the {plural(agent)} of {x}")
                return phrases
            phrases = [f"the {them} {verb} {x}", f"the {them} that were {verb} {x}"]
            if active:  # the movies X directed, the movies whose director is X
                phrases += [f"the {them} {x} {active[1]}", f"the {them} whose {agent_noun(active[0])} is {x}"]
            return phrases
        if words[0] == "has" and len(words) > 1:  # HAS_GENRE
            noun = " ".join(words[1:])
            if step.outgoing:
                return [f"the {noun} of {x}", f"the {plural(noun)} of {x}"]
            return [f"the {them} with {noun} {x}", f"the {them} whose {noun} is {x}"]
        if words[0] in PREPOSITIONS and len(words) > 1:  # IN_LANGUAGE
            rest = " ".join(words[1:])
            if step.outgoing:
                return [f"the {rest} of {x}", f"the {rest} {x} is {words[0]}"]
            return [f"the {them} {' '.join(words)} {x}"]
        if len(words) == 1:  # WON: read as a verb
            if step.outgoing:
                return [f"the {them} {x} {words[0]}", f"the {them} that {x} {words[0]}"]
            return [f"the {them} that {words[0]} {x}"]
        noun = " ".join(words)  # RELEASE_YEAR, STARRED_ACTORS
        members = self._members(step)  # a plural noun lists what the node holds: the actors in X
        if step.outgoing:
            return [f"the {noun} of {x}"] + ([f"the {noun} in {x}"] if members else [])
        phrases = [f"the {them} with {noun} {x}", f"the {them} whose {noun} is {x}"]
        return phrases + ([f"the {them} {x} is in"] if members else [])

    def _members(self, step: Step) -> bool:
        """The type is a noun in the plural (``STARRED_ACTORS``, not ``RELEASE_YEAR``): the
        nodes it reaches are members of the node it leaves, "the starred actors in X"."""
        words = words_of(step.type)
        noun = " ".join(words)
        return (
            len(words) > 1
            and words[0] != "has"
            and words[0] not in PREPOSITIONS
            and words[-1] not in PREPOSITIONS
            and active_verb(words) is None
            and singular(noun) != noun
        )

    def relation_noun(self, step: Step) -> str:
        """What the node a step reaches is to the node it leaves, as one noun. Along the type:
        the type's own noun where it names one (``HAS_GENRE`` -> genre, ``STARRED_ACTORS`` ->
        starred actor, ``IN_LANGUAGE`` -> language), a participle's agent noun (``DIRECTED_BY``
        from a movie -> director), else the reached label's. Against it, the reached label's:
        the type's noun names the node it leaves (``STARRED_ACTORS`` back from a person reaches
        a movie, not a starred actor)."""
        if not step.outgoing:
            return self.noun(step.labels)
        words = words_of(step.type) or ["related"]
        if len(words) > 1 and words[0] == "has":
            return singular(" ".join(words[1:]))
        if len(words) > 1 and words[0] in PREPOSITIONS:
            return singular(" ".join(words[1:]))
        active = active_verb(words)
        if active:  # DIRECTED_BY from the movie: its director
            return agent_noun(active[0])
        if len(words) == 1 or words[-1] in PREPOSITIONS:  # a verb: the node is named by its label
            return self.noun(step.labels)
        return singular(" ".join(words))

    # ------------------------------------------------------------------ patterns
    def _shares(self, pattern: Pattern, index: int) -> bool:
        """Steps ``index - 1`` and ``index`` go there and back through one type (the movies
        sharing X's director), a type the user's phrase file does not word."""
        steps = pattern.steps
        return (
            index >= 1
            and pattern.end_anchor is None
            and not pattern.closed
            and steps[index - 1].type == steps[index].type
            and steps[index - 1].outgoing != steps[index].outgoing
            and not self.phrases.relationships.get(steps[index].type)
        )

    def share_phrases(self, first: Step, second: Step, x: str) -> list[str]:
        """The nodes that share with ``x`` the node ``first`` reaches: "the movies that share a
        director with X", "the movies with the same director as X"; from the movie "the other
        movies of the directors of X", where the type reads as a verb "the movies whose director
        also directed X", where it lists members "the movies the starred actors in X are also
        in"; from the person, by
        what they are to the shared node, "the starred actors that share a movie with X", and where
        the person does what the verb says, "the persons that directed movies with X", "the persons
        X directed movies with" and "the co-directors of X"."""
        them, middle = self.noun(second.labels, many=True), self.relation_noun(first)
        article = "an" if middle[:1] in "aeiou" else "a"
        phrases = [f"the {them} that share {article} {middle} with {x}"]
        if first.outgoing:  # from the movie: what the shared node is to the others
            phrases.append(f"the other {them} of the {plural(middle)} of {x}")
        active = active_verb(words_of(first.type))
        if not first.outgoing:  # from the person: what they are to the shared node, what they do
            role = plural(self.relation_noun(second))
            if role != them:
                phrases.append(f"the {role} that share {article} {middle} with {x}")
            if active:
                things = self.noun(first.labels, many=True)
                phrases += [
                    f"the {them} that {active[1]} {things} with {x}",
                    f"the co-{plural(agent_noun(active[0]))} of {x}",
                    f"the {them} {x} {active[1]} {things} with",
                ]
        phrases.append(f"the {them} with the same {middle} as {x}")
        if active and first.outgoing:
            phrases.append(f"the {them} whose {agent_noun(active[0])} also {active[1]} {x}")
        if first.outgoing and self._members(first):  # members of X, members of the others too
            phrases.append(f"the {them} the {plural(middle)} in {x} are also in")
        return phrases

    def phrases_for(self, pattern: Pattern, anchor: str, other: str | None = None) -> list[str]:
        """Noun phrases for the pattern's target, given the anchor's (and a second anchor's)
        text: each earlier step in each of its phrases (up to ``READINGS`` readings of the chain;
        the first phrase is the first phrases all along). Two steps through one type there and
        back (the movies sharing X's director), anywhere in the chain, also read as sharing."""
        steps = pattern.steps
        if pattern.end_anchor is not None:  # a bridge: the middle node, seen from both anchors
            back = Step(steps[1].type, not steps[1].outgoing, steps[0].labels)
            first = self.step_phrases(steps[0], anchor)
            second = self.step_phrases(back, other or "")
            them = self.noun(steps[0].labels, many=True)
            strip = lambda p: p.removeprefix(f"the {them} ")  # noqa: E731 - "the movies X" -> "X"
            return [f"{a} and {strip(b)}" for a in first for b in second[:1]]
        return self._chain_readings(pattern, anchor, pattern.target)

    def _readings(self, pattern: Pattern, anchor: str) -> list[str]:
        """Readings of the steps before the target's (up to READINGS), the first phrases all
        along first."""
        return self._chain_readings(pattern, anchor, pattern.target - 1)[:READINGS]

    def _chain_readings(self, pattern: Pattern, anchor: str, count: int) -> list[str]:
        """The readings of the node the first ``count`` steps reach: each earlier reading's first
        phrase, then each one's second, ... (every reading goes on), after a pair of steps there
        and back through one type in turn with the sharing readings; the readings of the nodes
        before it kept to ``READINGS``."""
        levels = [[anchor]]
        for index, step in enumerate(pattern.steps[:count]):
            phrases = [self.step_phrases(step, x) for x in levels[-1][:READINGS]]
            rounds = range(max(map(len, phrases)))
            level = [p[i] for i in rounds for p in phrases if i < len(p)]
            if self._shares(pattern, index):  # the chain's readings and the sharing ones in turn
                before = levels[-2][:READINGS]
                shared = [p for x in before for p in self.share_phrases(pattern.steps[index - 1], step, x)]
                level = [p for pair in zip_longest(level, shared) for p in pair if p is not None]
            levels.append(list(dict.fromkeys(level)))
        return levels[-1]

    def _clauses(self, pattern: Pattern, anchor: str) -> list[str]:
        """The target's step as a clause, where its type reads as a verb in the active voice:
        "which movies did X direct", "which person directed X" (X: the chain before it)."""
        last = pattern.steps[pattern.target - 1]
        active = active_verb(words_of(last.type))
        if pattern.end_anchor is not None or active is None or self.phrases.relationships.get(last.type):
            return []
        readings = self._readings(pattern, anchor)[:2]
        if last.outgoing:
            return [f"which {self.noun(last.labels)} {active[1]} {x}" for x in readings]
        return [f"which {self.noun(last.labels, many=True)} did {x} {active[0]}" for x in readings]

    def questions(self, pattern: Pattern, anchor: str, other: str | None = None) -> list[str]:
        """Every question form for the pattern (the caller picks one)."""
        forms = []
        target_noun = self.noun(pattern.steps[pattern.target - 1].labels, many=True)
        for phrase in self.phrases_for(pattern, anchor, other):
            rest = phrase.removeprefix("the ")
            forms += [f"what are {phrase}", f"which are {phrase}", f"name {phrase}", phrase]
            if rest.startswith(target_noun + " "):  # "the movies directed by X" -> "which movies directed by X"
                forms.append(f"which {rest}")
            else:
                forms.append(f"what is {phrase}")
        return forms + self._clauses(pattern, anchor)
