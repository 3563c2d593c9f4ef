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
import random
import time
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from graphraft.errors import InputFileError
from graphraft.graph.loaders.files import jsonl_rows
from graphraft.inference.adapters import write_metadata
from graphraft.inference.decoding.trie import candidate_sequences
from graphraft.inference.prompts import l1_messages, l2_answer_text, l2_messages, prompt_ids
from graphraft.sampling import stable_groups, stable_hash
from graphraft.training.config import TrainConfig
from graphraft.training.targets import choose_targets


# ---------------------------------------------------------------------------------- data
def read_synthesis(paths: Iterable[Path]) -> list[dict[str, Any]]:
    rows = []
    for path in paths:
        path = Path(path)
        if not path.is_file():
            raise InputFileError(f"{path}: synthesis output not found (run python -m graphraft.synthesize first)")
        rows += [row for _, row in jsonl_rows(path) if row.get("status") == "ok" and row.get("cypher")]
    if not rows:
        raise InputFileError("no usable synthesis rows (status ok) in " + ", ".join(map(str, paths)))
    return rows


def stable_sample(rows: list[dict[str, Any]], count: int | None, seed: int) -> list[dict[str, Any]]:
    """``count`` rows with equal shares per hop, chosen by a hash (the same on every run)."""
    if count is None or count >= len(rows):
        return list(rows)
    key = lambda row: f"{seed}:{row['qid']}"  # noqa: E731
    by_hop = stable_groups(rows, lambda row: row.get("hops", 0), key)
    share, chosen = count // len(by_hop), []
    for ordered in by_hop.values():
        chosen += ordered[:share]
    rest = sorted((r for r in rows if r not in chosen), key=lambda row: stable_hash(key(row)))
    chosen += rest[: count - len(chosen)]
    random.Random(seed).shuffle(chosen)
    return chosen


def tokenize_example(tokenizer, messages: list[dict[str, str]], completion: str) -> dict[str, list[int]]:
    prompt = prompt_ids(tokenizer, messages)
    target = list(candidate_sequences(tokenizer, [completion])[0])
    return {"input_ids": prompt + target, "completion_mask": [0] * len(prompt) + [1] * len(target)}


def schema_hint(store) -> str:
    schema = store.schema()
    return "; ".join(str(p) for p in schema.patterns)


def l1_examples(tokenizer, rows, targets, hint=None) -> list[dict[str, list[int]]]:
    return [tokenize_example(tokenizer, l1_messages(row["question"], hint), targets[row["qid"]]) for row in rows]


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
    from graphraft.synthesis.patterns import AnchorRef, Pattern

    enumerator = PatternEnumerator(store)
    rng = random.Random(config.seed)
    around = []
    for row in rows:
        refs = [AnchorRef(a["id"], tuple(a["labels"])) for a in row["anchors"]]
        around.append({p.cypher: p.pattern for p in enumerator.all_patterns(refs, config.max_hops).patterns})
    firsts = l1_top([r["question"] for r in rows], [list(c) for c in around]) if l1_top else [None] * len(rows)
    out = []
    for row, patterns, first in zip(rows, around, firsts):
        patterns = {**patterns, row["cypher"]: Pattern.from_dict(row["pattern"])}
        lead = [first] if first in patterns else []
        best = [row["cypher"]] if row["cypher"] not in lead else []
        others = [c for c in patterns if c != row["cypher"] and c not in lead]
        rest = best + rng.sample(others, max(0, min(len(others), config.l2_queries - len(lead) - len(best))))
        rng.shuffle(rest)
        chosen = lead + rest
        retrieval = execute(store, [GeneratedQuery(c, 0.0, i) for i, c in enumerate(chosen)])
        names = {a["id"]: a["name"] for a in row["anchors"]}
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
                "qid": row["qid"],
                "question": row["question"],
                "evidence": evidence,
                "target": l2_answer_text(row["answers"], evidence),
            }
        )
    return out


