"""What L2's choice among L1's queries did, from a `graphraft eval` run with the graphraft and
no-l2 methods (``--methods graphraft,no-l2``: one answer scored twice) and a gold result per
question: each method's execution accuracy, how often L2 answered with another query than the
first one that returned anything, and of those how many it turned right or wrong. A reading of
what the eval ran: nothing is run again.

    python benchmarks/l2_choice.py outputs/eval/NAME/questions.jsonl
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("questions", type=Path)
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


if __name__ == "__main__":
    main()
