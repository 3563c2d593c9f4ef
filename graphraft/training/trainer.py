"""Training L1 (question -> Cypher) and L2 (answer selection) with LoRA through TRL's
SFTTrainer. CPU works with the bundled model; a GPU is faster.

    python -m graphraft.train l1 --config training/l1_cpu.yaml
    python -m graphraft.train l2 --config training/l2_cpu.yaml

Tokenisation follows DESIGN.md invariant 4: the prompt (chat template up to the assistant's
turn) and the completion are tokenised separately and concatenated, the completion being
exactly a trie path (``tokenizer(text, add_special_tokens=False) + [eos]``); the loss is on
the completion only."""

from __future__ import annotations

import hashlib
import json
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from graphraft.errors import ConfigurationError, InputFileError
from graphraft.inference.adapters import write_metadata
from graphraft.inference.prompts import l2_messages, schema_hint
from graphraft.training.base_model import load_base
from graphraft.training.config import TrainConfig
from graphraft.training.examples import (
    L1Queries,
    L1TopQueries,
    l1_examples,
    l2_language_rows,
    l2_rows,
    mixed_sample,
    question_space,
    read_sources,
    shown_for,
    stable_sample,
    tokenize_example,
    training_exemplars,
)
from graphraft.training.targets import choose_targets


# ---------------------------------------------------------------------------------- data
class ExactMatch:
    """Exact-query match of L1's most likely query on validation questions: a path question
    among the paths around its anchors, a question of the language (a row with a ``query``)
    in its query space, searched as ``ask --language full`` does.

    ``store`` and ``hint`` serve every row; rows of other graphs (training on several) come
    as ``groups``: more (store, hint, rows) triples, each asked on its own graph. ``file_of``
    (a row's qid -> the name of the file it came from) adds each file's own figure
    (``exact_match_file_NAME``): validation rows are drawn from every file, so one mixing
    questions generated from the graph with real ones reads both."""

    def __init__(
        self,
        store,
        rows,
        targets,
        max_hops: int,
        batch_size: int,
        hint=None,
        num_beams: int = 1,
        groups=(),
        file_of: dict[str, str] | None = None,
        exemplars=None,
    ):
        parts = [(store, hint, list(rows))] if rows else []
        self.exemplars = exemplars  # the solved questions L1's prompts show (each group its graph's)
        parts += [(s, h, list(r)) for s, h, r in groups if r]
        self.targets, self.batch_size, self.max_hops = targets, batch_size, max_hops
        self.file_of = file_of or {}
        self.num_beams = num_beams  # 1: L1's most likely query; more: the top of `ask`'s search (the same)
        self.groups = [(s, h, r, [self._space(s, row) for row in r]) for s, h, r in parts]
        self.rows = [row for _, _, r, _ in self.groups for row in r]

    def _space(self, store, row):
        """The candidates' texts of a path row; for a row of the language, a function of the
        tokenizer giving its query space (the tokenizer comes with the model)."""
        return question_space(store, row, self.max_hops)

    def _write(self, model, tokenizer, hint, batch, spaces, store=None) -> list[str | None]:
        from graphraft.inference.generation import ConstrainedGenerator

        shown = self.exemplars.for_graph(store.graph_name) if self.exemplars is not None and store else None
        generator = ConstrainedGenerator(model, tokenizer, hint, exemplars=shown)
        searched = [space(tokenizer) if callable(space) else space for space in spaces]
        tops = generator.generate_many([r.question for r in batch], searched, self.num_beams)
        return [top[0].cypher if top else None for top in tops]

    def __call__(self, model, tokenizer) -> dict[str, float]:
        was_training = model.training
        model.eval()
        hits, by_hop, by_kind = 0, defaultdict(lambda: [0, 0]), defaultdict(lambda: [0, 0])
        by_file = defaultdict(lambda: [0, 0])
        self.mistakes, self.written = [], []  # (question, target, written) of each miss; (row, written) of each
        for store, hint, rows, spaces in self.groups:
            for start in range(0, len(rows), self.batch_size):
                batch = rows[start : start + self.batch_size]
                written = self._write(model, tokenizer, hint, batch, spaces[start : start + self.batch_size], store)
                for row, query in zip(batch, written):
                    self.written.append((row, query))
                    ok = query == self.targets[row.qid]
                    if not ok:
                        self.mistakes.append((row.question, self.targets[row.qid], query))
                    hits += ok
                    tally = by_kind["language"] if row.query is not None else by_hop[row.hops]
                    tally[0] += ok
                    tally[1] += 1
                    if (name := self.file_of.get(row.qid)) is not None:
                        by_file[name][0] += ok
                        by_file[name][1] += 1
        if was_training:
            model.train()
        result = {"exact_match": hits / len(self.rows) if self.rows else 0.0}
        result.update({f"exact_match_{h}hop": v[0] / v[1] for h, v in sorted(by_hop.items())})
        result.update({f"exact_match_{k}": v[0] / v[1] for k, v in by_kind.items()})
        if len(by_file) > 1:  # one file: the figure above
            result.update({f"exact_match_file_{k}": v[0] / v[1] for k, v in sorted(by_file.items())})
        return result


