"""Synthesis: from question/answer pairs to ranked (question, Cypher) training pairs.

For each question: find its mentions (L0), resolve them to anchor nodes, enumerate the
1-, 2- and 3-hop patterns (and two-anchor bridges) around the anchors inside the database,
score each by how many answers it hits, and keep the best (paper section 4.1).

Enumeration goes one hop length at a time and stops early when a pattern returns exactly
the answers: a longer one could at best tie, and ties go to fewer hops, so this is exact.

    python -m graphraft.synthesize --dataset metaqa --split train
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import time
from collections import Counter, defaultdict
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import Field

from graphraft.config import QUERY_TIMEOUT_MS, StageConfig
from graphraft.errors import InputFileError
from graphraft.graph.loaders.questions import QAItem
from graphraft.progress import Progress, SilentProgress
from graphraft.synthesis.clauses import ClauseSpace
from graphraft.synthesis.enumeration import Enumeration, PatternEnumerator
from graphraft.synthesis.language import AGGREGATES, Query, render_query
from graphraft.synthesis.literals import Literals, question_literals, stated_balance
from graphraft.synthesis.mentions import EntityExtractor, make_extractor
from graphraft.synthesis.patterns import RENDERER_VERSION, language_paths
from graphraft.synthesis.ranking import rank, select
from graphraft.synthesis.reproduce import Reproduction, reproduce
from graphraft.synthesis.resolution import Anchor, EntityResolver, resolver_for
from graphraft.synthesis.results import candidate_key, result_key
from graphraft.synthesis.rows import AnchorRow, RankedQuery, SynthesisRow, done_qids
from graphraft.synthesis.verbalise import words_of


class SynthesisConfig(StageConfig):
    """How training pairs are made (`graphraft synthesize` takes each field as a flag)."""

    max_hops: int = Field(3, ge=1, le=3, description="Longest pattern to enumerate.")
    bridges: bool = Field(True, description="Also join pairs of anchors.")
    fanout_cap: int = Field(500, ge=1, description="Do not expand nodes with more relationships than this.")
    timeout_ms: int = Field(QUERY_TIMEOUT_MS, ge=1, description="Time limit per enumeration query.")
    min_recall: float = Field(
        1.0, ge=0.0, le=1.0, description="Keep a question only if its best query reaches this recall."
    )
    min_precision: float = Field(0.0, ge=0.0, le=1.0, description="... and this precision.")
    alternatives: int = Field(3, ge=0, description="Next-best queries kept per question.")
    all_hops: bool = Field(
        False,
        description="Enumerate every hop length even after an exact pattern (deeper ties become "
        "alternatives, so targets can follow the question's wording).",
    )
    workers: int = Field(2, ge=1, description="Questions worked on in parallel.")
    language_budget: int = Field(
        10_000_000,
        gt=0,
        description="Work allowed a question's search of the query language for its gold result (rows), "
        "counted the same on any machine and beside any other question, so the same pairs come out: "
        "about a microsecond a unit on one core (reproduce.WORK), so about 10 s a question by default.",
    )
    language_budget_s: float = Field(
        120.0,
        gt=0,
        description="Seconds after which a question's search of the query language stops, whatever its "
        "work (a cap for slow databases: a search it cuts depends on the machine).",
    )
    gold_names: bool = Field(
        False,
        description="Pairs with a Cypher: search only the relationship types and properties it names (a query "
        "that gives its result through others gives it by a coincidence of the data, and would teach that).",
    )
    # the questions as people write them: L0 and resolution then find the entity as `ask`
    # does, so wrong anchors sit among the candidates and the target names the right one
    unmarked: bool = Field(False, description="Strip the [brackets] around each question's entity.")
    typos: int | None = Field(None, description="Put one character edit in each question's entity (this seed).")

    def fingerprint(self) -> dict[str, Any]:
        """What decides the rows' content (not how fast they are made)."""
        data = self.model_dump()
        data.pop("workers")
        for key in ("unmarked", "typos"):  # the defaults, as in files written before the options
            if data[key] in (False, None):
                data.pop(key)
        if not data["gold_names"]:
            data.pop("gold_names")  # the default, as in files written before the option
        if not data["all_hops"]:
            data.pop("all_hops")  # the default, as in files written before the option existed
        data["renderer_version"] = RENDERER_VERSION
        return data


