"""Does the question's likelihood given each query tell L1's right query apart (issue 28, item 4)?

L1 scores a query by log P(query | question); a query that explains only part of the question
("the films written by [X] were released in which years" -> X's films) scores well there, as
nothing in the forward direction makes a query account for every word. A reverse model scores
log P(question | query): what must be said to ask for this query. Reranking by the two together
is the noisy-channel or reconstruction reranking of semantic parsing (Yin & Neubig, 2019).

The reverse model is a LoRA adapter on the same base model, trained on the same synthesis rows
with prompt and completion swapped (the Cypher in, the question out): with no real pair, the
questions generated from the graph. Nothing here is used by `ask`.

    python benchmarks/reverse_rerank.py train --data outputs/cold_start-1pct/generated-3000.jsonl \
        --output outputs/rerank/reverse-generated [--examples 1500]
    python benchmarks/reverse_rerank.py score --adapter outputs/rerank/reverse-generated/adapter \
        --dump outputs/rerank/val-1pct.jsonl [--weights 0,0.25,0.5,1,2,1000]

``score`` reads a ``benchmarks/wording_rerank.py --dump`` file (each question's queries with L1's
score and whether its first result is right) and prints Hit@1 per hop for each weight: the chosen
query is the best L1 score + weight x reverse score among those that return something (as `ask`
takes the first that returns something). Pick a weight on a training-question dump, read it on
validation."""

from __future__ import annotations

import argparse
import collections
import json
import time
from pathlib import Path

REVERSE_SYSTEM = "Write the question that this Cypher query answers."


