"""Fit synthesis's work units (``reproduce.WORK``) to the time its searches take: each question
of a question file with gold rows is synthesized as ``graphraft synthesize`` does, one at a time,
with no work budget and a cap in seconds; each search's counts by kind (``Reproduction.parts``)
and its seconds are recorded, and non-negative weights (microseconds a thing) are fitted to the
seconds by least squares. Prints the fit, today's weights' prediction against the seconds (the
correlation, and the worst searches it under-counts), and the weights in units.

    python benchmarks/work_fit.py --graph northwind \
        --questions outputs/text2cypher/northwind/questions.jsonl --split train --limit 60

Searches the cap cuts are fitted too (their counts are what they did in those seconds). Run it
alone: the seconds are the machine's, the weights' ratios are what carries to other machines.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from graphraft.config import load_settings
from graphraft.graph import open_store
from graphraft.graph.loaders.questions import read_question_file
from graphraft.synthesis import reproduce as search_module
from graphraft.synthesis import synthesizer as synthesis_module
from graphraft.synthesis.synthesizer import SynthesisConfig, synthesizer_for


def nnls(a: np.ndarray, b: np.ndarray, sweeps: int = 5000) -> np.ndarray:
    """Non-negative least squares by coordinate descent (numpy has none; scipy is not a
    dependency): ``argmin |a x - b|`` with ``x >= 0``."""
    x = np.zeros(a.shape[1])
    gram, target = a.T @ a, a.T @ b
    for _ in range(sweeps):
        before = x.copy()
        for j in range(len(x)):
            if gram[j, j] > 0:
                x[j] = max(0.0, x[j] + (target[j] - gram[j] @ x) / gram[j, j])
        if np.abs(x - before).max() <= 1e-12 * max(1.0, np.abs(x).max()):
            break
    return x


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graph", required=True)
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--split", default="train")
    parser.add_argument("--limit", type=int, default=60, help="Questions, the file's first of the split.")
    parser.add_argument("--every", type=int, default=1, help="Take every n-th question of the split.")
    parser.add_argument("--cap-s", type=float, default=30.0, help="Seconds a search may take.")
    parser.add_argument("--dump", type=Path, help="Write each search's seconds and counts here (JSON lines).")
    args = parser.parse_args()

    items = [i for i in read_question_file(args.questions) if i.split == args.split and "rows" in (i.extra or {})]
    items = items[:: args.every][: args.limit]
    searches: list[tuple[float, dict[str, int], str]] = []
    original = synthesis_module.reproduce

    def timed(*positional, **named):
        named["budget"] = None  # the work is what is measured: the cap in seconds alone stops it
        started = time.perf_counter()
        found = original(*positional, **named)
        searches.append((time.perf_counter() - started, dict(found.parts), current))
        return found

    synthesis_module.reproduce = timed
    settings = load_settings()
    config = SynthesisConfig(language_budget_s=args.cap_s, workers=1)
    with open_store(settings, args.graph) as store:
        synthesizer = synthesizer_for(store, settings, config)
        for number, item in enumerate(items, 1):
            current = item.question
            synthesizer.row_for(item)
            print(f"{number}/{len(items)} {searches[-1][0] if searches else 0:6.2f}s {item.question[:70]}", flush=True)
    if args.dump:
        args.dump.write_text("".join(json.dumps({"s": s, "parts": p, "q": q}) + "\n" for s, p, q in searches))

    kinds = list(search_module.WORK)
    a = np.array([[parts.get(k, 0) for k in kinds] for _, parts, _ in searches], dtype=float)
    seconds = np.array([s for s, _, _ in searches])
    used = a.any(axis=0)
    # scaled so that each kind's column weighs alike in the descent, then scaled back
    scale = np.where(used, a.max(axis=0, initial=0) + 1e-12, 1.0)
    fitted = nnls(a / scale, seconds) / scale * 1e6  # microseconds a thing
    today = a @ np.array([search_module.WORK[k] for k in kinds])
    print(f"\n{len(searches)} searches of {len(items)} questions, {seconds.sum():.1f} s in all")
    print(f"{'kind':<12}{'things':>14}{'fitted µs':>12}{'share of time':>15}{'units today':>13}")
    for j, kind in enumerate(kinds):
        share = (a[:, j] * fitted[j] / 1e6).sum() / seconds.sum()
        print(f"{kind:<12}{int(a[:, j].sum()):>14,}{fitted[j]:>12.4f}{share:>15.1%}{search_module.WORK[kind]:>13g}")
    predicted = a @ fitted / 1e6
    print(f"fit: correlation with the seconds {np.corrcoef(predicted, seconds)[0, 1]:.3f}")
    print(f"today's units: correlation with the seconds {np.corrcoef(today, seconds)[0, 1]:.3f}")
    # in units: the fit's microseconds over those of a value read (its weight today, 15 units)
    if fitted[kinds.index("cell")] > 0:
        unit = fitted[kinds.index("cell")] / search_module.WORK["cell"]
        print(
            "fitted, in today's units (a value read weighs 15): "
            + ", ".join(f"{k} {fitted[j] / unit:.4g}" for j, k in enumerate(kinds))
            + f"; a unit {unit:.3f} µs here"
        )
    ratio = today / np.maximum(seconds, 1e-6)
    print("the searches today's units count least per second (slowest first of those):")
    for index in sorted(range(len(searches)), key=lambda i: ratio[i])[:5]:
        print(f"  {seconds[index]:6.2f}s {today[index]:>14,.0f} units  {searches[index][2][:80]}")


if __name__ == "__main__":
    main()