# ---------------------------------------------------------------------------------- training
def make_trainer(
    config: TrainConfig,
    model,
    tokenizer,
    train_examples: list[dict],
    val_examples: list[dict],
    checkpoints: Path,
    callbacks=(),
    **overrides,
):
    """TRL's SFTTrainer with LoRA as ``config`` says (``overrides``: more SFTConfig fields)."""
    import torch
    from datasets import Dataset
    from peft import LoraConfig
    from trl import SFTConfig, SFTTrainer

    from graphraft.models import native_bfloat16

    steps_per_epoch = -(-len(train_examples) // (config.batch_size * config.gradient_accumulation))
    warmup_steps = int(config.warmup_ratio * steps_per_epoch * config.epochs)
    on_gpu = torch.cuda.is_available()
    fields = dict(
        output_dir=str(checkpoints),
        num_train_epochs=config.epochs,
        per_device_train_batch_size=config.batch_size,
        per_device_eval_batch_size=config.batch_size,
        gradient_accumulation_steps=config.gradient_accumulation,
        learning_rate=config.learning_rate,
        warmup_steps=warmup_steps,
        lr_scheduler_type="linear",
        logging_steps=config.logging_steps,
        save_strategy="steps",
        save_steps=config.save_steps,
        save_total_limit=2,
        eval_strategy="epoch",
        report_to=[],
        seed=config.seed,
        bf16=config.bf16 and native_bfloat16(),
        # examples longer than max_length are dropped before the trainer sees them (train()), and
        # TRL refuses a max_length with padding-free batches it cannot enforce
        max_length=None if config.padding_free else config.max_length,
        completion_only_loss=True,
        dataset_num_proc=None,
        dataloader_num_workers=0,
        use_cpu=not on_gpu,
        disable_tqdm=True,
        gradient_checkpointing=False,  # recomputation only costs time at these sizes
        remove_unused_columns=True,
        padding_free=config.padding_free,
    )
    collator = None
    if config.shared_prefix:
        from graphraft.training.packing import SharedPrefixCollator

        collator = SharedPrefixCollator(mask_dtype=next(model.parameters()).dtype)
        fields.update(padding_free=False, max_length=None)
    args = SFTConfig(**{**fields, **overrides})
    layers = model.config.num_hidden_layers
    top = min(config.lora.top_layers or layers, layers)
    lora = LoraConfig(
        r=config.lora.r,
        lora_alpha=config.lora.alpha,
        lora_dropout=config.lora.dropout,
        target_modules=config.lora.target_modules,
        task_type="CAUSAL_LM",
        layers_to_transform=list(range(layers - top, layers)) if top < layers else None,
    )
    trainer = SFTTrainer(
        model=model,
        args=args,
        train_dataset=Dataset.from_list(train_examples),
        eval_dataset=Dataset.from_list(val_examples),
        processing_class=tokenizer,
        peft_config=lora,
        callbacks=list(callbacks),
        data_collator=collator,
    )
    if collator is not None:
        from graphraft.training.packing import route_tree_mask

        route_tree_mask(trainer.model)
    return trainer


def train(config: TrainConfig, settings, resume: bool = False, progress_callback=None) -> dict[str, Any]:
    """Train an L1 or L2 adapter as configured; returns the summary also saved beside it.
    ``progress_callback`` gets dicts: a ``note``, a ``step`` with its loss, an epoch's scores."""
    import torch

    from graphraft.graph import open_store

    notify = progress_callback or (lambda entry: None)
    started = time.perf_counter()
    torch.manual_seed(config.seed)
    sources = read_sources(config.data, config.graph)
    rows = [row for _, part in sources for row in part]
    train_rows = mixed_sample(
        [(source, [r for r in part if r.split != "validation"]) for source, part in sources],
        config.max_train_examples,
        config.seed,
    )
    val_rows = stable_sample([r for r in rows if r.split == "validation"], config.validation_examples, config.seed)
    notify(
        {
            "note": f"{len(train_rows):,} training and {len(val_rows):,} validation questions; building the examples"
            + (" (L1 writes its query for each first)" if config.task == "l2" and config.l1_adapter else "")
        }
    )
    model, tokenizer = load_base(config, settings.home)
    # each file's graph (the config's unless the file names its own); its rows are asked there
    graph_of = {id(row): source.graph or config.graph for source, part in sources for row in part}
    stores: dict[str | None, Any] = {}
    try:
        for graph in dict.fromkeys(graph_of.values()):
            stores[graph] = open_store(settings, graph)
        hints = {g: schema_hint(s) if config.schema_hints else None for g, s in stores.items()}
        hint = hints.get(config.graph, next(iter(hints.values())))
        targets = choose_targets(rows)
        hint_of = lambda row: hints[graph_of[id(row)]]  # noqa: E731
        exemplars = None
        if config.task == "l1" and config.prompt_examples:
            notify({"note": f"finding the {config.prompt_examples} nearest solved questions for each prompt"})
            exemplars = training_exemplars(sources, graph_of, targets, config.prompt_examples, settings.home)
        train_examples, val_examples = build_examples(
            config, stores, graph_of, tokenizer, settings.home, train_rows, val_rows, targets, hint_of, exemplars
        )
        for part, examples in (("training", train_examples), ("validation", val_examples)):
            if not examples:  # the trainer would stop with a bare StopIteration
                raise InputFileError(
                    f"no {part} examples in {', '.join(map(str, config.data))} (the split keeps ~10 % of the "
                    f"questions for validation; examples over max_length={config.max_length} tokens are left out)"
                )
        # L1 is judged by the exact match of its top query after each epoch, each question on its graph
        judge = None
        if config.task == "l1":
            groups = [(s, hints[g], [r for r in val_rows if graph_of[id(r)] == g]) for g, s in stores.items()]
            file_of = {
                row.qid: source.path.stem for source, part in sources for row in part if row.split == "validation"
            }
            judge = ExactMatch(
                None,
                [],
                targets,
                config.max_hops,
                config.eval_batch_size,
                groups=groups,
                file_of=file_of,
                exemplars=exemplars,
            )
        checkpoints = Path(config.output_dir) / "checkpoints"
        history: list[dict[str, Any]] = []
        trainer = make_trainer(
            config,
            model,
            tokenizer,
            train_examples,
            val_examples,
            checkpoints,
            [_reporter(notify, judge, tokenizer, history)],
        )
        if progress_callback:  # our progress lines replace the trainer's printed log dicts
            from transformers.trainer_callback import PrinterCallback

            trainer.remove_callback(PrinterCallback)
        has_checkpoint = checkpoints.exists() and any(checkpoints.glob("checkpoint-*"))
        result = trainer.train(resume_from_checkpoint=True if resume and has_checkpoint else None)
    finally:
        for opened in stores.values():
            opened.close()
    adapter_dir = save_adapter(trainer.model, tokenizer, config, len(train_examples), hint, exemplars)
    losses = [e["loss"] for e in trainer.state.log_history if "loss" in e]
    summary = {
        "task": config.task,
        "base_model": config.base_model,
        "train_examples": len(train_examples),
        "validation_questions": len(val_rows),
        "epochs": config.epochs,
        "steps": trainer.state.global_step,
        "first_loss": losses[0] if losses else None,
        "last_loss": losses[-1] if losses else None,
        "train_runtime_s": round(result.metrics.get("train_runtime", 0.0), 1),
        "total_s": round(time.perf_counter() - started, 1),
        "history": history,
        "adapter": str(adapter_dir),
        "resumed": bool(resume and has_checkpoint),
        "config_digest": config_digest(config),
    }
    (Path(config.output_dir) / "summary.json").write_text(json.dumps(summary, indent=2))
    return summary


def build_examples(
    config: TrainConfig, stores, graph_of, tokenizer, home: Path, train_rows, val_rows, targets, hint_of, exemplars=None
):
    """Tokenised (training, validation) examples for the task, those longer than max_length left
    out. ``stores``: graph -> store; ``graph_of``: id(row) -> its graph; ``hint_of``: row -> L1's
    schema line (None without schema hints); ``exemplars``: the solved questions L1's prompts show
    (None: none)."""
    if config.task == "l1":
        shown = (lambda rows: shown_for(exemplars, rows, graph_of)) if exemplars else (lambda rows: None)
        train_examples = l1_examples(tokenizer, train_rows, targets, hint_of, shown(train_rows))
        val_examples = l1_examples(tokenizer, val_rows[:200], targets, hint_of, shown(val_rows[:200]))
    else:
        train_l2, val_l2 = [], []
        for graph, store in stores.items():  # L2's evidence comes from each question's own graph
            train_part = [r for r in train_rows if graph_of[id(r)] == graph]
            val_part = [r for r in val_rows[:200] if graph_of[id(r)] == graph]
            if not train_part and not val_part:
                continue
            paths = lambda part: [r for r in part if r.query is None]  # noqa: E731
            language = lambda part: [r for r in part if r.query is not None]  # noqa: E731
            if language(train_part) or language(val_part):
                if not config.l1_adapter:
                    raise ConfigurationError(
                        "L2 on questions of the language needs l1_adapter (--l1-adapter): its evidence "
                        "shows the results of the queries L1 writes beside the pair's own"
                    )
                l1_queries = L1Queries(config, home, store)
                train_l2 += l2_language_rows(store, language(train_part), config, tokenizer, l1_queries)
                val_l2 += l2_language_rows(store, language(val_part), config, tokenizer, l1_queries)
                del l1_queries  # frees L1 before training
            if paths(train_part) or paths(val_part):
                l1_top = L1TopQueries(config, home, store) if config.l1_adapter else None
                train_l2 += l2_rows(store, paths(train_part), config, tokenizer, l1_top)
                val_l2 += l2_rows(store, paths(val_part), config, tokenizer, l1_top)
                del l1_top  # frees L1 before training
        train_examples, val_examples = (
            [tokenize_example(tokenizer, l2_messages(r["question"], r["evidence"]), r["target"]) for r in part]
            for part in (train_l2, val_l2)
        )
    keep = lambda examples: [e for e in examples if len(e["input_ids"]) <= config.max_length]  # noqa: E731
    return keep(train_examples), keep(val_examples)


def save_adapter(
    model, tokenizer, config: TrainConfig, trained_examples: int, hint: str | None = None, exemplars=None
) -> Path:
    """The adapter, its tokenizer and the metadata `ask` checks and follows (for L2: how its
    evidence was written; for L1: the solved questions its prompt shows, when it was trained so)."""
    adapter_dir = Path(config.output_dir) / "adapter"
    model.save_pretrained(adapter_dir)
    tokenizer.save_pretrained(adapter_dir)
    shown = {}
    if exemplars is not None:
        from graphraft.inference.exemplars import SIMILARITY

        exemplars.save(adapter_dir)
        shown = {"prompt_examples": exemplars.k, "exemplar_similarity": SIMILARITY}
    l2 = {
        "evidence_tokens": config.evidence_tokens,
        "queries": config.l2_queries,
        "evidence_details": config.evidence_details,
    }
    write_metadata(
        adapter_dir,
        config.task,
        config.base_model,
        schema_hints=config.schema_hints,
        schema_hint=hint,
        graph=config.graph,
        trained_examples=trained_examples,
        **shown,
        **(l2 if config.task == "l2" else {}),
    )
    return adapter_dir


def _reporter(notify, judge, tokenizer, history):
    """A trainer callback that turns logs and evaluations into progress entries (and the
    history); transformers is imported here, when training, not when the command starts."""
    from transformers import TrainerCallback

    class Reporter(TrainerCallback):
        def on_evaluate(self, args, state, control, metrics=None, **kwargs):
            entry = {"epoch": state.epoch, "eval_loss": (metrics or {}).get("eval_loss")}
            if judge is not None:
                entry.update(judge(kwargs["model"], tokenizer))
            history.append(entry)
            notify(entry)

        def on_log(self, args, state, control, logs=None, **kwargs):
            if logs and "loss" in logs:
                notify({"step": state.global_step, "of": state.max_steps, "loss": logs["loss"]})

    return Reporter()


#: settings added after adapters were trained, at the value that trains as before: left out of
#: the digest there, so an adapter trained before the setting existed is still reused (and a
#: self-training label row decided before it counts as decided at that value: not decided again)
ADDED_LATER = {
    ("self_train", "reshape"): False,
    ("self_train", "reshape_hops"): True,
    ("self_train", "reshape_types"): True,
    ("self_train", "reshape_smoothing"): 0.0,
    ("self_train", "reshape_unsure"): False,
    ("self_train", "relabel"): "none",
    ("self_train", "wording_schema_words"): True,
    ("self_train", "wording_center"): False,
    ("self_train", "asked_type_first"): False,
    ("prompt_examples",): 0,
}
#: settings that decide how many self-training rounds run, not what a round trains on: left out of
#: the digest, so a rerun with more rounds (or another stopping gain) reuses the rounds trained before
ROUND_COUNT = (("self_train", "rounds"), ("self_train", "min_gain"))


def config_digest(config: TrainConfig, round_count: bool = False) -> str:
    """Identifies the settings an adapter was trained with (to reuse it only when they match):
    every setting, defaults included (a changed default trains again), but those ``ADDED_LATER``
    at their old behaviour and the ``ROUND_COUNT`` ones (``round_count``: kept, as digests were
    made before they were left out)."""
    data = config.model_dump(mode="json")
    for (*sections, key), value in ADDED_LATER.items():
        holder = data
        for section in sections:
            holder = holder.get(section, {})
        if holder.get(key, object()) == value:
            del holder[key]
    if not round_count:
        for section, key in ROUND_COUNT:
            data.get(section, {}).pop(key, None)
    return hashlib.sha1(json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()).hexdigest()[:16]


def trained_with(summary: dict, config: TrainConfig) -> bool:
    """Whether a training summary's adapter was trained with ``config``'s settings: its digest, or
    one made before the ``ROUND_COUNT`` settings were left out, with as many rounds as ``config``
    or fewer (so such adapters are reused too)."""
    digest = summary.get("config_digest")
    if digest == config_digest(config):
        return True
    older = (
        config.model_copy(update={"self_train": config.self_train.model_copy(update={"rounds": rounds})})
        for rounds in range(1, config.self_train.rounds + 1)
    )
    return any(digest == config_digest(c, round_count=True) for c in older)