def reverse_messages(cypher: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": REVERSE_SYSTEM}, {"role": "user", "content": cypher}]


def train(args) -> None:
    from graphraft.config import load_settings
    from graphraft.training.base_model import load_base
    from graphraft.training.config import TrainConfig
    from graphraft.training.examples import mixed_sample, read_sources, stable_sample, tokenize_example
    from graphraft.training.targets import choose_targets
    from graphraft.training.trainer import make_trainer

    settings = load_settings()
    config = TrainConfig.from_yaml(args.config, data=args.data, output_dir=str(args.output))
    sources = read_sources(config.data)
    rows = [row for _, part in sources for row in part]
    targets = choose_targets(rows)
    train_rows = mixed_sample(
        [(s, [r for r in part if r.split != "validation"]) for s, part in sources], args.examples, config.seed
    )
    val_rows = stable_sample([r for r in rows if r.split == "validation"], 100, config.seed)
    model, tokenizer = load_base(config, settings.home)

    def examples(part):
        made = [tokenize_example(tokenizer, reverse_messages(targets[r.qid]), r.question) for r in part]
        return [e for e in made if len(e["input_ids"]) <= config.max_length]

    started = time.perf_counter()
    trainer = make_trainer(
        config, model, tokenizer, examples(train_rows), examples(val_rows), args.output / "checkpoints"
    )
    trainer.train()
    trainer.model.save_pretrained(args.output / "adapter")
    tokenizer.save_pretrained(args.output / "adapter")
    minutes = (time.perf_counter() - started) / 60
    (args.output / "summary.json").write_text(
        json.dumps({"examples": len(train_rows), "data": [str(d) for d in args.data], "minutes": round(minutes, 1)})
    )
    print(f"reverse adapter: {args.output / 'adapter'} ({len(train_rows)} examples, {minutes:.1f} min)")


class ReverseScorer:
    """log P(question | query) under the reverse adapter, summed over the question's tokens."""

    def __init__(self, adapter: Path):
        from peft import PeftModel

        from graphraft.config import load_settings
        from graphraft.models import load_causal_lm

        settings = load_settings()
        base, self.tokenizer = load_causal_lm(settings.base_model, settings.home, dtype=settings.dtype)
        self.model = PeftModel.from_pretrained(base, str(adapter))
        self.model.eval()

    def __call__(self, question: str, cyphers: list[str]) -> list[float]:
        import torch

        from graphraft.inference.decoding.trie import candidate_sequences
        from graphraft.inference.prompts import prompt_ids
        from graphraft.models import pad_token_id

        target = list(candidate_sequences(self.tokenizer, [question])[0])
        prompts = [prompt_ids(self.tokenizer, reverse_messages(c)) for c in cyphers]
        width = max(len(p) for p in prompts) + len(target)
        pad = pad_token_id(self.tokenizer)
        ids = torch.full((len(prompts), width), pad, dtype=torch.long)
        mask = torch.zeros((len(prompts), width), dtype=torch.long)
        for i, p in enumerate(prompts):
            seq = p + target
            ids[i, : len(seq)] = torch.tensor(seq)
            mask[i, : len(seq)] = 1
        with torch.no_grad():
            logits = self.model(input_ids=ids, attention_mask=mask).logits.float()
        logprobs = torch.log_softmax(logits, dim=-1)
        scores = []
        for i, p in enumerate(prompts):
            positions = torch.arange(len(p) - 1, len(p) - 1 + len(target))
            scores.append(float(logprobs[i, positions, torch.tensor(target)].sum()))
        return scores


def score(args) -> None:
    weights = [float(w) for w in args.weights.split(",")]
    scorer = ReverseScorer(args.adapter)
    rows = [json.loads(line) for line in args.dump.open(encoding="utf-8") if line.strip()]
    hits = {w: collections.Counter() for w in weights}
    totals, anywhere = collections.Counter(), collections.Counter()
    started = time.perf_counter()
    out = args.scored.open("w", encoding="utf-8") if args.scored else None
    for n, row in enumerate(rows, 1):
        queries = row["queries"]
        totals[row["hops"]] += 1
        anywhere[row["hops"]] += any(q["right"] for q in queries)
        reverse = scorer(row["question"], [q["cypher"] for q in queries])
        returning = [k for k, q in enumerate(queries) if q["rows"]] or list(range(len(queries)))
        for w in weights:
            best = max(returning, key=lambda k: queries[k]["score"] + w * reverse[k])
            hits[w][row["hops"]] += bool(queries[best]["right"])
        if out:
            for q, r in zip(queries, reverse):
                q["reverse"] = r
            out.write(json.dumps(row) + "\n")
        if n % 50 == 0:
            print(f"{n}/{len(rows)} questions, {time.perf_counter() - started:.0f}s", flush=True)
    hops = sorted(totals)
    print(f"\n{args.dump}, {sum(totals.values())} questions, reverse {args.adapter}")
    print("| weight | Hit@1 % all | " + " | ".join(f"{h}-hop" for h in hops) + " |")
    print("| --- | ---: | " + " | ".join("---:" for _ in hops) + " |")
    for name, counts in [*((f"{w:g}", hits[w]) for w in weights), ("any", anywhere)]:
        per = " | ".join(f"{100 * counts[h] / totals[h]:.1f}" for h in hops)
        print(f"| {name} | {100 * sum(counts.values()) / sum(totals.values()):.1f} | {per} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train", help="Train the reverse adapter (query -> question).")
    t.add_argument("--data", type=Path, nargs="+", required=True, help="Synthesis files.")
    t.add_argument("--output", type=Path, required=True)
    t.add_argument("--examples", type=int, default=1500)
    t.add_argument("--config", type=Path, default=Path("training/l1_cpu.yaml"), help="Training settings.")
    s = sub.add_parser("score", help="Rerank a wording_rerank.py dump with the reverse adapter.")
    s.add_argument("--adapter", type=Path, required=True)
    s.add_argument("--dump", type=Path, required=True)
    s.add_argument("--weights", default="0,0.1,0.25,0.5,1,2,1000")
    s.add_argument("--scored", type=Path, help="Write the dump again with each query's reverse score.")
    args = parser.parse_args()
    train(args) if args.command == "train" else score(args)


if __name__ == "__main__":
    main()