class L1TopQueries:
    """``(questions, candidate lists) -> L1's most likely candidate query for each``, with an L1
    adapter (loaded on first use, with the schema hint it was trained with)."""

    def __init__(self, config: TrainConfig, home: Path, store):
        from graphraft.inference.adapters import check_metadata

        check_metadata(config.l1_adapter, "l1", config.base_model)  # fail before the slow part
        self.config, self.home, self.store = config, home, store
        self.loaded = None

    def __call__(self, questions: list[str], candidates: list[list[str]]) -> list[str | None]:
        from graphraft.inference.adapters import load_adapter, read_metadata
        from graphraft.inference.generation import top_queries

        if self.loaded is None:
            base, tokenizer = load_base(self.config, self.home)
            model = load_adapter(base, self.config.l1_adapter, "l1", self.config.base_model)
            hint = schema_hint(self.store) if read_metadata(self.config.l1_adapter).get("schema_hints") else None
            self.loaded = model, tokenizer, hint
        model, tokenizer, hint = self.loaded
        return top_queries(model, tokenizer, questions, candidates, hint)


# ---------------------------------------------------------------------------------- models
def load_base(config: TrainConfig, home: Path):
    import torch

    from graphraft.models import TINY_RANDOM, load_causal_lm, tiny_random_model

    if config.base_model == TINY_RANDOM:
        return tiny_random_model(home, seed=config.seed)
    quantization = None
    if config.load_in_4bit and torch.cuda.is_available():
        from transformers import BitsAndBytesConfig

        quantization = BitsAndBytesConfig(
            load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=torch.bfloat16
        )
    if quantization is None:
        return load_causal_lm(
            config.base_model, home, dtype=torch.bfloat16 if config.bf16 and torch.cuda.is_available() else None
        )
    from transformers import AutoModelForCausalLM

    from graphraft.models import load_tokenizer, resolve_model_path

    model = AutoModelForCausalLM.from_pretrained(
        resolve_model_path(config.base_model, home), quantization_config=quantization, device_map="auto"
    )
    return model, load_tokenizer(config.base_model, home)