def synthesizer_for(store, settings, config: SynthesisConfig) -> Synthesizer:
    """The synthesizer for a store: the settings' extractor and resolver, the config's enumeration limits."""
    return Synthesizer(
        make_extractor(settings.extractor, store, settings),
        resolver_for(store, settings),
        PatternEnumerator(store, config.fanout_cap, config.timeout_ms),
        config,
    )


class Synthesizer:
    def __init__(
        self,
        extractor: EntityExtractor,
        resolver: EntityResolver,
        enumerator: PatternEnumerator,
        config: SynthesisConfig | None = None,
    ):
        self.extractor, self.resolver, self.enumerator = extractor, resolver, enumerator
        self.config = config or SynthesisConfig()

    def row_for(self, item: QAItem) -> SynthesisRow:
        """The output row for one question (never raises for a question the graph cannot answer)."""
        cfg = self.config
        started = time.perf_counter()
        answer_ids = list(item.extra.get("answer_ids", []))
        row = SynthesisRow(
            qid=item.qid,
            question=item.question,
            hops=item.hops,
            qtype=item.qtype,
            split=item.split,
            answers=list(item.answers),
            answer_ids=answer_ids,
            mentions=[],
            anchors=[],
            status="dropped",
            reason=None,
            cypher=None,
            pattern=None,
            query=None,
            hits=0,
            total=0,
            precision=0.0,
            recall=0.0,
            alternatives=[],
            closest=None,
            enumerated=0,
            timeouts=[],
            hubs_skipped=0,
            source=None,
            timings={},
        )
        mentions = self.extractor.extract(item.question)
        row.mentions = [m.text for m in mentions]
        t_extract = time.perf_counter()
        anchors: list[Anchor] = self.resolver.resolve_all(mentions) if mentions else []
        row.anchors = [AnchorRow(**a.to_dict()) for a in anchors]
        t_resolve = time.perf_counter()
        answer_names = [] if answer_ids else sorted(set(item.answers))
        n_answers = len(answer_ids) or len(answer_names)
        if item.extra and "rows" in item.extra:  # a gold result: the query of the language that gives it
            self._language_row(item, row, anchors)
        elif not mentions:
            row.reason = "no entity mention found"
        elif not anchors:
            row.reason = "no anchor: " + ", ".join(repr(m.text) for m in mentions) + " not in the graph"
        elif not n_answers:
            row.reason = "no answers given"
        else:
            found = Enumeration()
            ranked = []
            refs = [a.ref for a in anchors]
            for hops in range(1, cfg.max_hops + 1):
                for ref in refs:
                    found.extend(self.enumerator.around(ref, hops, answer_ids, answer_names))
                if hops == 2 and cfg.bridges and len(refs) > 1:
                    for i, first in enumerate(refs):
                        for second in refs[i + 1 :]:
                            found.extend(self.enumerator.between(first, second, answer_ids, answer_names))
                ranked = rank(found.patterns, n_answers)
                if ranked and ranked[0].perfect and not cfg.all_hops:
                    break
            row.enumerated, row.timeouts, row.hubs_skipped = len(ranked), found.timeouts, found.hubs_skipped
            best, alternatives = select(ranked, cfg.min_recall, cfg.min_precision, cfg.alternatives)
            if ranked:
                row.closest = RankedQuery(**ranked[0].to_dict())
            if best is None:
                top = ranked[0].recall if ranked else 0.0
                row.reason = (
                    f"no pattern with recall >= {cfg.min_recall:g} and precision >= "
                    f"{cfg.min_precision:g} (best recall {top:.2f})"
                    if ranked
                    else "no pattern found"
                )
            else:
                row.status = "ok"
                row.cypher = best.stats.cypher
                row.pattern = best.stats.pattern.to_dict()
                row.hits, row.total = best.stats.hits, best.stats.total
                row.precision, row.recall = round(best.precision, 4), round(best.recall, 4)
                row.alternatives = [RankedQuery(**a.to_dict()) for a in alternatives]
        done = time.perf_counter()
        row.timings = {
            "extract": round(t_extract - started, 5),
            "resolve": round(t_resolve - t_extract, 5),
            "enumerate": round(done - t_resolve, 5),
            "total": round(done - started, 5),
        }
        return row

    def _language_row(self, item: QAItem, row: SynthesisRow, anchors: list[Anchor]) -> None:
        """Keep the simplest query of the language whose result is the question's gold result
        (``synthesis/reproduce.py``: found among the paths around its anchors and the label
        roots, with the clauses its literals allow; confirmed by the database), or say why not.
        A gold query cut by a LIMIT with no ORDER BY (``any_of``: its rows without the LIMIT) is
        taught as the query giving those rows, cut at the question's number."""
        store = self.enumerator.store
        gold = result_key(item.extra["rows"])
        schema = store.schema()
        refs = [a.ref for a in anchors]
        around = self.enumerator.all_patterns(refs, self.config.max_hops).candidates.values() if refs else []
        named = gold_names(item.extra.get("cypher")) if self.config.gold_names else None
        if named is not None:
            schema = named.narrowed(schema)
            around = [p for p in around if named.walks(p)]
        literals = question_literals(item.question)
        clauses = ClauseSpace(schema, literals, item.question)

        paths = list(language_paths(around, refs, schema))
        names = {a.id: a.name for a in anchors}

        def search(wanted: frozenset, order: tuple[str, bool] | None = None) -> Reproduction:
            found = reproduce(
                store,
                paths,
                clauses,
                wanted,
                candidate_key,
                timeout_ms=self.config.timeout_ms,
                budget=self.config.language_budget,
                budget_s=self.config.language_budget_s,
                order=order,
                lazy=True,  # only the queries a pair could teach are run, best first
            )
            row.enumerated += found.proposed
            return found

        def spent(found: Reproduction) -> str:
            return " (its budget spent before every path was searched)" if found.exhausted else ""

        if "any_of" in item.extra:
            # the gold query's LIMIT had no ORDER BY: it picked its rows arbitrarily from these, so
            # the pair teaches the query that gives them all, cut at the question's number. The pick
            # itself is not searched for: a query giving it would say, by an order or a filter that
            # happens to agree with the database's pick, what the question does not
            if len(gold) not in literals.limits:
                row.reason = "the gold query's LIMIT picks arbitrary rows, and the question states no number to cut at"
                return
            found = search(result_key(item.extra["any_of"]))
            cut = len(gold)  # each weighed with its LIMIT, which says the question's number
            uncut = {dataclasses.replace(q, limit=cut): q for q in found.queries if q.order is None and q.limit is None}
            found.queries = list(uncut)
            ranked = pair_queries(found, literals, item.question, names)
            best = next((q for q in ranked if found.first_confirmed([uncut[q]]) is not None), None)
            if best is None:
                row.reason = "no query of the language gives the rows the gold query's LIMIT picks from" + spent(found)
                return
        else:
            order = gold_order(item.extra.get("cypher"))
            found = search(gold, order)
            # ordered as the gold query is, where some query is: the question's order, which a
            # result whose LIMIT keeps every row cannot tell (nor one of several equal orders)
            best = found.first_confirmed(pair_queries(found, literals, item.question, names, order))
            if best is None:
                row.reason = "no query of the language gives the gold result" + spent(found)
                return
        row.status = "ok"
        row.query = best.to_dict()
        row.cypher = render_query(best)
        row.pattern = best.pattern.to_dict()
        row.hits = row.total = len(gold)
        row.precision = row.recall = 1.0


