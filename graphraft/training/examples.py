"""Training examples from synthesis rows: L1's (question -> its target query) and L2's
(question + the evidence L1's queries retrieve -> the answer set), tokenised as DESIGN.md's
invariant 4 says (prompt and completion apart, the completion exactly a trie path)."""

from __future__ import annotations

import random
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from graphraft.errors import InputFileError
from graphraft.inference.decoding.trie import candidate_sequences
from graphraft.inference.prompts import l1_messages, l2_answer_text, prompt_ids
from graphraft.sampling import stable_groups, stable_hash
from graphraft.synthesis.rows import SynthesisRow, read_usable
from graphraft.training.base_model import load_base
from graphraft.training.config import DataSource, TrainConfig


def read_synthesis(sources: Iterable[Path | DataSource]) -> list[SynthesisRow]:
    """Every usable row (status ok, with a query) of the files, in order."""
    return [row for _, rows in read_sources(sources) for row in rows]


def read_sources(
    sources: Iterable[Path | DataSource], graph: str | None = None
) -> list[tuple[DataSource, list[SynthesisRow]]]:
    """Each file with its usable rows (``graph``: the one a file that names none was synthesised on)."""
    out = []
    for source in sources:
        source = source if isinstance(source, DataSource) else DataSource(path=source)
        if not source.path.is_file():
            raise InputFileError(f"{source.path}: synthesis output not found (synthesize it first)")
        out.append((source, read_usable(source.path)))
    # an id names one question of one graph: two files of one graph that share an id would share
    # its target (an error); files of two graphs (each generated from its own graph, say) may
    # reuse ids, and there each such id is told apart by its graph ("movies:graph-s0-1")
    seen: dict[tuple[str | None, str], Path] = {}
    graphs: dict[str, set[str | None]] = {}
    for source, rows in out:
        of = source.graph or graph
        for qid in dict.fromkeys(row.qid for row in rows):
            if seen.setdefault((of, qid), source.path) != source.path:
                raise InputFileError(
                    f"{source.path}: question id {qid!r} is also in {seen[of, qid]}; give each file's "
                    "questions their own ids (an 'id' field in the question file)"
                )
            graphs.setdefault(qid, set()).add(of)
    shared = {qid for qid, of in graphs.items() if len(of) > 1}
    if shared:
        out = [
            (
                source,
                [
                    r.model_copy(update={"qid": f"{source.graph or graph}:{r.qid}"}) if r.qid in shared else r
                    for r in rows
                ],
            )
            for source, rows in out
        ]
    if not any(rows for _, rows in out):
        raise InputFileError("no usable synthesis rows (status ok) in " + ", ".join(str(s) for s, _ in out))
    return out


def stable_sample(rows: list[SynthesisRow], count: int | None, seed: int) -> list[SynthesisRow]:
    """``count`` rows with equal shares per hop, chosen by a hash (the same on every run)."""
    if count is None or count >= len(rows):
        return list(rows)
    key = lambda row: f"{seed}:{row.qid}"  # noqa: E731
    by_hop = stable_groups(rows, lambda row: row.hops, key)
    share, chosen = count // len(by_hop), []
    for ordered in by_hop.values():
        chosen += ordered[:share]
    rest = sorted((r for r in rows if r not in chosen), key=lambda row: stable_hash(key(row)))
    chosen += rest[: count - len(chosen)]
    random.Random(seed).shuffle(chosen)
    return chosen


def mixed_sample(
    sources: list[tuple[DataSource, list[SynthesisRow]]], count: int | None, seed: int
) -> list[SynthesisRow]:
    """The training rows: each file with a share gives that fraction of ``count`` (its own
    stable sample, repeated when it has too few rows); the files without one are pooled and
    fill the rest, equal shares per hop. Without shares this is ``stable_sample`` of all rows."""
    pooled = [row for source, rows in sources if source.share is None for row in rows]
    if count is None:
        return stable_sample(pooled, None, seed)
    chosen: list[SynthesisRow] = []
    for source, rows in sources:
        if source.share is None or not rows:
            continue
        copies, rest = divmod(round(source.share * count), len(rows))
        chosen += rows * copies + stable_sample(rows, rest, seed)
    chosen += stable_sample(pooled, max(0, count - len(chosen)), seed)
    random.Random(seed).shuffle(chosen)
    return chosen


def tokenize_example(tokenizer, messages: list[dict[str, str]], completion: str) -> dict[str, list[int]]:
    prompt = prompt_ids(tokenizer, messages)
    target = list(candidate_sequences(tokenizer, [completion])[0])
    return {"input_ids": prompt + target, "completion_mask": [0] * len(prompt) + [1] * len(target)}


