"""The Python API: ``GraphRAFT(...).ask(question) -> Answer``.

question -> mentions -> anchors -> candidate queries (enumerated, rendered) -> L1 under the
trie constraint -> read-only execution -> evidence -> answers (L2 when an adapter is set,
else the nodes in query-score order)."""

from __future__ import annotations

import copy
import time
from typing import Any

from pydantic import BaseModel, Field, PrivateAttr

from graphraft.config import Settings, load_settings
from graphraft.deadline import Deadline, within
from graphraft.errors import DeadlineExceededError, GraphRAFTError, InvalidInputError
from graphraft.graph import open_store
from graphraft.graph.store import GraphStore
from graphraft.inference.adapters import BASE
from graphraft.inference.config import DEFAULT_QUERIES, AskConfig
from graphraft.inference.decoding.query_space import QuerySpace
from graphraft.inference.generation import ConstrainedGenerator, QueryGenerator
from graphraft.inference.prompts import DETAIL_CHARS
from graphraft.inference.query_order import asked_phrase, asked_type_order, nearest_label, tried_order
from graphraft.inference.retrieval import execute, patterns_shown, returns_values, textualise
from graphraft.inference.selection import AnswerSelector, run_reply
from graphraft.synthesis.clauses import ClauseSpace
from graphraft.synthesis.enumeration import PatternEnumerator
from graphraft.synthesis.language import is_node_column
from graphraft.synthesis.literals import question_literals
from graphraft.synthesis.mentions import EntityExtractor, make_extractor
from graphraft.synthesis.patterns import language_paths
from graphraft.synthesis.resolution import resolver_for

NO_VECTOR_INDEX = (
    "this graph has no name embeddings (loaded without embeddings?): names were matched exactly "
    "and by text only; `graphraft embed` adds them for misspelled names"
)


class AnswerNode(BaseModel):
    id: str
    name: str
    labels: list[str]
    rank: int


class QueryInfo(BaseModel):
    cypher: str
    score: float
    results: int
    rows: int = 0  # the rows it returned (a count or a property: one row per value)
    seconds: float
    error: str | None = None
    ids: list[str] = Field(default_factory=list)  # the node ids it returned, in order
    ran: bool = True  # False: L1 wrote it, it was not run (AskConfig.run_queries)
    #: L2's score of the query's result as its reply (mean log-probability; queries of the
    #: language L2 chose among; None where it did not run: one distinct result, or none)
    l2_score: float | None = None


class Answer(BaseModel):
    question: str
    answers: list[AnswerNode] = Field(default_factory=list)  # L2's choice, else every retrieved node
    retrieved: list[AnswerNode] = Field(default_factory=list)  # every retrieved node, in query-score order
    #: the rows of values (properties, counts, aggregates), by column, of the query the answer
    #: comes from: L2's choice, else the first query that returned anything (empty where that
    #: query returned nodes only)
    values: list[dict[str, Any]] = Field(default_factory=list)
    #: the query the answer comes from (``values``; its nodes are ``answers`` where L2 chose it)
    values_from: str | None = None
    #: the names of the nodes in ``values`` (their node columns, ``id`` and ``id_I``, hold ids)
    names: dict[str, str] = Field(default_factory=dict)
    queries: list[QueryInfo] = Field(default_factory=list)
    anchors: list[dict[str, Any]] = Field(default_factory=list)
    mentions: list[str] = Field(default_factory=list)
    candidates: int = 0
    evidence: str = ""
    message: str | None = None  # why nothing was answered, when nothing was
    notes: list[str] = Field(default_factory=list)  # what the user should know about how it was answered
    selected_by: str = "query order"  # or "l2"
    timings: dict[str, float] = Field(default_factory=dict)
    #: each query's structure (a Pattern, or a Query of the language) by its text: what a
    #: label made from this answer is written from (self-training); not serialised
    _structures: dict[str, Any] = PrivateAttr(default_factory=dict)
    #: ``values`` as the first query that returned anything gives them, whatever L2 chose: the
    #: evaluation's answer without L2; not serialised
    _query_order_values: list[dict[str, Any]] = PrivateAttr(default_factory=list)

    def structure_of(self, cypher: str):
        """The Pattern or Query that ``cypher`` renders (None for a text no candidate holds)."""
        return self._structures.get(cypher)

    def named_values(self, query_order: bool = False) -> list[dict[str, Any]]:
        """``values`` with the nodes of their node columns (``id``, ``id_I``) by name;
        ``query_order``: those of the first query that returned anything, whatever L2 chose."""
        named = {node.id: node.name for node in [*self.retrieved, *self.answers]} | self.names
        return [
            {c: named.get(v, v) if is_node_column(c) and isinstance(v, str) else v for c, v in row.items()}
            for row in (self._query_order_values if query_order else self.values)
        ]