#: ``ORDER BY [toFloat(]name[.key][)] [ASC|DESC]``: text read as a number sorts on its key too
_ORDER_BY = re.compile(
    r"\bORDER\s+BY\s+(?:to(?:Float|Integer)\s*\(\s*)?(\w+)(?:\.(\w+))?\s*\)?(?:\s*(ASC|ASCENDING|DESC|DESCENDING)\b)?",
    re.I,
)
_AGGREGATE_AS = r"\b({})\s*[({{][^,]*?\bAS\s+{}\b"


_STRING = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
#: ``-[r:ACTED_IN|DIRECTED*1..2 {roles: …}]-``: what is inside a relationship's brackets
_RELATIONSHIP = re.compile(r"-\s*\[([^\]]*)\]\s*-")
#: ``()-->()``, ``()<--()``, ``()--()``: a relationship of any type
_ANY_TYPE = re.compile(r"\)\s*<?--+>?\s*\(")
#: ``n.key`` (not a function's name, ``apoc.coll.sum(``) and ``{key: …}`` (a map's keys)
_DOT_KEY = re.compile(r"\.\s*`?([A-Za-z_]\w*)`?(?!\w|\s*\()")
_MAP = re.compile(r"\{([^{}]*)\}")
_MAP_KEY = re.compile(r"`?([A-Za-z_]\w*)`?\s*:")
#: a query that reads every property of a node: ``n {.*}``, ``properties(n)``, ``keys(n)``
_EVERY_KEY = re.compile(r"\.\s*\*|\b(?:properties|keys)\s*\(", re.I)