def training_exemplars(sources, graph_of, targets, k: int, home: Path):
    """The pool L1's prompt shows solved questions from (``prompt_examples``): every training
    question (not validation) once, with its target query and its graph. ``graph_of``: id(row) ->
    the row's graph."""
    from graphraft.inference.exemplars import Exemplar, Exemplars, bundled_embedder

    pool, seen = [], set()
    for _, rows in sources:
        for row in rows:
            graph = graph_of[id(row)]
            if row.split == "validation" or (graph, row.qid) in seen:
                continue
            seen.add((graph, row.qid))
            pool.append(Exemplar(question=row.question, cypher=targets[row.qid], graph=graph))
    return Exemplars(pool, k, bundled_embedder(home).embed)


def shown_for(exemplars, rows, graph_of) -> list[list]:
    """Each row's solved questions for its prompt: the nearest of its own graph's (a question
    repeated in the mix is looked up once)."""
    found: dict[tuple, list] = {}
    by_graph: dict[str | None, list[str]] = {}
    for row in rows:
        by_graph.setdefault(graph_of[id(row)], []).append(row.question)
    for graph, questions in by_graph.items():
        unique = list(dict.fromkeys(questions))
        for question, shown in zip(unique, exemplars.for_graph(graph).nearest(unique)):
            found[graph, question] = shown
    return [found[graph_of[id(row)], row.question] for row in rows]


def l1_examples(tokenizer, rows, targets, hint=None, shown=None) -> list[dict[str, list[int]]]:
    """L1's examples; ``hint``: the schema line for every row, or a function of the row giving
    its own (rows of several graphs); ``shown``: each row's solved questions for its prompt
    (``exemplars.Exemplars.nearest``), or None."""
    hint_of = hint if callable(hint) else (lambda row: hint)
    shown = shown or [()] * len(rows)
    return [
        tokenize_example(tokenizer, l1_messages(row.question, hint_of(row), examples), targets[row.qid])
        for row, examples in zip(rows, shown)
    ]


def l2_rows(store, rows, config: TrainConfig, tokenizer, l1_top=None) -> list[dict[str, Any]]:
    """Evidence as `ask` builds it, from ``l2_queries`` queries around the question's anchors:
    L1's top query first when ``l1_top`` gives one (as at ask time), then the best query when
    L1 missed it and queries sampled from the others (the paper's "sampled from the ranked
    candidates"), shuffled; run on the read path and textualised; target = the answer names.
    The other queries are distractors: L2 must find, from the question, which pattern holds
    the answers, and learns how far to trust the first one."""
    from graphraft.inference.generation import GeneratedQuery
    from graphraft.inference.retrieval import execute, textualise
    from graphraft.synthesis.enumeration import PatternEnumerator

    enumerator = PatternEnumerator(store)
    rng = random.Random(config.seed)
    around = [enumerator.all_patterns(row.refs, config.max_hops).candidates for row in rows]
    firsts = l1_top([r.question for r in rows], [list(c) for c in around]) if l1_top else [None] * len(rows)
    out = []
    for row, patterns, first in zip(rows, around, firsts):
        patterns = {**patterns, row.cypher: row.best_pattern}
        lead = [first] if first in patterns else []
        best = [row.cypher] if row.cypher not in lead else []
        others = [c for c in patterns if c != row.cypher and c not in lead]
        rest = best + rng.sample(others, max(0, min(len(others), config.l2_queries - len(lead) - len(best))))
        rng.shuffle(rest)
        chosen = lead + rest
        retrieval = execute(store, [GeneratedQuery(c, 0.0, i) for i, c in enumerate(chosen)], patterns=patterns)
        names = {a.id: a.name for a in row.anchors}
        evidence = textualise(
            retrieval,
            patterns,
            names,
            config.evidence_tokens,
            lambda text: len(tokenizer(text, add_special_tokens=False)["input_ids"]),
            detail_chars=config.evidence_details,
        )
        out.append(
            {
                "qid": row.qid,
                "question": row.question,
                "evidence": evidence,
                "target": l2_answer_text(row.answers, evidence),
            }
        )
    return out


def question_space(store, row, max_hops: int):
    """What L1 searches for a row's question: the texts of the paths around its anchors; for a
    row of the language (a ``query``), a function of the tokenizer giving its query space, built
    as ``ask --language full`` builds it."""
    from graphraft.synthesis.enumeration import PatternEnumerator

    around = PatternEnumerator(store).all_patterns(row.refs, max_hops).candidates if row.refs else {}
    if row.query is None:
        return list(around)
    from graphraft.inference.decoding.query_space import QuerySpace
    from graphraft.synthesis.clauses import ClauseSpace
    from graphraft.synthesis.literals import question_literals
    from graphraft.synthesis.patterns import language_paths

    schema = store.schema()
    paths = language_paths(around.values(), row.refs, schema)
    clauses = ClauseSpace(schema, question_literals(row.question), row.question)
    return lambda tokenizer: QuerySpace(tokenizer, paths, clauses)


