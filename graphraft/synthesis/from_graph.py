"""Training questions from the graph alone (cold start): sample anchors, enumerate the patterns
`ask` would enumerate around them, keep those with a useful answer set, and put each in words
(graphraft.synthesis.verbalise), optionally paraphrased by a chat model.

The rows have the format `synthesize` writes for question/answer pairs, so `graphraft train`
takes them unchanged (and mixes them with real pairs: TrainConfig.data's shares). A generated
question's answers are what its pattern returns in the database, by construction, and its
target is one of the candidates `ask` enumerates around its anchor."""

from __future__ import annotations

import random
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import Field

from graphraft.config import MAINTENANCE_TIMEOUT_MS
from graphraft.errors import InputFileError, InvalidInputError
from graphraft.graph.cypher_text import label_expression
from graphraft.graph.loaders.questions import split_of
from graphraft.graph.records import NAME_KEY_PROPERTY, domain_labels, name_expression
from graphraft.graph.store import GraphStore
from graphraft.progress import Progress, SilentProgress
from graphraft.sampling import stable_hash
from graphraft.synthesis.enumeration import PatternEnumerator
from graphraft.synthesis.from_graph_language import (
    COMPOSED_FORMS,
    FORMS,
    LanguagePlan,
    LanguagePlanner,
    language_row,
    name_of,
)
from graphraft.synthesis.language import is_node_column, render_query
from graphraft.synthesis.patterns import AnchorRef, Pattern, executable, language_paths, render
from graphraft.synthesis.rows import AnchorRow, SynthesisRow, read_usable
from graphraft.synthesis.synthesizer import Summary, SynthesisConfig, check_output, run_synthesis
from graphraft.synthesis.verbalise import Phrases, Verbaliser


class GenerationConfig(SynthesisConfig):
    """`synthesize --from-graph`: how questions are made from the graph (each field is a flag)."""

    count: int = Field(1000, ge=1, description="--from-graph: questions to generate.")
    seed: int = Field(0, description="--from-graph: the sample (the same seed, the same questions).")
    max_answers: int = Field(20, ge=1, description="--from-graph: keep patterns with 1..this many answers.")
    bridge_share: float = Field(
        0.1, ge=0.0, le=1.0, description="--from-graph: share of questions joining two anchors."
    )
    marked_share: float = Field(
        0.5, ge=0.0, le=1.0, description="--from-graph: share of questions with the [entity] marked."
    )
    phrases: Path | None = Field(None, description="--from-graph: a phrase file (YAML) for your labels and types.")
    paraphrase: bool = Field(
        False, description="--from-graph: have the chat model at GRAPHRAFT_OPENAI_BASE_URL rewrite each question."
    )
    language_share: float = Field(
        0.0,
        ge=0.0,
        le=1.0,
        description="--from-graph: share of questions of the query language's forms (a property, a count, a "
        "filter, the first k, an aggregate, the most, the lacking) instead of paths.",
    )
    # mixed with a graph's real pairs they taught other conventions than its pairs' (movies, README)
    composed_forms: bool = Field(
        False,
        description="--from-graph: with --language-share, also forms that compose a step with filters, "
        "orders, limits and aggregates (the persons that acted in a movie released after 2000).",
    )
    max_degree: int | None = Field(
        None, ge=1, description="--from-graph: skip anchors with more relationships (default: fanout_cap)."
    )
    # people ask a few shapes far more than the others: self-training's kept labels
    # (round-N/labels.jsonl) say which, with no answer known
    shape_prior: Path | None = Field(
        None,
        description="--from-graph: synthesis rows (self-training labels, pairs) whose queries' shapes the "
        "questions follow: hop lengths and shapes in their proportions (unset: spread evenly).",
    )
    # labels L1 made itself lean to short queries (it writes a 1-hop query for most 3-hop
    # questions): their hop shares would teach it less of what it already fails
    prior_hops: bool = Field(
        True,
        description="--from-graph: with a shape prior, hop lengths in its proportions too (false: equal shares "
        "per hop length, the prior choosing the shapes within each).",
    )
    # labels L1 made itself copy its first mapping of words to relationship types (on MetaQA,
    # "who acted in [movie]" labelled with the director's type from round 1 on): types in the
    # labels' proportions teach it again what it already confuses
    prior_types: bool = Field(
        True,
        description="--from-graph: with a shape prior, relationship types in its proportions too (false: each "
        "path's labels and directions as often as the prior asks, spread evenly over the types it used there).",
    )

    # labels L1 made itself are the questions it already labels well: a shape it gets wrong is
    # dropped by the checks and would, smoothed by one, hardly come up again to be learned
    prior_smoothing: float = Field(
        0.0,
        ge=0.0,
        description="--from-graph: with a shape prior, each shape's count raised by this many times the mean "
        "count of the shapes asked (0: by one; 1: a shape never asked comes up as often as the average asked one).",
    )

    def fingerprint(self) -> dict[str, Any]:
        data = super().fingerprint()
        data.pop("gold_names", None)  # questions made from the graph have no given Cypher
        data["phrases"] = str(self.phrases) if self.phrases else None
        for default in ("prior_hops", "prior_types"):
            if data[default]:
                data.pop(default)  # the default, as in files written before the option
        if not data["composed_forms"]:
            data.pop("composed_forms")  # the default, as in files written before the option
        if not data["prior_smoothing"]:
            data.pop("prior_smoothing")  # the default, as in files written before the option
        if self.shape_prior is None:
            data.pop("shape_prior")  # the default, as in files written before the option
        else:
            data["shape_prior"] = dict(sorted(ShapePrior.read(self.shape_prior).counts.items()))
        data["source"] = "graph"
        return data