@dataclass(frozen=True)
class GoldNames:
    """The relationship types and property keys a gold Cypher names (``gold_names``); None where
    it may use any: a relationship with no type (``()--()``), every property (``n {.*}``)."""

    types: frozenset[str] | None
    keys: frozenset[str] | None

    def walks(self, pattern) -> bool:
        """Whether a path walks only relationships of the types the gold query names."""
        return self.types is None or all(step.type in self.types for step in pattern.steps)

    def narrowed(self, schema):
        """``schema`` with only the relationship types and keys the gold query names: what the
        search of the language may use (paths from a label, filters, returns, orders)."""
        types, keys = self.types, self.keys

        def kept(properties: dict) -> dict:
            return {k: v for k, v in properties.items() if keys is None or k in keys}

        return schema.model_copy(
            update={
                "relationship_types": {
                    t: n for t, n in schema.relationship_types.items() if types is None or t in types
                },
                "patterns": [p for p in schema.patterns if types is None or p.type in types],
                "properties": {label: kept(props) for label, props in schema.properties.items()},
                "relationship_properties": {
                    t: kept(props) for t, props in schema.relationship_properties.items() if types is None or t in types
                },
            }
        )


def gold_names(cypher: str | None) -> GoldNames | None:
    """What a gold query names (None: no gold query). A query of the language that gives its
    result by walking relationships or reading properties it never names gives it by a
    coincidence of the data ("the movie with the lowest rating" answered by the movies no one
    wrote, ordered by the movie's id), and a pair would teach the coincidence."""
    if not cypher:
        return None
    text = _STRING.sub("''", cypher)
    types: set[str] | None = set()
    for inside in _RELATIONSHIP.findall(text):
        if ":" not in inside:
            types = None
            break
        named = re.split(r"[*{\s]", inside.split(":", 1)[1].strip(), maxsplit=1)[0]
        types |= {t.strip("`:! ") for t in named.split("|") if t.strip("`:! ")}
    if _ANY_TYPE.search(text):
        types = None
    keys = None
    if not _EVERY_KEY.search(text):
        keys = set(_DOT_KEY.findall(text)) | {k for inside in _MAP.findall(text) for k in _MAP_KEY.findall(inside)}
    return GoldNames(frozenset(types) if types is not None else None, frozenset(keys) if keys is not None else None)