class GraphRAFT:
    """The pipeline, built from ``Settings`` (models, adapters, database) and an ``AskConfig``
    (how to ask: ``config``, or its fields as keyword arguments)."""

    def __init__(
        self,
        settings: Settings | None = None,
        graph: str | None = None,
        store: GraphStore | None = None,
        model=None,
        tokenizer=None,
        extractor: EntityExtractor | None = None,
        config: AskConfig | None = None,
        **options,
    ):
        self.config = AskConfig(**{**(config.model_dump() if config else {}), **options})
        evidence_tokens = self.config.evidence_tokens
        self.settings = settings or load_settings()
        self.store = store or open_store(self.settings, graph)
        from graphraft.inference.adapters import l1_exemplars, l1_schema_hint, load_adapters, read_metadata
        from graphraft.models import load_causal_lm

        if model is None or tokenizer is None:
            model, tokenizer = load_causal_lm(self.settings.base_model, self.settings.home, dtype=self.settings.dtype)
        # one base model in memory; L1 and L2 are named adapters on it, switched per stage
        folders = {
            task: folder
            for task, folder in (("l1", self.settings.l1_adapter), ("l2", self.settings.l2_adapter))
            if folder
        }
        model = load_adapters(model, folders, self.settings.base_model)
        self.model = model
        self.reasoner = None
        self.evidence_details, self.evidence_patterns = DETAIL_CHARS, None
        if self.settings.l2_adapter:
            # L2 reads evidence best as it was trained: budget, details, number of patterns
            trained = read_metadata(self.settings.l2_adapter)
            evidence_tokens = trained.get("evidence_tokens", evidence_tokens)
            self.evidence_details, self.evidence_patterns = (
                trained.get("evidence_details", DETAIL_CHARS),
                trained.get("queries"),
            )
            self.reasoner = AnswerSelector(model, tokenizer, adapter="l2")
        self.tokenizer = tokenizer
        # L1's prompt as it was trained: with the schema line and the nearest solved questions
        # when its adapter learned with them
        self.generator: QueryGenerator = ConstrainedGenerator(
            model,
            tokenizer,
            l1_schema_hint(self.settings.l1_adapter, self.store),
            method=self.settings.decoding,
            adapter="l1" if self.settings.l1_adapter else BASE,
            exemplars=l1_exemplars(self.settings.l1_adapter, self.store, self.settings.home),
        )
        self.extractor = extractor or make_extractor(self.settings.extractor, self.store, self.settings)
        self.resolver = resolver_for(self.store, self.settings)
        self.enumerator = PatternEnumerator(self.store, self.config.fanout_cap, self.settings.query_timeout_ms)
        # L1 writes as many queries as L2 reads (the patterns its evidence shows, as trained):
        # ranking more costs time and changes no answer; without L2, 5
        self.num_beams = self.config.beams or self.default_queries()
        self.max_hops = self.config.max_hops
        self.node_budget, self.evidence_tokens = self.config.node_budget, evidence_tokens
        # the labels' name vectors, made on first need, that what a question asks for is compared with
        self._label_vectors: dict = {}

    def with_parts(self, generator: QueryGenerator, reasoner: AnswerSelector | None = None) -> GraphRAFT:
        """This pipeline (the same store, model, anchoring, candidates and retrieval) with another
        query generator and answer selector (None: query order): how the evaluation's baselines
        are made, so they differ from GraphRAFT in nothing else."""
        other = copy.copy(self)
        other.generator, other.reasoner = generator, reasoner
        return other

    def default_queries(self) -> int:
        return self.evidence_patterns if self.reasoner is not None and self.evidence_patterns else DEFAULT_QUERIES

    def ask(
        self, question: str, deadline: Deadline | None = None, beams: int | None = None, max_hops: int | None = None
    ) -> Answer:
        return self.ask_many([question], deadline=deadline, beams=beams, max_hops=max_hops)[0]

    def ask_many(
        self,
        questions: list[str],
        group: int | None = None,
        deadline: Deadline | None = None,
        beams: int | None = None,
        max_hops: int | None = None,
    ) -> list[Answer]:
        """``ask`` for each question, L1 searching ``group`` questions together in each forward
        call (the same answers as one at a time, more questions a second). Each answer's
        ``generate`` timing is its even share of the search. ``deadline`` (default:
        settings.ask_timeout_s a question) is checked at every stage; ``beams`` and ``max_hops``
        override the config for this call. The first question that fails raises its error."""
        for question in questions:
            self._check_question(question)
        deadline = deadline or Deadline(
            self.settings.ask_timeout_s * max(1, len(questions)),
            "answering the question" if len(questions) == 1 else f"answering {len(questions)} questions",
        )
        results = self.ask_each(questions, [deadline] * len(questions), group=group, beams=beams, max_hops=max_hops)
        for result in results:
            if isinstance(result, GraphRAFTError):
                raise result
        return results

    def ask_each(
        self,
        questions: list[str],
        deadlines: list[Deadline],
        group: int | None = None,
        beams: int | None = None,
        max_hops: int | None = None,
    ) -> list[Answer | GraphRAFTError]:
        """Questions that arrived together (``serve``'s batches), each with its own deadline and
        its own outcome: its Answer, or the GraphRAFTError that ended it, so one question's
        mistake or deadline is not the others'. L1 searches them together as ``ask_many`` does;
        every database call of a question gets at most what is left of its deadline."""
        results: list[Answer | GraphRAFTError | None] = [None] * len(questions)
        prepared: dict[int, tuple] = {}
        for i, (question, deadline) in enumerate(zip(questions, deadlines, strict=True)):
            try:
                self._check_question(question)
                with within(deadline):
                    prepared[i] = self._prepare(question, deadline, max_hops or self.max_hops)
            except GraphRAFTError as exc:
                results[i] = exc
        for i, (answer, patterns, _) in prepared.items():
            if not patterns:
                results[i] = answer  # it says why nothing can be answered
        pending = [i for i, (_, patterns, _) in prepared.items() if patterns]
        found: list = []
        clock = time.perf_counter()
        while pending:
            earliest = min((deadlines[i] for i in pending), key=Deadline.remaining)
            try:
                found = self.generator.generate_many(
                    [prepared[i][0].question for i in pending],
                    [_searchable(prepared[i][1]) for i in pending],
                    num_beams=beams or self.num_beams,
                    group=group or self.config.group,
                    check=lambda earliest=earliest: earliest.check("writing queries (L1)"),
                )
                break
            except DeadlineExceededError:
                # the earliest deadline passed: those questions end here, the others search again
                expired = [i for i in pending if deadlines[i].remaining() <= 0]
                if not expired:
                    raise
                for i in expired:
                    results[i] = deadlines[i].exceeded("writing queries (L1)")
                pending = [i for i in pending if i not in expired]
        share = round((time.perf_counter() - clock) / max(1, len(pending)), 4)
        for i, generated in zip(pending, found):
            answer, patterns, anchors = prepared[i]
            answer.timings["generate"] = share
            try:
                with within(deadlines[i]):
                    self._answer(answer, patterns, anchors, generated, deadlines[i])
                results[i] = answer
            except GraphRAFTError as exc:
                results[i] = exc
        return results

    def _check_question(self, question: str) -> None:
        if not question or not question.strip():
            raise InvalidInputError("the question is empty")
        limit = self.settings.max_question_chars
        if len(question) > limit:
            raise InvalidInputError(
                f"the question is {len(question):,} characters long; at most {limit:,} (GRAPHRAFT_MAX_QUESTION_CHARS)"
            )

    def _prepare(self, question: str, deadline: Deadline, max_hops: int):
        """Anchors and candidate queries: (answer so far, candidates by Cypher, anchors); no
        candidates when the answer already says why nothing can be answered."""
        question = question.strip()
        answer = Answer(question=question)
        clock = time.perf_counter()
        deadline.check("finding the entities")
        mentions = self.extractor.extract(question)
        if len(mentions) > self.settings.max_mentions:
            raise InvalidInputError(
                f"the question names {len(mentions)} entities; at most {self.settings.max_mentions} "
                "(GRAPHRAFT_MAX_MENTIONS)"
            )
        # the deadline holds between mentions too
        anchors = self.resolver.resolve_all(mentions, check=lambda: deadline.check("finding the entities"))
        if len(anchors) > self.settings.max_anchors:
            raise InvalidInputError(
                f"the question's {len(mentions)} entities match {len(anchors)} nodes; at most "
                f"{self.settings.max_anchors} (GRAPHRAFT_MAX_ANCHORS): name them more exactly"
            )
        answer.mentions = [m.text for m in mentions]
        answer.anchors = [a.to_dict() for a in anchors]
        answer.timings["anchors"] = round(time.perf_counter() - clock, 4)
        if self.resolver.vector_missing:
            answer.notes.append(NO_VECTOR_INDEX)
        if not anchors and self.config.language == "full":
            return self._query_space(answer, question, {}, anchors, time.perf_counter())
        if not anchors:
            answer.message = "no entity of the question was found in the graph" + (
                f" (mentions: {', '.join(answer.mentions)})" if answer.mentions else ""
            )
            return answer, {}, anchors

        clock = time.perf_counter()
        deadline.check("enumerating candidate queries")
        patterns = self.enumerator.all_patterns([a.ref for a in anchors], max_hops).candidates
        if self.config.language == "full":
            return self._query_space(answer, question, patterns, anchors, clock)
        if len(patterns) > self.settings.max_candidate_queries:
            raise InvalidInputError(
                f"the question's entities have {len(patterns):,} candidate queries around them; at most "
                f"{self.settings.max_candidate_queries:,} (GRAPHRAFT_MAX_CANDIDATE_QUERIES): name fewer entities "
                "or ask for fewer hops"
            )
        answer.candidates = len(patterns)
        answer.timings["candidates"] = round(time.perf_counter() - clock, 4)
        if not patterns:
            answer.message = "no valid query around " + ", ".join(a.name for a in anchors)
        return answer, patterns, anchors

    def _query_space(self, answer: Answer, question: str, patterns: dict, anchors: list, clock: float):
        """The full language's candidates: the paths around the anchors, each anchor itself,
        and the paths from each label (0 to 2 steps, from the schema), with the clauses the
        schema and the question allow after them."""
        schema = self.store.schema()
        paths = language_paths(patterns.values(), [a.ref for a in anchors], schema)
        space = QuerySpace(self.tokenizer, paths, ClauseSpace(schema, question_literals(question), question))
        answer.candidates = len(space)
        answer.timings["candidates"] = round(time.perf_counter() - clock, 4)
        return answer, space, anchors

    def _answer(self, answer: Answer, patterns, anchors: list, generated, deadline: Deadline) -> None:
        """Run L1's queries, write the evidence, and let L2 choose the answers."""
        clock = time.perf_counter()
        # paths show their pattern in L2's evidence; queries of the language, their Cypher (what
        # they return, filter and order is all there is to choose them by)
        described = patterns if isinstance(patterns, dict) else {}
        patterns = patterns if isinstance(patterns, dict) else {g.cypher: g.query.pattern for g in generated if g.query}
        answer._structures = {g.cypher: g.query or patterns.get(g.cypher) for g in generated}
        anchor_names = {a.id: a.name for a in anchors}
        if not any(g.query is not None for g in generated):
            # paths: those answering what the question asks for first (one query: nothing to order)
            if self.config.asked_type_first and len(generated) > 1:
                generated = asked_type_order(generated, patterns, self._asked_type(answer))
        else:
            generated = tried_order(
                generated,
                answer.question,
                anchor_names,
                self.store.schema().labels,
                stated=self.config.stated_first,
                asked=self.config.asked_label_first,
            )
        ran = self.config.run_queries or len(generated)
        run, unrun = generated[:ran], generated[ran:]
        retrieval = execute(
            self.store, run, self.node_budget, self.settings.query_timeout_ms, deadline, patterns=patterns
        )
        top = next((run for run in retrieval.runs if run.rows or run.node_ids), None)
        self._take_values(answer, top, retrieval)
        answer._query_order_values = answer.values
        answer.evidence = textualise(
            retrieval,
            described,
            anchor_names,
            self.evidence_tokens,
            lambda text: len(self.tokenizer(text, add_special_tokens=False)["input_ids"]),
            self.evidence_details,
            self.evidence_patterns,
        )
        answer.timings["execute"] = round(time.perf_counter() - clock, 4)
        answer.queries = [
            QueryInfo(
                cypher=r.cypher,
                score=round(r.score, 4),
                results=len(r.node_ids),
                rows=len(r.rows) if r.rows else len(r.node_ids),
                seconds=round(r.seconds, 4),
                error=r.error,
                ids=list(r.node_ids),
            )
            for r in retrieval.runs
        ] + [QueryInfo(cypher=g.cypher, score=round(g.score, 4), results=0, seconds=0.0, ran=False) for g in unrun]
        order = [node_id for node_id in retrieval.order if node_id in retrieval.nodes]
        answer.retrieved = [self._node(retrieval, node_id, rank) for rank, node_id in enumerate(order)]
        shown = retrieval.runs[: patterns_shown(answer.evidence)]
        if self.reasoner is not None and any(run.rows for run in shown):
            # queries of the language: L2 chooses one query by its result (rows of values or nodes)
            clock = time.perf_counter()
            deadline.check("choosing the answers (L2)")
            replies = [run_reply(run, retrieval, answer.evidence) for run in shown]
            pick, l2_scores = self.reasoner.choice(
                answer.question, answer.evidence, replies, [run.score for run in shown]
            )
            answer.timings["reason"] = round(time.perf_counter() - clock, 4)
            for info, l2_score in zip(answer.queries, l2_scores):  # shown: the first runs, in order
                info.l2_score = None if l2_score is None else round(l2_score, 4)
            if pick is not None:
                chosen = shown[pick]
                self._take_values(answer, chosen, retrieval)
                answer.selected_by = "l2"
                order = [i for i in dict.fromkeys(chosen.node_ids) if i in retrieval.nodes]
        elif self.reasoner is not None and order:
            clock = time.perf_counter()
            deadline.check("choosing the answers (L2)")
            # L2 chooses among the answer sets of the queries its evidence shows
            sets = [[retrieval.nodes[i] for i in dict.fromkeys(run.node_ids) if i in retrieval.nodes] for run in shown]
            selected = self.reasoner.select(answer.question, answer.evidence, sets, [run.score for run in shown])
            answer.timings["reason"] = round(time.perf_counter() - clock, 4)
            answer.selected_by = "l2" if selected else "query order (no query in the evidence returned a node)"
            answer.values_from = next(
                (run.cypher for run in shown if set(run.node_ids) == set(selected)), answer.values_from
            )
            order = selected or order
        answer.answers = [self._node(retrieval, node_id, rank) for rank, node_id in enumerate(order)]
        answer.timings["total"] = round(sum(answer.timings.values()), 4)

    def _asked_type(self, answer: Answer) -> str | None:
        """The label the question asks for (``query_order.nearest_label`` of its ``asked_phrase``);
        None without an embedder (``GRAPHRAFT_EMBEDDER=none``) or an asked-for phrase."""
        phrase = asked_phrase(answer.question, answer.mentions)
        embedder = self.resolver.embedder if phrase is not None else None
        if embedder is None:
            return None
        return nearest_label(phrase, self.store.schema().labels, embedder.embed, self._label_vectors)

    @staticmethod
    def _take_values(answer: Answer, run, retrieval) -> None:
        """The answer's values from ``run`` (the first query that returned anything, or L2's
        choice): its rows when they hold values, with their nodes' names."""
        answer.values = run.rows if run is not None and returns_values(run) else []
        answer.values_from = run.cypher if run is not None else None
        answer.names = {
            value: retrieval.nodes[value]["name"]
            for row in answer.values
            for column, value in row.items()
            if is_node_column(column) and isinstance(value, str) and value in retrieval.nodes
        }

    @staticmethod
    def _node(retrieval, node_id: str, rank: int) -> AnswerNode:
        node = retrieval.nodes[node_id]
        return AnswerNode(id=node_id, name=node["name"], labels=node["labels"], rank=rank)

    def close(self) -> None:
        self.store.close()


def _searchable(candidates):
    """What L1 searches for a question: its query space, or its listed candidates' texts."""
    return candidates if isinstance(candidates, QuerySpace) else list(candidates)