# ---------------------------------------------------------------------------------- validation
class ExactMatch:
    """Exact-query match of L1's most likely candidate query on validation questions."""

    def __init__(self, store, rows, targets, max_hops: int, batch_size: int, hint=None, num_beams: int = 1):
        from graphraft.synthesis.enumeration import PatternEnumerator
        from graphraft.synthesis.patterns import AnchorRef

        enumerator = PatternEnumerator(store)
        self.rows, self.targets, self.batch_size, self.hint = rows, targets, batch_size, hint
        self.num_beams = num_beams  # 1: L1's most likely query; more: the top of `ask`'s search (the same)
        self.candidates = []
        for row in rows:
            refs = [AnchorRef(a["id"], tuple(a["labels"])) for a in row["anchors"]]
            self.candidates.append([p.cypher for p in enumerator.all_patterns(refs, max_hops).patterns])

    def _write(self, model, tokenizer, start: int) -> list[str | None]:
        from graphraft.inference.generation import ConstrainedGenerator

        batch = self.rows[start : start + self.batch_size]
        candidates = self.candidates[start : start + self.batch_size]
        generator = ConstrainedGenerator(model, tokenizer, self.hint)
        tops = generator.generate_many([r["question"] for r in batch], candidates, self.num_beams)
        return [top[0].cypher if top else None for top in tops]

    def __call__(self, model, tokenizer) -> dict[str, float]:
        was_training = model.training
        model.eval()
        hits, by_hop = 0, defaultdict(lambda: [0, 0])
        self.mistakes = []
        for start in range(0, len(self.rows), self.batch_size):
            batch = self.rows[start : start + self.batch_size]
            written = self._write(model, tokenizer, start)
            for row, query in zip(batch, written):
                ok = query == self.targets[row["qid"]]
                if not ok:
                    self.mistakes.append((row["question"], self.targets[row["qid"]], query))
                hits += ok
                by_hop[row.get("hops", 0)][0] += ok
                by_hop[row.get("hops", 0)][1] += 1
        if was_training:
            model.train()
        result = {"exact_match": hits / len(self.rows) if self.rows else 0.0}
        result.update({f"exact_match_{h}hop": v[0] / v[1] for h, v in sorted(by_hop.items())})
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
    """Train an L1 or L2 adapter as configured; returns the summary also saved beside it."""
    import torch
    from transformers import TrainerCallback

    from graphraft.graph import open_store

    started = time.perf_counter()
    torch.manual_seed(config.seed)
    rows = read_synthesis(config.data)
    train_rows = stable_sample(
        [r for r in rows if r.get("split") != "validation"], config.max_train_examples, config.seed
    )
    val_rows = stable_sample(
        [r for r in rows if r.get("split") == "validation"], config.validation_examples, config.seed
    )
    if progress_callback:
        progress_callback(
            {
                "note": f"{len(train_rows):,} training and {len(val_rows):,} validation questions; "
                "building the examples"
                + (" (L1 writes its query for each first)" if config.task == "l2" and config.l1_adapter else "")
            }
        )
    model, tokenizer = load_base(config, settings.home)
    store = open_store(settings, config.graph)
    hint = schema_hint(store) if config.schema_hints else None
    targets = choose_targets(rows)
    if config.task == "l1":
        train_examples = l1_examples(tokenizer, train_rows, targets, hint)
        val_examples = l1_examples(tokenizer, val_rows[:200], targets, hint)
        judge = ExactMatch(store, val_rows, targets, config.max_hops, config.eval_batch_size, hint)
    else:
        l1_top = L1TopQueries(config, settings.home, store) if config.l1_adapter else None
        train_l2 = l2_rows(store, train_rows, config, tokenizer, l1_top)
        val_l2 = l2_rows(store, val_rows[:200], config, tokenizer, l1_top)
        l1_top = None  # frees L1 before training
        train_examples = [
            tokenize_example(tokenizer, l2_messages(r["question"], r["evidence"]), r["target"]) for r in train_l2
        ]
        val_examples = [
            tokenize_example(tokenizer, l2_messages(r["question"], r["evidence"]), r["target"]) for r in val_l2
        ]
        judge = None
    train_examples = [e for e in train_examples if len(e["input_ids"]) <= config.max_length]
    val_examples = [e for e in val_examples if len(e["input_ids"]) <= config.max_length]

    output_dir = Path(config.output_dir)
    checkpoints = output_dir / "checkpoints"
    history: list[dict[str, Any]] = []

    class EpochReport(TrainerCallback):
        def on_evaluate(self, args, state, control, metrics=None, **kwargs):
            entry = {"epoch": state.epoch, "eval_loss": (metrics or {}).get("eval_loss")}
            if judge is not None:
                entry.update(judge(kwargs["model"], tokenizer))
            history.append(entry)
            if progress_callback:
                progress_callback(entry)

        def on_log(self, args, state, control, logs=None, **kwargs):
            if progress_callback and logs and "loss" in logs:
                progress_callback({"step": state.global_step, "of": state.max_steps, "loss": logs["loss"]})

    trainer = make_trainer(config, model, tokenizer, train_examples, val_examples, checkpoints, [EpochReport()])
    if progress_callback:  # our progress lines replace the trainer's printed log dicts
        from transformers.trainer_callback import PrinterCallback

        trainer.remove_callback(PrinterCallback)
    has_checkpoint = checkpoints.exists() and any(checkpoints.glob("checkpoint-*"))
    result = trainer.train(resume_from_checkpoint=True if resume and has_checkpoint else None)
    adapter_dir = output_dir / "adapter"
    trainer.model.save_pretrained(adapter_dir)
    tokenizer.save_pretrained(adapter_dir)
    write_metadata(
        adapter_dir,
        config.task,
        config.base_model,
        schema_hints=config.schema_hints,
        graph=config.graph,
        trained_examples=len(train_examples),
        **(
            {
                "evidence_tokens": config.evidence_tokens,
                "queries": config.l2_queries,
                "evidence_details": config.evidence_details,
            }
            if config.task == "l2"
            else {}
        ),
    )
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
    (output_dir / "summary.json").write_text(json.dumps(summary, indent=2))
    store.close()
    return summary


def config_digest(config: TrainConfig) -> str:
    """Identifies the settings an adapter was trained with (to reuse it only when they match)."""
    return hashlib.sha1(config.model_dump_json().encode()).hexdigest()[:16]
