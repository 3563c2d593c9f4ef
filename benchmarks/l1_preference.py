"""Preference tuning of a trained L1 adapter on its own wrong queries (DPO through TRL's
DPOTrainer): a reading for issue 27, not a stage of the product.

L1 after supervised training ranks the pair's target first on some training questions and a
query with another result first on others. This takes, for each training question of a
`graphraft eval --split train` run of that adapter (its questions.jsonl, method no-l2, with
each query's result judged against the gold result), the pair's target as the chosen reply and
up to ``--per-question`` of L1's highest-scored queries whose rows are not the gold result as
the rejected ones, and trains the adapter further on them with DPO (the reference is the
adapter as trained; TRL copies it). Prompts and replies are tokenised as training tokenises them
(DESIGN.md invariant 4: the prompt to the assistant's turn, the reply exactly a trie path), so
the preference is over the sequences constrained decoding scores. The adapter is written beside
the supervised one's files (its metadata, schema line) to ``--out/adapter``; evaluate it with
`graphraft eval ... --l1-adapter OUT/adapter` and compare with the supervised adapter's eval on
the same validation questions.

    python benchmarks/l1_preference.py --config training/l1_language_movies_cpu.yaml \\
        --sft outputs/training/l1-language-movies/adapter \\
        --negatives outputs/eval/movies-sft-train/questions.jsonl --out outputs/training/l1-movies-dpo
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path


def preference_pairs(rows, targets, outcomes: dict[str, dict], per_question: int) -> list[tuple[str, str, str]]:
    """(question, chosen, rejected) triples: each training row's target against L1's
    highest-scored queries of that question whose rows are not the gold result."""
    triples = []
    for row in rows:
        outcome, target = outcomes.get(row.qid), targets.get(row.qid)
        if outcome is None or target is None:
            continue
        wrong = [q for q in outcome.get("queries", []) if not q["right"] and q.get("cypher") not in (None, target)]
        wrong.sort(key=lambda q: -q["score"])
        triples += [(row.question, target, q["cypher"]) for q in wrong[:per_question]]
    return triples


def read_outcomes(path: Path, method: str) -> dict[str, dict]:
    outcomes = {}
    for line in path.read_text().splitlines():
        record = json.loads(line)
        if record.get("method") == method and record.get("execution") is not None:
            outcomes[record["qid"]] = record
    return outcomes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", type=Path, required=True, help="the supervised adapter's training config")
    parser.add_argument("--sft", type=Path, required=True, help="the supervised adapter's folder")
    parser.add_argument("--negatives", type=Path, required=True, help="questions.jsonl of an eval on --split train")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--method", default="no-l2")
    parser.add_argument("--per-question", type=int, default=3)
    parser.add_argument("--beta", type=float, default=0.1)
    parser.add_argument("--learning-rate", type=float, default=5e-5)
    parser.add_argument("--epochs", type=float, default=1.0)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--sft-weight", type=float, default=1.0, help="weight of the chosen replies' own loss")
    args = parser.parse_args()

    import torch
    from datasets import Dataset
    from peft import PeftModel
    from trl import DPOConfig, DPOTrainer

    from graphraft.config import load_settings
    from graphraft.graph import open_store
    from graphraft.inference.adapters import l1_exemplars, l1_schema_hint
    from graphraft.inference.decoding.trie import candidate_sequences
    from graphraft.inference.prompts import l1_messages, prompt_ids
    from graphraft.training.base_model import load_base
    from graphraft.training.config import TrainConfig
    from graphraft.training.examples import read_sources
    from graphraft.training.targets import choose_targets

    started = time.perf_counter()
    config = TrainConfig.from_yaml(args.config, task="l1")
    settings = load_settings(graph=config.graph)
    sources = read_sources(config.data, config.graph)
    rows = [row for _, part in sources for row in part]
    targets = choose_targets(rows)
    train_rows = [row for row in rows if row.split != "validation"]
    triples = preference_pairs(train_rows, targets, read_outcomes(args.negatives, args.method), args.per_question)
    if not triples:
        raise SystemExit(f"{args.negatives}: no training question with a wrong query of L1's (method {args.method})")
    store = open_store(settings, config.graph)
    try:
        hint = l1_schema_hint(args.sft, store)
        if l1_exemplars(args.sft, store, settings.home) is not None:
            raise SystemExit(f"{args.sft}: an adapter that reads solved questions in its prompt is not handled here")
    finally:
        store.close()
    base, tokenizer = load_base(config, settings.home)
    model = PeftModel.from_pretrained(base, str(args.sft), is_trainable=True)

    def example(question: str, chosen: str, rejected: str) -> dict:
        prompt = prompt_ids(tokenizer, l1_messages(question, hint))
        chosen_ids, rejected_ids = (list(s) for s in candidate_sequences(tokenizer, [chosen, rejected]))
        return {"prompt_ids": prompt, "chosen_ids": chosen_ids, "rejected_ids": rejected_ids}

    class PreTokenised(DPOTrainer):
        """The examples come tokenised as constrained decoding scores them."""

        def _prepare_dataset(self, dataset, processing_class, args, dataset_name):
            return dataset

    data = Dataset.from_list([example(*t) for t in triples])
    print(
        f"{len(triples)} preference pairs from {len({t[0] for t in triples})} training questions "
        f"({len(train_rows)} training rows)",
        flush=True,
    )
    dpo = DPOConfig(
        output_dir=str(args.out / "checkpoints"),
        num_train_epochs=args.epochs,
        per_device_train_batch_size=args.batch_size,
        learning_rate=args.learning_rate,
        lr_scheduler_type="linear",
        warmup_steps=0,
        beta=args.beta,
        loss_type=["sigmoid", "sft"],
        loss_weights=[1.0, args.sft_weight],
        max_length=None,
        logging_steps=10,
        save_strategy="no",
        report_to=[],
        seed=config.seed,
        use_cpu=not torch.cuda.is_available(),
        gradient_checkpointing=False,
        disable_tqdm=True,
        dataloader_num_workers=0,
    )
    trainer = PreTokenised(model=model, args=dpo, train_dataset=data, processing_class=tokenizer)
    result = trainer.train()
    adapter = args.out / "adapter"
    if adapter.exists():
        shutil.rmtree(adapter)
    shutil.copytree(args.sft, adapter)  # metadata, schema line: the supervised adapter's
    trainer.model.save_pretrained(str(adapter), selected_adapters=["default"])
    logs = [e for e in trainer.state.log_history if "loss" in e or "train_loss" in e]
    summary = {
        "pairs": len(triples),
        "questions": len({t[0] for t in triples}),
        "steps": trainer.state.global_step,
        "train_runtime_s": round(result.metrics.get("train_runtime", 0.0), 1),
        "total_s": round(time.perf_counter() - started, 1),
        "first": logs[0] if logs else None,
        "last": logs[-1] if logs else None,
        "args": {k: str(v) for k, v in vars(args).items()},
    }
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2))
    print(json.dumps(summary, indent=2))
    print(f"adapter: {adapter}")


if __name__ == "__main__":
    main()