def gold_order(cypher: str | None) -> tuple[str, bool] | None:
    """The order of a gold query's rows before its LIMIT: (the property key, or the aggregate's
    name, that its last ORDER BY sorts on first; descending), or None where it has no ORDER BY
    followed by a LIMIT, or sorts on something else."""
    if not cypher:
        return None
    found = [m for m in _ORDER_BY.finditer(cypher) if re.search(r"\bLIMIT\b", cypher[m.end() :], re.I)]
    if not found:
        return None
    name, key, direction = found[-1].groups()
    descending = (direction or "").upper().startswith("DESC")
    if key is not None:
        return key, descending
    # an alias: the aggregate it names ("count(o) AS orders ... ORDER BY orders")
    named = re.findall(_AGGREGATE_AS.format("|".join(AGGREGATES), re.escape(name)), cypher, re.I | re.S)
    return (named[-1].lower(), descending) if named else None


def pair_query(found: Reproduction, literals: Literals, question: str, names: dict[str, str]) -> Query:
    """The query a training pair teaches, of those that gave the gold result (``pair_queries``'
    first)."""
    return pair_queries(found, literals, question, names)[0]


def pair_queries(
    found: Reproduction,
    literals: Literals,
    question: str,
    names: dict[str, str],
    order: tuple[str, bool] | None = None,
) -> list[Query]:
    """The queries that gave the gold result, the one a training pair teaches first: ordered as
    the gold query is (``order``: its key and direction, which a result whose LIMIT keeps every
    row cannot tell), then not cutting through tied rows at a LIMIT (the database's arbitrary
    pick among them, not anything the query says, gave the gold rows), then the simplest
    (``simplicity``)."""

    def rank(query: Query) -> tuple:
        as_gold = query.order is not None and (query.order.by, query.order.descending) == order
        return not as_gold, render_query(query) in found.tied, simplicity(query, literals, question, names)

    return sorted(found.queries, key=rank)


def simplicity(
    query: Query, literals: Literals | None = None, question: str = "", names: dict[str, str] | None = None
) -> tuple:
    """Which of several queries that give the same result a training pair teaches: one from the
    question's entities before one from a label (the entity the question names is why its answer
    is what it is); then the one that says more of what the question states and less that it
    does not (a filter on the quoted summary, not an order that happens to keep the same row);
    then the shortest path, the fewest clauses (an aggregate, its group and a condition on it
    count, so the nodes filtered as the question says beat an average per name kept over the
    same number), the schema names the question echoes, the shortest text. What a query says of
    the question's values: ``literals.stated_balance`` (``names``: anchor id -> name)."""
    balance = stated_balance(query, literals, question, names)
    projection = query.projection
    clauses = len(query.filters) + len(projection.properties) + (query.order is not None)
    clauses += query.limit is not None
    clauses += len(projection.others) + len(projection.edges)
    # an aggregate, its group and a condition on it each say something: a count per group kept
    # over 50 is three clauses more than the nodes themselves
    clauses += (projection.aggregate is not None) + (projection.group is not None) + (projection.having is not None)
    clauses += projection.every  # counting every binding says more than counting the nodes
    text = render_query(query)
    return (
        query.pattern.anchor.is_label_root,
        -balance,
        len(query.pattern.steps),
        clauses,
        -len(echoed_words(query, question)),
        # text that holds numbers ordered as numbers, where ordering it as text gives the same
        -(query.order is not None and query.order.numeric),
        len(text),
        text,
    )


def echoed_words(query: Query, question: str) -> set[str]:
    """The words of the query's schema names (its relationship types, the keys it filters,
    returns and orders by) that the question echoes: a word of the question beginning as the
    name's word does, all but its last three letters alike and at least three ("directed" and
    "directors", "acted" and "actors"; not "wrote" and "written")."""
    names = [step.type for step in query.pattern.steps]
    names += [item.key for item in query.filters]
    names += list(query.projection.properties) + [query.projection.key or ""]
    names += [key for _, key in query.projection.others if key] + [key for _, key in query.projection.edges]
    if query.order is not None:
        names.append(query.order.by)
    spoken = re.findall(r"[a-z]+", question.casefold())
    return {
        word
        for name in names
        for word in words_of(name)
        if any(_prefix(word, t) >= max(3, min(len(word), len(t)) - 3) for t in spoken)
    }


