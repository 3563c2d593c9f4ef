"""Exact-query match of L1's most likely candidate query on a MetaQA validation sample
(equal shares of 1/2/3-hop questions; targets as in training: graphraft/training/targets.py).

    python benchmarks/l1_exact_match.py --config training/l1_cpu.yaml [--questions 500] [--beams 5] [--no-adapter]
        [--by-wording 10] [--containing TEXT]

--by-wording N prints the N question wordings (mentions masked) with the lowest exact match among
those asked at least 5 times in the sample: where L1 is wrong on a whole wording, not a question.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path

from graphraft.config import load_settings
from graphraft.graph import open_store
from graphraft.inference.adapters import load_adapter
from graphraft.training.base_model import load_base
from graphraft.training.config import TrainConfig
from graphraft.training.examples import read_synthesis, stable_sample
from graphraft.training.targets import choose_targets, question_template
from graphraft.training.trainer import ExactMatch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=Path("training/l1_cpu.yaml"))
    parser.add_argument("--adapter", type=Path, help="Default: OUTPUT_DIR/adapter from the config.")
    parser.add_argument("--questions", type=int, default=500)
    parser.add_argument("--no-adapter", action="store_true", help="The base model under the constraint.")
    parser.add_argument(
        "--beams",
        type=int,
        default=1,
        help="1: the most likely query (exact search); more: as `ask` ranks them, scoring the first.",
    )
    parser.add_argument("--show-mistakes", type=int, default=0, help="Print this many wrong queries.")
    parser.add_argument("--containing", help="Only the validation questions whose text contains this.")
    parser.add_argument("--by-wording", type=int, default=0, help="Print the N wordings L1 gets least right.")
    args = parser.parse_args()
    config = TrainConfig.from_yaml(args.config)
    settings = load_settings(graph=config.graph)
    rows = read_synthesis(config.data)
    targets = choose_targets(rows)
    validation = [r for r in rows if r.split == "validation" and (args.containing or "") in r.question]
    validation = stable_sample(validation, args.questions, config.seed)
    model, tokenizer = load_base(config, settings.home)
    if not args.no_adapter:
        model = load_adapter(model, args.adapter or Path(config.output_dir) / "adapter", "l1", config.base_model)
    with open_store(settings, config.graph) as store:
        started = time.perf_counter()
        judge = ExactMatch(store, validation, targets, config.max_hops, config.eval_batch_size, num_beams=args.beams)
        prepared = time.perf_counter() - started
        result = judge(model, tokenizer)
    elapsed = time.perf_counter() - started
    who = "base model" if args.no_adapter else "L1 adapter"
    how = "the most likely query" if args.beams == 1 else f"the top of {args.beams} queries"
    print(f"{who}, {len(validation)} validation questions, constrained {how}:")
    for key, value in result.items():
        print(f"  {key:<18} {value * 100:6.2f} %")
    print(f"  {elapsed:.0f}s ({prepared:.0f}s enumerating candidates)")
    for question, target, written in judge.mistakes[: args.show_mistakes]:
        print(f"- {question}\n    target:  {target}\n    written: {written}")
    if args.by_wording:
        wording = {row.question: question_template(row.question, row.mentions) for row in validation}
        asked = Counter(wording.values())
        wrong = Counter(wording[question] for question, _, _ in judge.mistakes)
        worst = sorted((w for w in asked if asked[w] >= 5), key=lambda w: (-(wrong[w] / asked[w]), -asked[w], w))
        print(f"the {args.by_wording} wordings (of {sum(n >= 5 for n in asked.values())} asked 5+ times) least right:")
        for w in worst[: args.by_wording]:
            print(f"  {100 * (1 - wrong[w] / asked[w]):6.1f} %  of {asked[w]:>3}  {w}")


if __name__ == "__main__":
    main()
