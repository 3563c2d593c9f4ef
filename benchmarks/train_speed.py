"""Training throughput: training examples per minute of L1 LoRA steps in three batch layouts,
in one process on the same examples with the same trainer: padded batches (the release
before padding-free), padding-free batches, and shared-prefix batches (padding-free with the
system prompt fed once a batch, graphraft/training/packing.py). The layouts take turns over several
rounds and the median is reported.

    python benchmarks/train_speed.py --config training/l1_cpu.yaml [--steps 12] [--rounds 2]
    python benchmarks/train_speed.py --config graphraft/data/demo/train_l1.yaml \\
        --data outputs/synthesis/demo-all.jsonl
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from transformers import TrainerCallback

from graphraft.config import load_settings
from graphraft.training.base_model import load_base
from graphraft.training.config import TrainConfig
from graphraft.training.examples import l1_examples, read_synthesis, stable_sample
from graphraft.training.targets import choose_targets
from graphraft.training.trainer import make_trainer


class StepClock(TrainerCallback):
    """Seconds of each optimizer step after the first (which pays one-off costs)."""

    def __init__(self):
        self.seconds: list[float] = []
        self._started = None

    def on_step_begin(self, args, state, control, **kwargs):
        self._started = time.perf_counter()

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step > 1:
            self.seconds.append(time.perf_counter() - self._started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=Path("training/l1_cpu.yaml"))
    parser.add_argument("--data", type=Path, nargs="*", help="Synthesis files (default: the config's).")
    parser.add_argument("--steps", type=int, default=12, help="Optimizer steps per measurement.")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    overrides = {"data": [str(p) for p in args.data]} if args.data else {}
    config = TrainConfig.from_yaml(args.config, **overrides)
    settings = load_settings(graph=config.graph)
    rows = read_synthesis(config.data)
    targets = choose_targets(rows)
    count = args.steps * config.batch_size
    train_rows = stable_sample([r for r in rows if r.split != "validation"], count, config.seed)
    tokenizer = load_base(config, settings.home)[1]
    examples = [e for e in l1_examples(tokenizer, train_rows, targets) if len(e["input_ids"]) <= config.max_length]
    tokens = sum(len(e["input_ids"]) for e in examples)
    print(
        f"{len(examples)} L1 examples from {', '.join(map(str, config.data))}, batch {config.batch_size}, "
        f"{tokens / len(examples):.0f} tokens an example, LoRA on the top {config.lora.top_layers} layers"
    )
    layouts = {"padded": {}, "padding-free": {"padding_free": True}, "shared-prefix": {"shared_prefix": True}}
    results: dict[str, list[float]] = {name: [] for name in layouts}
    for round_ in range(args.rounds):
        order = list(layouts) if round_ % 2 == 0 else list(reversed(layouts))
        for name in order:
            update = {"padding_free": False, "shared_prefix": False, "epochs": 1.0, **layouts[name]}
            variant = config.model_copy(update=update)
            model, _ = load_base(variant, settings.home)
            clock = StepClock()
            with tempfile.TemporaryDirectory() as folder:
                trainer = make_trainer(
                    variant,
                    model,
                    tokenizer,
                    examples,
                    examples[:8],
                    Path(folder),
                    [clock],
                    eval_strategy="no",
                    save_strategy="no",
                    logging_steps=10_000,
                )
                trainer.train()
            per_step = statistics.median(clock.seconds)
            results[name].append(per_step)
            print(
                f"round {round_ + 1}, {name:<13} {per_step:6.2f} s a step, "
                f"{config.batch_size / per_step * 60:6.1f} examples a minute"
            )
    padded = statistics.median(results["padded"])
    print("\nmedian:")
    for name, seconds in results.items():
        step = statistics.median(seconds)
        print(
            f"  {name:<13} {step:6.2f} s a step, {config.batch_size / step * 60:6.1f} examples a minute, "
            f"{padded / step:.2f}x padded"
        )


if __name__ == "__main__":
    main()
