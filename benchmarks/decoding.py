"""Constrained decoding overhead and trie build rate, measured in one run.

- time per generated token with the trie processor / without it: the bundled SmolLM2-135M,
  5 beams, 1,000 and 10,000 candidate queries (goal: <= 1.10);
- trie build rate: candidate queries per second, tokenisation included (goal: >= 50,000/s).

    python benchmarks/decoding.py [--candidates 1000,10000] [--beams 5] [--repeats 3]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import torch

from graphraft.config import load_settings
from graphraft.graph.loaders.metaqa import RELATIONS, default_metaqa_dir, read_kb
from graphraft.inference.decoding.processor import TrieLogitsProcessor
from graphraft.inference.decoding.trie import CandidateIndex
from graphraft.inference.prompts import l1_messages, prompt_ids
from graphraft.models import load_causal_lm
from graphraft.synthesis.patterns import AnchorRef, Pattern, Step, render


def candidate_queries(count: int, seed: int = 0) -> list[str]:
    """Rendered 1-3 hop MetaQA-shaped queries around real MetaQA names (synthetic if absent)."""
    rng = random.Random(seed)
    root = default_metaqa_dir()
    names = (
        [n.properties["name"] for n in read_kb(root / "kb.txt")[0]] if root else [f"Name {i}" for i in range(50_000)]
    )
    types = [t for t, _ in RELATIONS.values()]
    queries: set[str] = set()
    while len(queries) < count:
        name = rng.choice(names)
        hops = rng.choice((1, 2, 3))
        steps = tuple(
            Step(rng.choice(types), i % 2 == 0, (rng.choice(("Movie", "Person", "Genre")),)) for i in range(hops)
        )
        queries.add(render(Pattern(AnchorRef(f"movie:{name}", ("Movie",)), steps, hops)))
    return sorted(queries)


def time_generation(model, input_ids, beams, processor=None, steps=None):
    kwargs = dict(
        num_beams=beams,
        num_return_sequences=beams,
        do_sample=False,
        pad_token_id=model.config.eos_token_id,
        attention_mask=torch.ones_like(input_ids),
    )
    if processor is not None:
        kwargs.update(logits_processor=[processor], max_new_tokens=steps, eos_token_id=processor.eos_token_id)
    else:
        kwargs.update(max_new_tokens=steps, min_new_tokens=steps)
    started = time.perf_counter()
    with torch.no_grad():
        output = model.generate(input_ids=input_ids, **kwargs)
    elapsed = time.perf_counter() - started
    return elapsed, output.shape[1] - input_ids.shape[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", default="1000,10000")
    parser.add_argument("--beams", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--build", type=int, default=50_000, help="Candidates for the build-rate figure.")
    args = parser.parse_args()
    settings = load_settings()
    model, tokenizer = load_causal_lm("bundled", settings.home)
    torch.set_num_threads(max(1, torch.get_num_threads()))

    queries = candidate_queries(args.build)
    builds = []
    for _ in range(args.repeats + 1):
        started = time.perf_counter()
        CandidateIndex(tokenizer, queries)
        builds.append(time.perf_counter() - started)
    cold, warm = builds[0], statistics.median(builds[1:])
    print(
        f"trie build, tokenisation included: {len(queries):,} candidates in {cold:.2f}s the first time "
        f"({len(queries) / cold:,.0f}/s), {warm:.2f}s median after ({len(queries) / warm:,.0f}/s)"
    )

    prompt = torch.tensor([prompt_ids(tokenizer, l1_messages("which movies share a director with [Kismet]"))])
    for count in (int(c) for c in args.candidates.split(",")):
        index = CandidateIndex(tokenizer, queries[:count])
        with_times, without_times = [], []
        for _ in range(args.repeats):
            processor = TrieLogitsProcessor(index.trie, prompt.shape[1], index.eos_token_id, num_beams=args.beams)
            elapsed, steps = time_generation(model, prompt, args.beams, processor, index.trie.max_length)
            with_times.append(elapsed / steps)
            # the same number of steps without the processor
            elapsed_free, steps_free = time_generation(model, prompt, args.beams, None, steps)
            without_times.append(elapsed_free / steps_free)
        with_t, without_t = min(with_times), min(without_times)
        print(
            f"{count:>6,} candidates, {args.beams} beams, {steps} tokens: {with_t * 1000:6.1f} ms/token with the "
            f"processor, {without_t * 1000:6.1f} ms/token without; ratio {with_t / without_t:.3f}"
        )


if __name__ == "__main__":
    main()
