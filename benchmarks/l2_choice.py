"""What L2's choice among L1's queries did, from a `graphraft eval` run with the graphraft and
no-l2 methods (``--methods graphraft,no-l2``: one answer scored twice) and a gold result per
question: each method's execution accuracy, how often L2 answered with another query than the
first one that returned anything, and of those how many it turned right or wrong. A reading of
what the eval ran: nothing is run again.

With ``--prior-weights``, the choice made again from the scores the eval recorded (each query's
L2 score of its result plus the weight times L1's log-probability of the query; 1 is what ask
does, 0 is L2 alone): how much the weight of L1's prior matters. Read on validation questions it
is a diagnostic, not a setting to adopt from them.

    python benchmarks/l2_choice.py outputs/eval/NAME/questions.jsonl [--prior-weights 0,0.5,1,2]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("questions", type=Path)
    parser.add_argument("--prior-weights", default="", help="comma-separated weights of L1's prior")
    args = parser.parse_args()
    by_method: dict[str, dict[str, dict]] = {}
    for line in args.questions.read_text().splitlines():
        row = json.loads(line)
        if row.get("execution") is not None:
            by_method.setdefault(row["method"], {})[row["qid"]] = row
    if not {"graphraft", "no-l2"} <= set(by_method):
        raise SystemExit(f"{args.questions}: needs the graphraft and no-l2 methods with gold results")
    l2, first = by_method["graphraft"], by_method["no-l2"]
    for name, rows in (("graphraft (L2 chooses)", l2), ("no-l2 (the first query)", first)):
        right = sum(r["execution"] for r in rows.values())
        print(f"{name}: {right} of {len(rows)} right ({100 * right / len(rows):.1f} %)")
    other = [q for q in l2 if q in first and l2[q]["answered_by"] != first[q]["answered_by"]]
    gained = sum(l2[q]["execution"] and not first[q]["execution"] for q in other)
    lost = sum(first[q]["execution"] and not l2[q]["execution"] for q in other)
    print(f"L2 answered with another query on {len(other)} questions: {gained} turned right, {lost} turned wrong")
    for weight in [float(w) for w in args.prior_weights.split(",") if w.strip()]:
        right = sum(rechosen(row, weight) for row in l2.values())
        print(f"L2 score + {weight:g} x L1's: {right} of {len(l2)} right ({100 * right / len(l2):.1f} %)")


def rechosen(row: dict, weight: float) -> bool:
    """Whether the query chosen by L2's score plus ``weight`` times L1's is right; where L2 did
    not run (one distinct result), the eval's own outcome."""
    scored = [q for q in row.get("queries", []) if q.get("l2") is not None]
    if not scored:
        return bool(row["execution"])
    return bool(max(scored, key=lambda q: q["l2"] + weight * q["score"])["right"])


if __name__ == "__main__":
    main()
