"""Fit synthesis's work units (``reproduce.WORK``) to the time its searches take: each question
of a question file with gold rows is synthesized as ``graphraft synthesize`` does, one at a time,
with no work budget and a cap in seconds. Along each search its counts by kind
(``Reproduction.parts``) are taken with the time every ``--every-s`` seconds; each stretch between
two such marks is one observation (its seconds, and how many things of each kind it did), and
non-negative weights (microseconds a thing) are fitted to the seconds by least squares. Prints
the fit, how well today's weights and the fitted ones predict the stretches' and the searches'
seconds, and the fitted weights in today's units.

    python benchmarks/work_fit.py --graph northwind \
        --questions outputs/text2cypher/northwind/questions.jsonl --split train --every 12 --limit 40

A search runs until the cap (synthesis looks for every query that gives the gold, not the first),
so the stretches, not the searches, give the seconds their spread. Run it alone: the seconds are
the machine's; the weights' ratios are what carries to other machines.
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
    parser.add_argument("--cap-s", type=float, default=10.0, help="Seconds a search may take.")
    parser.add_argument("--every-s", type=float, default=0.25, help="Seconds between two marks of a search.")
    parser.add_argument(
        "--budget", type=int, help="Stop each search at this work too (synthesis's budget), to time it."
    )
    parser.add_argument("--dump", type=Path, help="Write each search's seconds and counts here (JSON lines).")
    args = parser.parse_args()

    items = [i for i in read_question_file(args.questions) if i.split == args.split and "rows" in (i.extra or {})]
    items = items[:: args.every][: args.limit]
    searches: list[tuple[float, dict[str, int], str]] = []
    stretches: list[tuple[float, dict[str, int]]] = []
    original, count = synthesis_module.reproduce, search_module.Reproduction.count
    mark: list = [0.0, {}]  # the last mark's time and counts

    def counted(self, kind: str, things: int = 1) -> None:
        count(self, kind, things)
        now = time.perf_counter()
        if now - mark[0] >= args.every_s:
            stretches.append((now - mark[0], {k: v - mark[1].get(k, 0) for k, v in self.parts.items()}))
            mark[:] = [now, dict(self.parts)]

    def timed(*positional, **named):
        named["budget"] = args.budget  # none: the work is what is measured, the cap in seconds stops it
        started = time.perf_counter()
        mark[:] = [started, {}]
        found = original(*positional, **named)
        now = time.perf_counter()
        stretches.append((now - mark[0], {k: v - mark[1].get(k, 0) for k, v in found.parts.items()}))
        searches.append((now - started, dict(found.parts), current))
        return found

    synthesis_module.reproduce = timed
    search_module.Reproduction.count = counted
    settings = load_settings()
    config = SynthesisConfig(language_budget_s=args.cap_s, workers=1)
    current = ""
    with open_store(settings, args.graph) as store:
        synthesizer = synthesizer_for(store, settings, config)
        for number, item in enumerate(items, 1):
            current = item.question
            synthesizer.row_for(item)
            print(f"{number}/{len(items)} {searches[-1][0] if searches else 0:6.2f}s {item.question[:70]}", flush=True)
    if args.dump:
        args.dump.write_text("".join(json.dumps({"s": s, "parts": p, "q": q}) + "\n" for s, p, q in searches))

    kinds = list(search_module.WORK)
    today_weights = np.array([search_module.WORK[k] for k in kinds])

    def matrix(rows) -> tuple[np.ndarray, np.ndarray]:
        return np.array([[parts.get(k, 0) for k in kinds] for _, parts, *_ in rows], dtype=float), np.array(
            [s for s, *_ in rows]
        )

    a, seconds = matrix(stretches)
    whole, whole_seconds = matrix(searches)
    # each kind's column scaled to weigh alike in the descent, then scaled back
    scale = np.where(a.any(axis=0), a.max(axis=0, initial=0), 1.0)
    fitted = nnls(a / scale, seconds) / scale * 1e6  # microseconds a thing
    total = whole_seconds.sum()
    print(f"\n{len(searches)} searches of {len(items)} questions, {total:.1f} s; {len(stretches)} stretches")
    print(f"{'kind':<12}{'things':>16}{'fitted µs':>12}{'share of time':>15}{'units today':>13}")
    for j, kind in enumerate(kinds):
        share = (a[:, j] * fitted[j] / 1e6).sum() / seconds.sum()
        print(f"{kind:<12}{int(a[:, j].sum()):>16,}{fitted[j]:>12.4f}{share:>15.1%}{search_module.WORK[kind]:>13g}")

    def agreement(weights: np.ndarray, rows: np.ndarray, actual: np.ndarray) -> str:
        predicted = rows @ weights
        predicted = predicted * actual.sum() / max(predicted.sum(), 1e-12)  # in seconds, as many in all
        missed = np.abs(predicted - actual).sum() / actual.sum()
        return f"correlation {np.corrcoef(predicted, actual)[0, 1]:.3f}, off by {missed:.0%} of the seconds"

    print(f"today's units, stretches: {agreement(today_weights, a, seconds)}")
    print(f"fitted,        stretches: {agreement(fitted, a, seconds)}")
    print(f"today's units, searches:  {agreement(today_weights, whole, whole_seconds)}")
    print(f"fitted,        searches:  {agreement(fitted, whole, whole_seconds)}")
    cell = kinds.index("cell")
    if fitted[cell] > 0:
        unit = fitted[cell] / search_module.WORK["cell"]  # a value read weighs 15 units, as today
        print(
            "fitted, in units where a value read weighs 15: "
            + ", ".join(f"{k} {fitted[j] / unit:.4g}" for j, k in enumerate(kinds))
            + f"; a unit {unit:.3f} µs here"
        )
    per_unit = whole @ today_weights / np.maximum(whole_seconds, 1e-6)
    print("the searches today's units count least per second:")
    for index in np.argsort(per_unit)[:5]:
        print(f"  {whole_seconds[index]:6.2f}s {whole[index] @ today_weights:>14,.0f} units  {searches[index][2][:80]}")


if __name__ == "__main__":
    main()