def l2_language_rows(store, rows, config: TrainConfig, tokenizer, l1_queries) -> list[dict[str, Any]]:
    """L2's examples for questions of the language (rows with a ``query``): the evidence shows
    the results of ``config.l2_queries`` queries — the pair's own and those L1 writes for the
    question (``l1_queries``: its most likely ones, the pair's own left out), in a shuffled
    order — and the target is the pair's query's result as L2 writes it (``selection.run_reply``:
    its rows of values, or its nodes' names). L2 learns to tell, from the question, which
    result answers it; at ask time it chooses among L1's queries so (``AnswerSelector.choose``).
    A question whose queries' results are all the pair's is left out, and one whose pair's query
    the evidence's budget cut off: nothing to choose."""
    from graphraft.inference.generation import GeneratedQuery
    from graphraft.inference.retrieval import execute, patterns_shown, textualise
    from graphraft.inference.selection import run_reply
    from graphraft.synthesis.language import Query

    rng = random.Random(config.seed)
    unique = list({row.qid: row for row in rows}.values())
    written = dict(zip((row.qid for row in unique), l1_queries(unique)))
    out = []
    for row in rows:
        gold = GeneratedQuery(row.cypher, 0.0, 0, Query.from_dict(row.query))
        others = [q for q in written[row.qid] if q.cypher != row.cypher and q.query is not None]
        chosen = [gold, *others[: config.l2_queries - 1]]
        rng.shuffle(chosen)
        retrieval = execute(store, chosen)
        run = next((r for r in retrieval.runs if r.cypher == row.cypher and not r.error), None)
        if run is None:  # the pair's query ran out of time: nothing to learn from
            continue
        evidence = textualise(
            retrieval,
            {},  # each query shown by its Cypher, as `ask` shows the language's
            {a.id: a.name for a in row.anchors},
            config.evidence_tokens,
            lambda text: len(tokenizer(text, add_special_tokens=False)["input_ids"]),
            detail_chars=config.evidence_details,
        )
        shown = retrieval.runs[: patterns_shown(evidence)]
        target = run_reply(run, retrieval, evidence)
        replies = {run_reply(r, retrieval, evidence) for r in shown} - {None}
        if run not in shown or target is None or len(replies) < 2:  # no choice to learn
            continue
        out.append({"qid": row.qid, "question": row.question, "evidence": evidence, "target": target})
    return out


class _L1:
    """An L1 adapter, checked at once and loaded on first use with the schema hint it was
    trained with."""

    def __init__(self, config: TrainConfig, home: Path, store):
        from graphraft.inference.adapters import check_metadata

        check_metadata(config.l1_adapter, "l1", config.base_model)  # fail before the slow part
        self.config, self.home, self.store = config, home, store
        self.loaded = None

    def _model(self):
        """(model, tokenizer, schema hint, solved questions shown)."""
        from graphraft.inference.adapters import l1_exemplars, l1_schema_hint, load_adapter

        if self.loaded is None:
            base, tokenizer = load_base(self.config, self.home)
            model = load_adapter(base, self.config.l1_adapter, "l1", self.config.base_model)
            hint = l1_schema_hint(self.config.l1_adapter, self.store)
            self.loaded = model, tokenizer, hint, l1_exemplars(self.config.l1_adapter, self.store, self.home)
        return self.loaded


class L1Queries(_L1):
    """``rows -> L1's most likely queries for each row's question`` (``config.l2_queries`` of
    them, searched in its question space as ``ask`` searches)."""

    def __call__(self, rows) -> list[list]:
        from graphraft.inference.generation import ConstrainedGenerator

        model, tokenizer, hint, exemplars = self._model()
        spaces = [question_space(self.store, row, self.config.max_hops) for row in rows]
        spaces = [space(tokenizer) if callable(space) else space for space in spaces]
        generator = ConstrainedGenerator(model, tokenizer, hint, exemplars=exemplars)
        return generator.generate_many([row.question for row in rows], spaces, self.config.l2_queries)


class L1TopQueries(_L1):
    """``(questions, candidate lists) -> L1's most likely candidate query for each``."""

    def __call__(self, questions: list[str], candidates: list[list[str]]) -> list[str | None]:
        from graphraft.inference.generation import top_queries

        model, tokenizer, hint, exemplars = self._model()
        return top_queries(model, tokenizer, questions, candidates, hint, exemplars=exemplars)
