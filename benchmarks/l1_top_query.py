"""L1's top query for many questions, as L2's evidence building and training's per-epoch
validation need it: the previous release's batched greedy decoding (Hugging Face generate,
16 questions a batch, one forward per generated token; kept here as the reference) against
the exact search with m = 1, one question at a time and a group of questions searched
together in each forward call (`graphraft.inference.generation.top_queries`, --groups), in one process, on
the same questions and candidates.

    python benchmarks/l1_top_query.py --config graphraft/data/demo/train_l1.yaml \\
        --data outputs/synthesis/demo-all.jsonl --adapter outputs/training/l1-demo/adapter
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

from graphraft.config import load_settings
from graphraft.graph import open_store
from graphraft.inference.adapters import load_adapter
from graphraft.inference.decoding.processor import TrieLogitsProcessor
from graphraft.inference.decoding.trie import CandidateIndex
from graphraft.inference.generation import top_queries
from graphraft.inference.prompts import l1_messages, prompt_ids
from graphraft.synthesis.enumeration import PatternEnumerator
from graphraft.training.base_model import load_base
from graphraft.training.config import TrainConfig
from graphraft.training.examples import read_synthesis, stable_sample


@torch.no_grad()
def greedy_batch(model, tokenizer, questions, candidate_lists, schema_hint=None):
    """The previous release's `graphraft.inference.generation.greedy_batch` (left-padded batch, one trie each)."""
    indexes = [CandidateIndex(tokenizer, list(dict.fromkeys(c))) if c else None for c in candidate_lists]
    live = [i for i, index in enumerate(indexes) if index is not None]
    results = [None] * len(questions)
    if not live:
        return results
    prompts = [prompt_ids(tokenizer, l1_messages(questions[i], schema_hint)) for i in live]
    width = max(len(p) for p in prompts)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    input_ids = torch.tensor([[pad] * (width - len(p)) + p for p in prompts])
    attention = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts])
    tries = [indexes[i].trie for i in live]
    processor = TrieLogitsProcessor(tries, width, tokenizer.eos_token_id, num_beams=1)
    output = model.generate(
        input_ids=input_ids,
        attention_mask=attention,
        logits_processor=[processor],
        max_new_tokens=max(t.max_length for t in tries),
        do_sample=False,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=pad,
    )
    for row, i in enumerate(live):
        results[i] = indexes[i].query_for(output[row, width:].tolist(), pad_token_id=pad)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=Path("training/l1_cpu.yaml"))
    parser.add_argument("--data", type=Path, nargs="*")
    parser.add_argument("--adapter", type=Path, help="Default: OUTPUT_DIR/adapter from the config.")
    parser.add_argument("--questions", type=int, default=64)
    parser.add_argument(
        "--groups", type=int, nargs="*", default=[1, 8, 16], help="Questions searched together in each forward call."
    )
    args = parser.parse_args()
    config = TrainConfig.from_yaml(args.config, **({"data": [str(p) for p in args.data]} if args.data else {}))
    settings = load_settings(graph=config.graph)
    rows = stable_sample(read_synthesis(config.data), args.questions, config.seed)
    model, tokenizer = load_base(config, settings.home)
    model = load_adapter(model, args.adapter or Path(config.output_dir) / "adapter", "l1", config.base_model)
    with open_store(settings, config.graph) as store:
        enumerator = PatternEnumerator(store)
        candidates = [list(enumerator.all_patterns(row.refs, config.max_hops).candidates) for row in rows]
    questions = [row.question for row in rows]
    top_queries(model, tokenizer, questions[:2], candidates[:2])  # warm-up, not counted
    started = time.perf_counter()
    old = []
    for start in range(0, len(rows), 16):
        old += greedy_batch(model, tokenizer, questions[start : start + 16], candidates[start : start + 16])
    before = time.perf_counter() - started
    timings, found = {}, {}
    for group in args.groups:
        started = time.perf_counter()
        found[group] = top_queries(model, tokenizer, questions, candidates, group=group)
        timings[group] = time.perf_counter() - started
    print(f"{len(rows)} questions ({sum(map(len, candidates)) / len(rows):.0f} candidates each on average)")
    print(f"batched greedy (before):        {before:6.1f} s, {before / len(rows):.3f} s a question")
    for group in args.groups:
        after = timings[group]
        same = sum(a == b for a, b in zip(old, found[group]))
        print(
            f"exact top-1, {group:>2} a call (after): {after:6.1f} s, {after / len(rows):.3f} s a question; "
            f"{before / after:.1f}x faster; same query as greedy {same}/{len(rows)}"
        )
    first = args.groups[0]
    assert all(found[g] == found[first] for g in args.groups), "grouping changed a result"
    print(
        "every grouping took the same queries (greedy takes the likeliest token at each step; the exact "
        "search the likeliest whole query)"
    )


if __name__ == "__main__":
    main()