@dataclass
class ShapePrior:
    """How often each query shape was asked (a path's labels, types and directions, anchors
    left out), from the usable rows of a synthesis file; smoothed, so a shape never asked still
    comes up: by one (rarely), or by ``smoothing`` times the mean count of the shapes asked."""

    counts: dict[str, int]
    hops: dict[str, int]  # each shape's path length
    anchored: Counter = field(default_factory=Counter)  # questions asked from a node of each label
    smoothing: float = 0.0

    @classmethod
    def read(cls, path: Path, smoothing: float = 0.0) -> ShapePrior:
        patterns = [row.best_pattern for row in read_usable(Path(path))]
        if not patterns:
            raise InputFileError(f"{path}: no usable rows to learn the questions' shapes from")
        anchored = Counter(label for p in patterns for label in p.anchor.labels)
        return cls(dict(Counter(p.shape for p in patterns)), {p.shape: p.hops for p in patterns}, anchored, smoothing)

    @cached_property
    def pseudo_count(self) -> float:
        """What every shape's count is raised by: one, or ``smoothing`` times the mean count."""
        return max(1.0, self.smoothing * sum(self.counts.values()) / len(self.counts)) if self.counts else 1.0

    def weight(self, shape: str) -> float:
        return self.counts.get(shape, 0) + self.pseudo_count

    def skeleton_weight(self, shape: str) -> float:
        """``weight`` with the types spread: the count of the shape's skeleton (its labels and
        directions, ``skeleton``) shared evenly by the shapes of it that were asked, smoothed; a
        shape never asked gets the smoothing alone, as in ``weight``."""
        return self._spread.get(shape, 0) + self.pseudo_count

    @cached_property
    def _spread(self) -> dict[str, float]:
        skeletons: dict[str, list[str]] = {}
        for shape in self.counts:
            skeletons.setdefault(self.skeleton(shape), []).append(shape)
        return {shape: sum(self.counts[s] for s in same) / len(same) for same in skeletons.values() for shape in same}

    @staticmethod
    def skeleton(shape: str) -> str:
        """A shape without its relationship types: ``(:Movie)-[:DIRECTED_BY]->(*:Person)`` ->
        ``(:Movie)-[]->(*:Person)``."""
        return re.sub(r"\[:[^\]]*\]", "[]", shape)

    def label_weight(self, label: str) -> int:
        """How often questions start from a node of ``label``, smoothed (anchors are drawn so)."""
        return self.anchored.get(label, 0) + 1

    def hop_shares(self, hops: list[int]) -> dict[int, float]:
        """Each hop length's share of the path questions: its shapes' counts, smoothed."""
        totals = {h: 1 + sum(n for shape, n in self.counts.items() if self.hops[shape] == h) for h in hops}
        whole = sum(totals.values())
        return {h: totals[h] / whole for h in hops}


