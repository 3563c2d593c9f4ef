"""Training configuration (TRL style: a config object beside the trainer), read from YAML
in training/ with command-line overrides."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from graphraft.config import StageConfig
from graphraft.inference.prompts import DETAIL_CHARS


class LoraSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    r: int = Field(16, gt=0, description="LoRA rank.")
    alpha: int = Field(32, gt=0, description="LoRA alpha (the update is scaled by alpha / r).")
    dropout: float = Field(0.05, ge=0.0, lt=1.0, description="LoRA dropout.")
    target_modules: list[str] = Field(
        ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
        description="Linear layers that get adapters (repeat the flag for several).",
    )
    # backpropagation then stops there: a step costs about half as much with the top 10 of
    # SmolLM2-135M's 30 layers
    top_layers: int | None = Field(None, gt=0, description="Adapt only the top N transformer layers (unset: all).")


class SelfTrainSettings(BaseModel):
    """Self-training on questions without answers (``--self-train FILE``): L1, trained on the
    configured data, labels each question with its top query; the labels that pass every check
    join the data and L1 is trained again, round after round (graphraft/training/self_training.py).

    The defaults are the recipe that measured best on MetaQA with no labelled pair (README, "Cold
    start"): the generated questions made again in the shapes the questions ask (hops evenly,
    the dropped questions' shapes counted), a longer query that reads closer taken as the label,
    the wording compared less each shape's mean, on the verbaliser's phrases alone."""

    model_config = ConfigDict(extra="forbid")

    questions: Path | None = Field(
        None, description="A text file of questions, one a line, without answers (unset: no self-training)."
    )
    # e.g. the L1 a cold start trained on generated questions: round 0 is then not trained again
    start: Path | None = Field(None, description="An L1 adapter to label with first (unset: round 0 trains one).")
    rounds: int = Field(2, ge=1, description="Most labelling rounds (each followed by training).")
    # summed log-probabilities: 1.0 is the top query at least e (2.7) times as likely as the next
    margin: float = Field(1.0, ge=0, description="Keep a label when L1's top query beats its second by this (nats).")
    # the question against each written query's words from the schema (MiniLM cosine similarity)
    wording_slack: float | None = Field(
        0.0,
        ge=0,
        description="Drop a label when another query L1 wrote is worded closer to the question by more than "
        "this (unset: no wording check).",
    )
    share: float = Field(0.5, gt=0, lt=1, description="Share of max_train_examples given to the kept labels.")
    queries: int = Field(5, ge=2, description="Queries L1 writes per question (the margin and wording compare them).")
    language: Literal["paths", "full"] = Field("paths", description="What L1 may write when labelling (as `ask`).")
    # this share of the questions must be labelled anew for another round to be worth it
    min_gain: float = Field(
        0.01,
        ge=0,
        description="Stop when a round labels fewer than this share of the questions anew (new or changed).",
    )
    # people ask a few shapes far more than the others: the kept labels say which, with no
    # answer known, and the questions made from the graph follow them (ShapePrior)
    reshape: bool = Field(
        True,
        description="Each round, make the configured --from-graph questions again with their shapes drawn as "
        "often as the kept labels ask them (the prior re-estimated every round), in place of the old ones "
        "(unless set: left out, with a note, where it cannot run — no data file made by --from-graph, no room).",
    )
    # L1 leans to short queries (on MetaQA's 3-hop questions its top query was 1-hop for ~70 of
    # 100): among the queries it wrote, one that reads closer to the question and is longer is
    # often the right one (benchmarks/label_wording.py)
    # and of the queries of one length, L1's top one copies its confusions of relationship types
    # (its director for "who acted in [movie]"): on 450 of MetaQA's round-3 labels, the closest-reading
    # query as long as the label (the phrases alone compared) was right for 347 where the label was for 332
    relabel: Literal["none", "longer", "longer-unsure", "closest"] = Field(
        "longer",
        description="longer: label a question with the query L1 wrote that reads closest to it (of those that "
        "return something) where that one is longer than L1's top query and reads closer, sure or not; "
        "longer-unsure: the same only where L1 is not sure of its top query (by the margin); closest: the "
        "same where it is longer or as long (another choice of relationship types); none: L1's top query only.",
    )
    # L1's own labels lean to short queries: their hop shares can be left out
    reshape_hops: bool = Field(
        False,
        description="With reshape, hop lengths in the labels' proportions too (false: equal shares per hop "
        "length; the labels choose the shapes within each).",
    )
    # L1's own labels copy its first mapping of words to relationship types (on MetaQA, "who
    # acted in [movie]" labelled with the director's type from round 1 on, 112 to 8 in round 1):
    # their type shares would teach it again what it confuses
    reshape_types: bool = Field(
        True,
        description="With reshape, relationship types in the labels' proportions too (false: each path's labels "
        "and directions as often as the labels ask, spread evenly over the types the labels used there).",
    )
    # the kept labels are the questions L1 already labels well: the shapes it gets wrong are
    # dropped by the checks, and smoothed by one they hardly come up in the questions made again
    reshape_smoothing: float = Field(
        0.0,
        ge=0.0,
        description="With reshape, each shape's count among the labels raised by this many times the mean count "
        "of the shapes they ask (0: by one; 1: a shape no label asks as often as the average asked one).",
    )
    # the kept labels are the questions L1 already labels well; the dropped ones still say what
    # people ask: of the queries L1 wrote for them, the one that reads closest is most often of the
    # right shape (on MetaQA the right query was among L1's five for 98 % of the questions)
    reshape_unsure: bool = Field(
        True,
        description="With reshape, the questions whose label was dropped count in the prior too, each by the "
        "query L1 wrote that reads closest to it (less its shape's mean with wording_center); never trained on.",
    )
    # the readings compared with the question end with the schema words of what the query names
    # ("... movie directed by person"); on 600 labels of MetaQA's training questions, leaving them
    # out made the wording pick righter longer queries (benchmarks/label_wording.py --phrases-only)
    wording_schema_words: bool = Field(
        False,
        description="The wording check's readings end with the words of the labels, types and keys the query "
        "names (false: the verbaliser's phrases alone).",
    )
    # some shapes read close to every question (a type named by a participle has five readings, a
    # noun-named one one: on MetaQA "the director of X" is near any "who ... [movie]"), so the raw
    # similarity favours them; less its shape's mean over the round's questions, it says how much
    # closer this question is to a query than questions are to that shape as a rule. On 1,500 of
    # MetaQA's round-4 rows (the phrases alone, margin 1, slack 0): 797 kept, 94.6 % right, 273 of them
    # 1-hop, where the raw similarities keep 763 at 94.9 %, 173 1-hop (benchmarks/label_centering.py, a
    # diagnostic against the answers, which training never reads)
    wording_center: bool = Field(
        True,
        description="The wording check compares each query's similarity to the question less the mean similarity "
        "of the queries of its shape (its path and clauses without anchors or values) over every question of the "
        "round: a shape close to every question counts for less (use with wording_slack 0).",
    )

    # ask tries the paths that answer the label the question asks for first (its asked-type rule:
    # on MetaQA validation 93.7 % Hit@1 against 89.3 % in L1's own order, from the 1 % L1); labels
    # taken in that order are labels `ask` would answer with
    asked_type_first: bool = Field(
        False,
        description="Label with the first of L1's path queries in ask's order (those whose answers have the label "
        "the question asks for first, L1's order within), L1's margin taken within that group (a group of one: "
        "sure); false: L1's top query.",
    )

    @model_validator(mode="after")
    def _no_wording_check(self):
        # no wording check (wording_slack unset): nothing compares wordings, unless set to
        if self.wording_slack is None:
            if "relabel" not in self.model_fields_set:
                self.relabel = "none"
            if "wording_center" not in self.model_fields_set:
                self.wording_center = False
        return self


class DataSource(BaseModel):
    """A synthesis file, optionally the share of the training examples drawn from it and the
    graph it was synthesised on. Written ``PATH`` or ``PATH@SHARE`` (a flag, a YAML string) or
    as a mapping (``{path: ..., share: 0.3, graph: movies}``: the only way to name a graph)."""

    model_config = ConfigDict(extra="forbid")

    path: Path
    # e.g. a few real pairs among many generated ones: they repeat to fill their share
    share: float | None = Field(
        None, gt=0, le=1, description="Fraction of max_train_examples from this file (its rows repeat if too few)."
    )
    # one adapter can learn from several graphs (MetaQA's paths beside a movies graph's
    # properties): each file's validation questions are asked on their own graph
    graph: str | None = Field(None, description="The graph this file was synthesised on (unset: the config's graph).")

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, value):
        if isinstance(value, (str, Path)):
            path, sep, share = str(value).rpartition("@")
            try:
                return {"path": path, "share": float(share)} if sep else {"path": str(value)}
            except ValueError:
                return {"path": str(value)}  # an @ that is part of the file name
        return value

    def __str__(self) -> str:
        return f"{self.path}@{self.share:g}" if self.share is not None else str(self.path)


class TrainConfig(StageConfig):
    """How L1 or L2 is trained: a YAML file in training/ sets these, a flag overrides one."""

    task: Literal["l1", "l2"] = Field(description="l1 (question -> Cypher) or l2 (answer selection).")
    base_model: str = Field("bundled", description="'bundled', a folder, a hub id, or 'tiny-random' (tests).")
    data: list[DataSource] = Field(
        description="Synthesis JSONL files, PATH or PATH@SHARE (repeat the flag for several); the files "
        "without a share fill the rest of max_train_examples, equal shares per hop."
    )
    output_dir: Path = Field(description="Where checkpoints and the adapter go.")
    graph: str | None = Field(None, description="Graph the data was synthesised on (validation, L2 evidence).")
    max_train_examples: int | None = Field(
        3000, description="A stable sample of the rows, equal shares per hop (unset: every row once)."
    )
    validation_examples: int = Field(500, description="Held-out rows scored after each epoch.")
    epochs: float = Field(1.0, gt=0)
    batch_size: int = Field(8, gt=0)
    gradient_accumulation: int = Field(1, gt=0)
    learning_rate: float = Field(5e-4, gt=0)
    warmup_ratio: float = Field(0.03, ge=0)
    max_length: int = Field(384, gt=0, description="Longest example in tokens.")
    schema_hints: bool = Field(False, description="Put the graph's schema in L1's prompt.")
    # retrieved few-shot: L1 reads the K training questions most like its question (MiniLM), each
    # with its target query, before the question; the adapter keeps them (inference/exemplars.py)
    prompt_examples: int = Field(
        0, ge=0, le=8, description="Solved training questions most like the question shown in L1's prompt (0: none)."
    )
    seed: int = 0
    # only where the hardware computes it natively (CUDA, a CPU with AVX512-BF16 or AMX):
    # emulated bfloat16 is slower than float32
    bf16: bool = Field(False, description="bfloat16 autocast.")
    # each batch is one sequence of the examples laid end to end, with position ids restarting
    # per example (a block-diagonal causal mask; no cross-talk). Worth it for short examples
    # (L1: 1.14x the examples a minute, benchmarks/train_speed.py); with long ones (L2's
    # evidence) the attention over one long sequence can cost more than padding
    padding_free: bool = Field(False, description="No compute on padding: a batch is one packed sequence.")
    # takes precedence over padding_free (graphraft/training/packing.py)
    shared_prefix: bool = Field(
        False,
        description="Padding-free, and the beginning a batch's examples share (the system prompt) fed once.",
    )
    load_in_4bit: bool = Field(False, description="QLoRA through bitsandbytes, only when CUDA is present.")
    save_steps: int = Field(100, gt=0, description="Steps between checkpoints.")
    logging_steps: int = Field(10, gt=0)
    eval_batch_size: int = Field(16, gt=0)
    max_hops: int = Field(3, ge=1, le=3, description="Longest candidate pattern (L2's evidence).")
    l2_queries: int = Field(3, gt=0, description="L2: queries whose results make up one evidence block.")
    evidence_tokens: int = Field(700, gt=0, description="L2: the evidence budget in tokens.")
    # 0: name and label only, so more of the retrieved nodes fit the token budget; `ask` uses
    # what the adapter was trained with
    evidence_details: int = Field(DETAIL_CHARS, ge=0, description="L2: characters of node details per evidence line.")
    # without one, the best query is placed among the sampled ones at random
    l1_adapter: Path | None = Field(
        None, description="L2: an L1 adapter whose top query opens each evidence block, as at ask time."
    )
    lora: LoraSettings = LoraSettings()
    self_train: SelfTrainSettings = SelfTrainSettings()

    @field_validator("data", mode="before")
    @classmethod
    def _one_or_many(cls, value):
        return [value] if isinstance(value, (str, Path, dict)) else value

    @model_validator(mode="after")
    def _shares_fit(self):
        total = sum(source.share or 0.0 for source in self.data)
        if total > 1.0 + 1e-9:
            raise ValueError(f"data: the shares add up to {total:g}, more than 1")
        if total and self.max_train_examples is None:
            raise ValueError("data: shares need max_train_examples (the number they are shares of)")
        if self.self_train.questions is not None:
            if self.task != "l1":
                raise ValueError("self_train: only L1 is self-trained (it writes the labels)")
            if self.max_train_examples is None:
                raise ValueError("self_train: needs max_train_examples (the labels' share is of it)")
            if total + self.self_train.share > 1.0 + 1e-9:
                raise ValueError(
                    f"self_train.share: {self.self_train.share:g} beside the data's shares ({total:g}) is more than 1"
                )
            if self.self_train.relabel != "none" and self.self_train.wording_slack is None:
                raise ValueError(
                    f"self_train.relabel: {self.self_train.relabel} compares the queries' wordings with the "
                    "question: give wording_slack a value"
                )
            asked = "reshape" in self.self_train.model_fields_set  # on by default: left out where it cannot run
            if self.self_train.reshape and asked and total + self.self_train.share >= 1.0 - 1e-9:
                raise ValueError(
                    "self_train.reshape: the labels' and the data's shares leave nothing to the questions made "
                    "again from the graph"
                )
        return self
