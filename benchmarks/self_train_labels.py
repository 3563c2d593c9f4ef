"""How right self-training's labels are, scored after the fact against MetaQA's answers (or the
demo's, second argument ``demo``; a diagnostic: training never reads an answer; this script is the
only reader): per hop, how many labels were kept and dropped, and the share of the kept labels whose
query returns a right answer (Hit) and exactly the answer set.

    python benchmarks/self_train_labels.py outputs/cold_start/l1-self-train/round-1/labels.jsonl [metaqa|demo]
"""

import collections
import json
import sys
from pathlib import Path

from graphraft.config import load_settings
from graphraft.graph import open_store
from graphraft.graph.loaders.demo import DEMO_GRAPH, demo_files
from graphraft.graph.loaders.question_sets import Dataset, Split, load_items
from graphraft.graph.loaders.questions import read_question_file
from graphraft.synthesis.patterns import Pattern, executable
from graphraft.text import normalize_name

labels = [json.loads(line) for line in Path(sys.argv[1]).read_text().splitlines() if line.strip()]
if len(sys.argv) > 2 and sys.argv[2] == "demo":
    items = {i.question: i for i in read_question_file(demo_files()[2])}
    store = open_store(load_settings(graph=DEMO_GRAPH), DEMO_GRAPH)
else:
    items = {i.question: i for i in load_items(Dataset.metaqa, None, None, Split.train, None, None)}
    store = open_store(load_settings(graph="metaqa"), "metaqa")
tally = collections.defaultdict(lambda: [0, 0])
for row in labels:
    item = items[row["question"]]
    gold = {normalize_name(a) for a in item.answers}
    hop = item.hops
    if row["status"] == "ok":
        ids = [r["id"] for r in store.read(executable(Pattern.from_dict(row["pattern"]), store))]
        names = {normalize_name(str(n["name"])) for n in store.nodes_by_id(ids)} if ids else set()
        top1 = bool(names & gold)
        exact = names == gold
        tally[("kept", hop)][0] += top1
        tally[("kept", hop)][1] += 1
        tally[("kept-exact", hop)][0] += exact
        tally[("kept-exact", hop)][1] += 1
    else:
        tally[("dropped", hop)][1] += 1
for key in sorted(tally):
    hit, n = tally[key]
    print(key, n, f"{hit} right, {100 * hit / n:.1f}%" if key[0] != "dropped" else "")
kept = [tally[key] for key in tally if key[0] == "kept"]
if kept:
    hit, n = sum(k[0] for k in kept), sum(k[1] for k in kept)
    print(f"kept {n}, {hit} right ({100 * hit / n:.1f}%)")
store.close()