@dataclass(frozen=True)
class Plan:
    """One question to write: its qid, its pattern, and its anchors' names (the first anchor's,
    and a bridge's second)."""

    qid: str
    pattern: Pattern
    anchor_name: str
    other_name: str | None
    enumerated: int


def generator_for(store: GraphStore, settings, config: GenerationConfig, paraphraser=None) -> GraphQuestionGenerator:
    """The generator for a store, checking each question with the settings' extractor and
    resolver (the anchoring `ask` does)."""
    from graphraft.synthesis.mentions import make_extractor
    from graphraft.synthesis.resolution import resolver_for

    asking = (make_extractor(settings.extractor, store, settings), resolver_for(store, settings))
    return GraphQuestionGenerator(store, config, paraphraser, asking)


def generate(generator: GraphQuestionGenerator, output: Path, overwrite: bool = False, progress=None) -> Summary:
    """Plan, paraphrase (when configured) and write the rows to ``output``, resuming it; a file
    made with other settings is refused before the planning, which takes a while on a big graph."""
    meta = {"graph": generator.store.identity, **generator.config.fingerprint()}
    check_output(output, meta, overwrite)
    plans = generator.plan(progress)
    if not plans:
        raise InvalidInputError(
            f"{generator.store.description}: no pattern with 1..{generator.config.max_answers} answers around "
            "any node (raise max_answers or fanout_cap)"
        )
    generator.prepare(plans, progress)
    return run_synthesis(generator, plans, output, meta, progress=progress)