def _prefix(a: str, b: str) -> int:
    """How many letters two words share at their start."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


# ---------------------------------------------------------------------------------- output
def _meta_path(path: Path) -> Path:
    return path.with_suffix(path.suffix + ".meta.json")


def read_meta(path: Path) -> dict[str, Any]:
    """The settings a synthesis file was made with (empty when it has no readable record)."""
    try:
        meta = json.loads(_meta_path(Path(path)).read_text())
    except (OSError, ValueError):
        return {}
    return meta if isinstance(meta, dict) else {}


def changed_settings(path: Path, meta: dict[str, Any]) -> list[str]:
    """The settings ``path`` was made with that differ from ``meta`` (none for a new file)."""
    if not (path.exists() and _meta_path(path).exists()):
        return []
    previous = json.loads(_meta_path(path).read_text())
    return sorted(k for k in set(previous) | set(meta) if previous.get(k) != meta.get(k))


def check_output(path: Path, meta: dict[str, Any], overwrite: bool) -> None:
    """Refuse to append to a file made with other settings (unless overwriting); record the settings."""
    if overwrite:
        path.unlink(missing_ok=True)
    elif changed := changed_settings(path, meta):
        raise InputFileError(
            f"{path} was made with other settings ({', '.join(changed)}); "
            "overwrite it to start again, or write to a new file"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    _meta_path(path).write_text(json.dumps(meta, indent=2))


@dataclass
class Summary:
    questions: int = 0
    skipped_done: int = 0
    written: int = 0
    by_hop: dict[int, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))  # hop -> [recall-1, n]
    kept: int = 0
    dropped: Counter = field(default_factory=Counter)
    timeouts: int = 0
    hub_capped: int = 0
    seconds: float = 0.0

    def add(self, row: SynthesisRow) -> None:
        self.written += 1
        self.by_hop[row.hops][1] += 1
        if row.status == "ok":
            self.kept += 1
            if row.recall >= 1.0:
                self.by_hop[row.hops][0] += 1
        else:
            reason = row.reason or "unknown"
            self.dropped[reason.split(":")[0].split(" (")[0]] += 1
        self.timeouts += bool(row.timeouts)
        self.hub_capped += bool(row.hubs_skipped)

    def to_dict(self) -> dict[str, Any]:
        return {
            "questions": self.questions,
            "already_done": self.skipped_done,
            "written": self.written,
            "kept": self.kept,
            "recall1_by_hop": {
                str(h): {"recall1": v[0], "questions": v[1], "percent": round(100 * v[0] / v[1], 2) if v[1] else 0.0}
                for h, v in sorted(self.by_hop.items())
            },
            "dropped": dict(self.dropped),
            "questions_with_timeouts": self.timeouts,
            "questions_with_hubs_skipped": self.hub_capped,
            "seconds": round(self.seconds, 2),
            "questions_per_second": round(self.written / self.seconds, 2) if self.seconds else 0.0,
        }


def run_synthesis(
    synthesizer: Synthesizer,
    items: Iterable[QAItem],
    output: Path,
    meta: dict[str, Any],
    overwrite: bool = False,
    progress: Progress | None = None,
) -> Summary:
    """Append one row per question to ``output`` (JSONL, in input order), skipping questions done."""
    progress = progress or SilentProgress()
    output = Path(output)
    check_output(output, meta, overwrite)
    done = done_qids(output)
    items = list(items)
    todo = [item for item in items if item.qid not in done]
    summary = Summary(questions=len(items), skipped_done=len(items) - len(todo))
    started = time.perf_counter()
    workers = max(1, synthesizer.config.workers)
    with (
        output.open("a", encoding="utf-8") as sink,
        progress.task("synthesis", len(todo)) as task,
        ThreadPoolExecutor(workers) as pool,
    ):
        # map() keeps input order, so an interrupted and resumed run writes the same file.
        for row in pool.map(synthesizer.row_for, todo):
            sink.write(row.to_json() + "\n")
            sink.flush()
            summary.add(row)
            task.advance()
        os.fsync(sink.fileno())
    summary.seconds = time.perf_counter() - started
    return summary