class GraphQuestionGenerator:
    """Plans questions (anchors and patterns, deterministic for a seed) and writes their rows;
    `run_synthesis` drives it like the question/answer synthesizer."""

    def __init__(self, store: GraphStore, config: GenerationConfig, paraphraser=None, asking=None):
        """``asking``: the (extractor, resolver) `ask` uses; with them each question is checked
        to find its target among the candidates `ask` would enumerate for it (else dropped)."""
        self.store, self.config, self.asking = store, config, asking
        self.enumerator = PatternEnumerator(store, config.fanout_cap, config.timeout_ms)
        self.verbaliser = Verbaliser(Phrases.from_yaml(config.phrases) if config.phrases else None)
        self.paraphraser = paraphraser
        self._language_rows: dict[str, list[dict]] = {}  # a language plan's rows, found when planned

    # ------------------------------------------------------------------ anchors
    def anchors(self, prior: ShapePrior | None = None) -> list[tuple[AnchorRef, str]]:
        """Every node with a name, no hub, and a name at most 3 nodes share (ask keeps 3 anchors
        for a name), interleaved across labels (stratified) in an order fixed by the seed: in
        turn, or with a ``prior``, each label as often as questions start from it."""
        seed, cap = self.config.seed, self.config.max_degree or self.config.fanout_cap
        counts = self.store.name_counts()
        by_label: dict[str, list[tuple[AnchorRef, str]]] = {}
        for label in sorted(self.store.schema().labels):
            rows = self.store.read(
                f"MATCH (n{label_expression((label, self.store.entity_label))}) "
                f"WITH n, {name_expression('n')} AS name WHERE name IS NOT NULL "
                f"RETURN n.id AS id, name, n.{NAME_KEY_PROPERTY} AS key, labels(n) AS labels",
                timeout_ms=MAINTENANCE_TIMEOUT_MS,
            )
            rows = [r for r in rows if counts.get(r["key"], 0) <= 3 and str(r["name"]).strip()]
            rows.sort(key=lambda r: stable_hash(f"{seed}:{r['id']}"))
            by_label[label] = [(AnchorRef(r["id"], domain_labels(r["labels"])), str(r["name"])) for r in rows]
        degrees = self._degrees([ref.id for rows in by_label.values() for ref, _ in rows])
        weight = prior.label_weight if prior is not None else (lambda label: 1)
        # stride scheduling: a label's i-th node at (i + 1/2) / weight; equal weights, in turn
        order = sorted(
            ((index + 0.5) / weight(label), label, index) for label in by_label for index in range(len(by_label[label]))
        )
        out, seen = [], set()
        for _, label, index in order:
            ref, name = by_label[label][index]
            if ref.id not in seen and degrees.get(ref.id, 0) <= cap:
                seen.add(ref.id)
                out.append((ref, name))
        return out

    def _degrees(self, ids: list[str]) -> dict[str, int]:
        degrees = {}
        for start in range(0, len(ids), 5000):
            rows = self.store.read(
                f"UNWIND $ids AS i MATCH (n{label_expression((self.store.entity_label,))} {{id: i}}) "
                "OPTIONAL MATCH (n)-[r]-() RETURN n.id AS id, count(r) AS degree",
                {"ids": ids[start : start + 5000]},
                timeout_ms=MAINTENANCE_TIMEOUT_MS,
            )
            degrees.update({r["id"]: int(r["degree"]) for r in rows})
        return degrees

    # ------------------------------------------------------------------ planning
    def plan(self, progress: Progress | None = None) -> list[Plan | LanguagePlan]:
        """``count`` questions: the language's share (``language_plans``), then equal shares per
        hop length (1..max_hops) after the bridges' share. Each anchor gives at most one question
        of each kind a pass; later passes (a small graph) take other patterns. The pattern shape
        least used so far wins, so the questions spread over the schema."""
        cfg = self.config
        prior = ShapePrior.read(cfg.shape_prior, cfg.prior_smoothing) if cfg.shape_prior is not None else None
        anchors = self.anchors(prior)
        language = self.language_plans(round(cfg.count * cfg.language_share), anchors, progress)
        count = cfg.count - len(language)
        bridges = round(count * cfg.bridge_share) if cfg.max_hops >= 2 else 0
        hops = list(range(1, cfg.max_hops + 1))
        quota = self._hop_quota(count - bridges, hops, prior if cfg.prior_hops else None)
        quota["bridge"] = bridges
        names = dict((ref.id, name) for ref, name in anchors)
        shapes: Counter = Counter()
        weight = lambda shape: 1  # noqa: E731 - no prior: every shape alike
        if prior is not None:
            weight = prior.weight if cfg.prior_types else prior.skeleton_weight
        used: set[str] = set()
        plans: list[Plan | LanguagePlan] = list(language)
        with (progress or SilentProgress()).task("planning", count) as task:
            for _ in range(8):  # passes over the anchors
                before = len(plans)
                for ref, _ in anchors:
                    if not any(quota.values()):
                        break
                    for kind in [k for k, left in quota.items() if left]:
                        options = self._options(ref, kind, names)
                        options = [o for o in options if o[0].cypher not in used]  # (stats, enumerated)
                        if not options:
                            continue
                        # the shape furthest below its share (by the prior, else of all) first
                        key = lambda o: (  # noqa: E731
                            shapes[o[0].pattern.shape] / weight(o[0].pattern.shape),
                            stable_hash(f"{cfg.seed}:{o[0].cypher}"),
                        )
                        stats, enumerated = min(options, key=key)
                        pattern = stats.pattern
                        used.add(stats.cypher)
                        shapes[pattern.shape] += 1
                        quota[kind] -= 1
                        plans.append(
                            Plan(
                                f"graph-s{cfg.seed}-{len(plans) + 1 - len(language)}",
                                pattern,
                                names[pattern.anchor.id],
                                names[pattern.end_anchor.id] if pattern.end_anchor else None,
                                enumerated,
                            )
                        )
                        task.advance()
                if len(plans) == before or not any(quota.values()):
                    break
        return plans

    @staticmethod
    def _hop_quota(count: int, hops: list[int], prior: ShapePrior | None) -> dict:
        """Path questions per hop length: equal shares, or the prior's (largest remainders)."""
        shares = {h: 1 / len(hops) for h in hops} if prior is None else prior.hop_shares(hops)
        quota = {h: int(count * shares[h]) for h in hops}
        for h in sorted(hops, key=lambda h: (-(count * shares[h] - quota[h]), h))[: count - sum(quota.values())]:
            quota[h] += 1
        return quota

    def language_plans(
        self, count: int, anchors: list[tuple[AnchorRef, str]], progress: Progress | None = None
    ) -> list[LanguagePlan]:
        """``count`` questions of the language's forms, the forms in turn, each kept only where
        `ask` can write its query for it and it has 1..max_answers answers (``LanguagePlanner``);
        distinct queries; the same seed, the same questions."""
        cfg = self.config
        if count == 0:
            return []
        planner = LanguagePlanner(self.store, self.verbaliser, cfg.seed, cfg.max_answers, cfg.timeout_ms)
        forms = FORMS + (COMPOSED_FORMS if cfg.composed_forms else ())
        names = dict((ref.id, name) for ref, name in anchors)
        plans: list[LanguagePlan] = []
        seen: set[str] = set()
        with (progress or SilentProgress()).task("planning the language's forms", count) as task:
            for attempt in range(20 * count):
                if len(plans) == count:
                    break
                rng = random.Random(stable_hash(f"{cfg.seed}:language:{attempt}"))
                form = forms[attempt % len(forms)]
                found = planner.plan(form, rng, anchors)
                if found is None:
                    continue
                query, question = found
                name, marked = None, False
                if not query.pattern.anchor.is_label_root:
                    name, marked = names[query.pattern.anchor.id], rng.random() < cfg.marked_share
                    if marked:
                        question = question.replace(name, f"[{name}]", 1)
                text = render_query(query)
                if text in seen:
                    continue
                rows = planner.keep(query, question, self.paths_for(question))
                if rows is None:
                    continue
                seen.add(text)
                plan = LanguagePlan(f"graph-s{cfg.seed}-language-{len(plans) + 1}", form, query, question, name, marked)
                self._language_rows[plan.qid] = rows
                plans.append(plan)
                task.advance()
        return plans

    def _options(self, ref: AnchorRef, kind, names: dict[str, str]):
        """(pattern stats, patterns enumerated) for the patterns with 1..max_answers answers."""
        if kind != "bridge":
            found = self.enumerator.around(ref, kind)
        else:
            other = self._partner(ref, names)
            if other is None:
                return []
            found = self.enumerator.between(ref, other)
        return [(s, len(found.patterns)) for s in found.patterns if 1 <= s.total <= self.config.max_answers]

    def _partner(self, ref: AnchorRef, names: dict[str, str]) -> AnchorRef | None:
        """A second anchor two steps away (chosen by the seed) for a bridge question."""
        entity = label_expression((self.store.entity_label,))
        rows = self.store.read(
            f"MATCH (a{entity} {{id: $id}})--()--(b{entity}) "
            "WHERE b.id <> $id RETURN DISTINCT b.id AS id, labels(b) AS labels LIMIT 200",
            {"id": ref.id},
            timeout_ms=self.config.timeout_ms,
        )
        rows = [r for r in rows if r["id"] in names]
        if not rows:
            return None
        row = min(rows, key=lambda r: stable_hash(f"{self.config.seed}:{ref.id}:{r['id']}"))
        return AnchorRef(row["id"], domain_labels(row["labels"]))

    def paths_for(self, question: str) -> list[Pattern] | None:
        """The paths `ask --language full` starts from for the question (None: no way to ask)."""
        if self.asking is None:
            return None
        refs = self._anchors_of(question)
        around = self.enumerator.all_patterns(refs, self.config.max_hops).candidates.values() if refs else []
        return language_paths(around, refs, self.store.schema())

    def _anchors_of(self, question: str) -> list[AnchorRef]:
        """The anchors `ask` finds in the question: its mentions (L0), resolved."""
        extractor, resolver = self.asking
        return [a.ref for a in resolver.resolve_all(extractor.extract(question))]

    def candidates(self, question: str) -> set[str]:
        """The queries `ask` would choose from for the question: its mentions (L0), their
        anchors, and every pattern around them."""
        return set(self.enumerator.all_patterns(self._anchors_of(question), self.config.max_hops).candidates)

    # ------------------------------------------------------------------ rows
    def wording(self, plan: Plan) -> tuple[str, int, bool]:
        """(question, form number, marked): fixed by the seed and the qid."""
        rng = random.Random(stable_hash(f"{self.config.seed}:{plan.qid}"))
        marked = rng.random() < self.config.marked_share
        mark = (lambda text: f"[{text}]") if marked else (lambda text: text)
        other = mark(plan.other_name) if plan.other_name is not None else None
        forms = self.verbaliser.questions(plan.pattern, mark(plan.anchor_name), other)
        form = rng.randrange(len(forms))
        return forms[form], form, marked

    def prepare(self, plans: list[Plan], progress: Progress | None = None) -> None:
        """Have the paraphraser rewrite every plan's question (batched, cached) before the rows."""
        if self.paraphraser is None:
            return
        questions = []
        for plan in plans:
            if isinstance(plan, LanguagePlan):
                continue  # its words state the values its query compares with: kept as they are
            question, _, marked = self.wording(plan)
            names = [] if marked else [n for n in (plan.anchor_name, plan.other_name) if n]
            questions.append((question, names))
        with (progress or SilentProgress()).task("paraphrasing", len(questions)) as task:
            self.paraphraser.rewrite_many(questions, progress=task.advance)

    def row_for(self, plan: Plan | LanguagePlan) -> SynthesisRow:
        started = time.perf_counter()
        if isinstance(plan, LanguagePlan):
            rows = self._language_rows[plan.qid]
            columns = plan.query.projection.aliases
            ids = [row[c] for row in rows for c in columns if is_node_column(c) and row.get(c) is not None]
            return language_row(plan, rows, name_of(self.store, ids), self.config.seed, started)
        pattern = plan.pattern
        question, form, marked = self.wording(plan)
        rewritten = self.paraphraser.rewrite(question) if self.paraphraser is not None else None
        cypher = render(pattern)
        ids = [r["id"] for r in self.store.read(executable(pattern, self.store), timeout_ms=self.config.timeout_ms)]
        nodes = {n["id"]: n for n in self.store.nodes_by_id(ids)} if ids else {}
        answers = [str(nodes[i]["name"] if nodes[i]["name"] is not None else i) for i in ids if i in nodes]
        named = [(pattern.anchor, plan.anchor_name)]
        if pattern.end_anchor is not None:
            named.append((pattern.end_anchor, plan.other_name))
        anchors = [
            AnchorRow(mention=n, id=a.id, name=n, labels=list(a.labels), method="graph", score=1.0) for a, n in named
        ]
        ok, reason = bool(ids), None if ids else "the pattern returned nothing"
        if len(ids) > self.config.max_answers:  # the enumeration counts without the hubs; the query does not
            ok, reason = False, f"more than {self.config.max_answers} answers"
        if ok and self.asking is not None and cypher not in self.candidates(rewritten or question):
            ok, reason = False, "target not among the candidates ask enumerates for the question"
        return SynthesisRow(
            qid=plan.qid,
            question=rewritten or question,
            hops=pattern.hops,
            qtype="graph:" + pattern.shape,
            split=split_of(plan.qid),
            answers=answers,
            answer_ids=ids,
            mentions=[a.mention for a in anchors],
            anchors=anchors,
            status="ok" if ok else "dropped",
            reason=reason,
            cypher=cypher if ok else None,
            pattern=pattern.to_dict(),
            query=None,
            hits=len(ids),
            total=len(ids),
            precision=1.0,
            recall=1.0 if ok else 0.0,
            alternatives=[],
            closest=None,
            enumerated=plan.enumerated,
            timeouts=[],
            hubs_skipped=0,
            source={
                "kind": "graph",
                "seed": self.config.seed,
                "form": form,
                "marked": marked,
                "template": question if rewritten else None,  # the question before the rewrite
            },
            timings={"total": round(time.perf_counter() - started, 5)},
        )
