"""Cold start on MetaQA: L1 trained on questions generated from the graph alone (no MetaQA
question used for training or for writing phrases), then with 1 % and 10 % of the real training
pairs added, and self-trained on MetaQA's training questions with their answers removed; Hit@1
per hop on MetaQA validation questions for each (a learning curve).

    python benchmarks/cold_start.py [--generated 3000] [--examples 2000] [--fractions 0,0.01,0.1]
        [--self-train 500] [--rounds 2] [--reshape | --reshape-only] [--limit 100] [--dataset metaqa|demo] [--out DIR]

Each variant trains L1 with training/l1_cpu.yaml's settings on ``--examples`` examples: the
generated questions, plus a stable sample of that fraction of the real training pairs (MetaQA's
wording, from the synthesis files `make metaqa-data` writes) weighted to half the examples at
most (they repeat when fewer). Evaluation: ``graphraft eval``'s no-l2 method on ``--limit``
validation questions a hop, L1 writing ``--queries`` queries under the constraint (default 5, as
`ask` asks without L2: the first that returns something answers, the paths answering what the
question asks for tried first; ``--queries 1``: L1's top query alone, as every row before 2026-12-02
was scored), and the exact-query match against the synthesis targets. Steps already done (a file, an adapter) are
reused, so an interrupted run resumes. Writes OUT/cold_start.json and OUT/cold_start.png, and each
variant's evaluation report (every question's failure class and top query) in OUT/l1-VARIANT/eval
(``--queries 1``) or OUT/l1-VARIANT/eval-Nq.

``--self-train N`` (0: none) writes N training questions a hop, text only, to
OUT/unlabelled-questions.txt and self-trains the generated-only L1 on them (`graphraft train l1
--self-train`, ``--rounds`` rounds at most); each round's L1 is one more row, scored as soon as it is
trained (a run stopped part way keeps the figures of the rounds it finished). No answer of those
questions is used: the file holds their text.

``--reshape`` adds the same self-training with ``--self-train-reshape``: every round makes the
generated questions again in the shapes its kept labels ask (rows "prior re-estimated"). Its round 1
labels with the same adapter and settings, so it takes the plain variant's round-1 labels when they
exist. ``--reshape-only`` runs that one alone (its round 1 then labels for itself); ``--reshape-hops
even`` keeps the hop lengths' shares equal, the labels choosing the shapes within each;
``--reshape-types even`` spreads each path's labels and directions evenly over the relationship
types the labels used there (folder suffix ``-even-types``); ``--reshape-smoothing S`` raises each
shape's count among the labels by S times their mean count, so the shapes L1 cannot label yet still
come up (``--self-train-reshape-smoothing``; folder suffix ``-smoothS``); ``--reshape-unsure`` counts
the questions whose label was dropped in the prior too, by the query L1 wrote that reads closest
(``--self-train-reshape-unsure``; folder suffix ``-unsure-shapes``).
``--relabel longer`` (or ``longer-unsure``) labels with ``--self-train-relabel``: the longer query
that reads closer to the question where L1's top one is shorter (folder suffix ``-longer``).
``--phrases-only`` compares the verbaliser's phrases alone in the wording check
(``--no-self-train-wording-schema-words``; folder suffix ``-phrases``).
``--wording-center`` decides the labels on each query's similarity to the question less its shape's
mean over the round, at slack 0 (``--self-train-wording-center --self-train-wording-slack 0``;
folder suffix ``-centered``); ``--wording-slack S`` another slack (folder suffix ``-slackS``).
``--label-asked-type`` labels with the first of L1's queries in `ask`'s order, the paths answering
what the question asks for first (``--self-train-asked-type-first``; folder suffix ``-asked-type``).
``--continue-from OUT/l1-VARIANT/round-N`` starts self-training from
that round's L1 instead of round 0's, its round 1 deciding again the labels that L1 wrote for round
N+1 when they are there (folder suffix ``-after-VARIANT-round-N``): another policy from a later round.
``--self-train-start 0.01`` self-trains the L1 of that real-pair row instead of the generated-only
one, its real pairs kept in every round's data at the same share (folder suffix ``-from-real-0.01``):
what self-training adds to a few labelled pairs.

``--prior-real`` generates the questions of each real-pair row in the shapes of its real pairs
(`synthesize --from-graph --shape-prior`: hop lengths, paths and anchors' labels in the pairs'
proportions, add-one smoothed) instead of evenly (folder ``l1-real-F-prior``): what a few labelled
pairs say about the questions people ask, beside what they teach as examples.

``--dataset demo`` does the same on the demo graph shipped with GraphRAFT (loaded when missing):
its question file's validation questions (split by a hash of the text) are scored, its training
questions, text only, are the unlabelled ones; it has no real-pair rows (``--fractions 0``).
Default output folder: outputs/cold_start-demo.

``--smoke`` runs the whole path in minutes with a tiny random model (for checking the script,
not for figures).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from graphraft.config import load_settings
from graphraft.graph import open_store
from graphraft.graph.loaders.demo import DEMO_GRAPH, demo_files
from graphraft.graph.loaders.question_sets import Dataset, Split, load_items
from graphraft.graph.loaders.questions import read_question_file
from graphraft.inference.config import DEFAULT_QUERIES
from graphraft.sampling import stable_hash
from graphraft.synthesis.from_graph import GenerationConfig, generator_for
from graphraft.synthesis.from_graph import generate as write_generated
from graphraft.synthesis.rows import read_rows
from graphraft.training.config import TrainConfig
from graphraft.training.examples import stable_sample

REAL = [
    "outputs/synthesis/metaqa-all-1hop.jsonl",
    "outputs/synthesis/metaqa-all-2hop.jsonl",
    "outputs/synthesis/metaqa-all-3hop-allhops.jsonl",
]


def generate(settings, graph: str, count: int, out: Path, prior: Path | None = None) -> Path:
    """``count`` questions generated from the graph: spread evenly over the shapes, or in the
    proportions of ``prior``'s queries (`synthesize --from-graph --shape-prior`)."""
    path = out / (f"generated-{count}.jsonl" if prior is None else f"generated-{count}-prior-{prior.stem}.jsonl")
    if path.exists() and sum(1 for _ in read_rows(path)) >= count:
        return path
    started = time.perf_counter()
    with open_store(settings, graph) as store:
        config = GenerationConfig(count=count, seed=0, shape_prior=prior)
        write_generated(generator_for(store, settings, config), path)
    print(f"generated {count} questions in {time.perf_counter() - started:.0f}s -> {path}", flush=True)
    return path


def real_subset(fraction: float, out: Path) -> Path | None:
    """A stable sample of ``fraction`` of the real training pairs (validation rows left out)."""
    if fraction <= 0:
        return None
    rows = [r for path in REAL for r in read_rows(Path(path)) if r.usable and r.split == "train"]
    chosen = stable_sample(rows, max(1, round(fraction * len(rows))), seed=0)
    path = out / f"real-{fraction:g}.jsonl"
    path.write_text("".join(r.to_json() + "\n" for r in chosen))
    return path


def real_source(real: Path, examples: int) -> str:
    """The real pairs as a data source, at their share of the examples: their own count's share,
    at least 0.2 (they repeat) and at most half."""
    real_rows = sum(1 for _ in read_rows(real))
    return f"{real}@{min(0.5, max(real_rows / examples, 0.2)):.3f}"


def train_variant(
    settings,
    graph: str,
    generated: Path,
    real: Path | None,
    examples: int,
    out: Path,
    smoke: bool,
    shaped: bool = False,
) -> dict:
    from graphraft.training.trainer import train

    name = real.stem if real else "generated-only"
    name += "-prior" if shaped else ""  # the generated questions in the real pairs' shapes
    output_dir = out / f"l1-{name}"
    summary_file = output_dir / "summary.json"
    if summary_file.exists():
        return json.loads(summary_file.read_text())
    data = [str(generated)]
    if real is not None:
        data.append(real_source(real, examples))
    overrides = {"data": data, "output_dir": str(output_dir), "max_train_examples": examples, "graph": graph}
    if smoke:
        overrides.update(base_model="tiny-random", validation_examples=8, batch_size=4)
    config = TrainConfig.from_yaml(Path("training/l1_cpu.yaml"), **overrides)
    print(f"training {name}: {', '.join(data)}", flush=True)
    return train(config, settings, progress_callback=lambda entry: print("  ", entry, flush=True))


def questions_of(dataset: str, split: Split, per_hop: int | None) -> list:
    """The data set's questions of a split, at most ``per_hop`` a hop (a stable sample): MetaQA's
    files (`make metaqa-data`), or the demo's question file (split by a hash of the text)."""
    if dataset == "metaqa":
        return load_items(Dataset.metaqa, None, None, split, None, per_hop)
    items = [item for item in read_question_file(demo_files()[2]) if item.split == split.value]
    by_hop: dict[int, list] = {}
    for item in sorted(items, key=lambda i: stable_hash(i.question)):
        by_hop.setdefault(item.hops, []).append(item)
    return [item for hop in sorted(by_hop) for item in by_hop[hop][:per_hop]]


def ensure_graph(settings, dataset: str, graph: str) -> None:
    """The demo graph is loaded when missing (MetaQA's: `make metaqa-data`)."""
    from graphraft.errors import GraphNotFoundError

    try:
        open_store(settings, graph).close()
    except GraphNotFoundError:
        if dataset != "demo":
            raise
        subprocess.run([sys.executable, "-m", "graphraft", "load", "demo", "--graph", graph], check=True)


def unlabelled_questions(dataset: str, per_hop: int, out: Path) -> Path:
    """The data set's training questions (a stable sample, ``per_hop`` a hop), their text only,
    the hops mixed (in the order of a hash), so that a run stopped part way has labels of every hop."""
    items = sorted(questions_of(dataset, Split.train, per_hop), key=lambda i: stable_hash(i.question))
    path = out / "unlabelled-questions.txt"
    path.write_text("".join(item.question + "\n" for item in items))
    return path


def self_train_name(reshape: bool, args) -> str:
    """The self-training variant's name: its folder is OUT/l1-NAME, its report OUT/NAME.json with - as _."""
    even = "-even-hops" if args.reshape_hops == "even" else ""
    even += "-even-types" if args.reshape_types == "even" else ""
    even += f"-smooth{args.reshape_smoothing:g}" if args.reshape_smoothing else ""
    even += "-unsure-shapes" if args.reshape_unsure else ""
    name = "self-train" + ("-reshape" + even if reshape else "")
    name += f"-{args.relabel}" if args.relabel != "none" else ""
    name += "-centered" if args.wording_center else ""
    name += f"-slack{args.wording_slack:g}" if args.wording_slack is not None else ""
    name += "-phrases" if args.phrases_only else ""
    name += "-asked-type" if args.label_asked_type else ""
    if args.continue_from:
        name += f"-after-{args.continue_from.parent.name.removeprefix('l1-')}-{args.continue_from.name}"
    return name + start_suffix(args)


def start_suffix(args) -> str:
    """The folder suffix that names the L1 self-training starts from ("": the generated-only one)."""
    if not args.self_train_start:
        return ""
    return f"-from-real-{args.self_train_start:g}" + ("-prior" if args.prior_real else "")


def self_train_row(reshape: bool, args, entry: dict) -> str:
    """A self-training round's row in the table: its settings, its round and its labels."""
    even = " (shapes, hops even)" if args.reshape_hops == "even" else ""
    even += " (types even)" if args.reshape_types == "even" else ""
    even += f" (smoothed {args.reshape_smoothing:g})" if args.reshape_smoothing else ""
    even += " (dropped labels' closest queries too)" if args.reshape_unsure else ""
    prior = f", prior re-estimated{even}" if reshape else ""
    prior += f", relabel {args.relabel}" if args.relabel != "none" else ""
    prior += ", centered" if args.wording_center else ""
    prior += f", slack {args.wording_slack:g}" if args.wording_slack is not None else ""
    prior += ", phrases alone" if args.phrases_only else ""
    prior += ", labelled in ask's order" if args.label_asked_type else ""
    prior += f", after {args.continue_from}" if args.continue_from else ""
    prior += f", from the {args.self_train_start * 100:g} % real-pair L1" if args.self_train_start else ""
    prior += " (questions in the real pairs' shapes)" if args.self_train_start and args.prior_real else ""
    return f"+ self-training{prior}, round {entry['round']} ({entry['kept']} of {entry['questions']} labelled)"


def round_one_labels(args, output_dir: Path) -> Path | None:
    """Another variant's round-1 label file from the same L1 (the generated-only one, or with
    ``--self-train-start`` that real-pair row's), whose rows keep L1's queries (the plain variants'
    files from before may not: taken only by a variant decided as they were, relabel none with the
    schema words)."""
    from graphraft.training.self_training import LABELS

    plain = args.relabel == "none" and not args.phrases_only
    start = start_suffix(args)
    for path in sorted(args.out.glob(f"l1-self-train*/round-1/{LABELS}")):
        name = path.parent.parent.name
        if path.parent.parent == output_dir or "-after-" in name:
            continue
        if (start and not name.endswith(start)) or (not start and "-from-real" in name):
            continue
        with path.open(encoding="utf-8") as lines:
            first = json.loads(next(lines, "").strip() or "{}")
        if plain or (first.get("source") or {}).get("queries"):
            return path
    return None


def self_train_variant(
    settings,
    generated: Path,
    start: Path,
    questions: Path,
    args,
    reshape: bool = False,
    real: Path | None = None,
    rounds: int | None = None,
) -> dict:
    from graphraft.training.self_training import LABELS, self_train

    even = reshape and args.reshape_hops == "even"
    output_dir = args.out / f"l1-{self_train_name(reshape, args)}"
    slack = args.wording_slack if args.wording_slack is not None else 0.0 if args.wording_center else 0.1
    data = [str(generated)] + ([real_source(real, args.examples)] if real is not None else [])
    overrides = {
        "data": data,
        "graph": args.graph,
        "output_dir": str(output_dir),
        "max_train_examples": args.examples,
        "self_train.questions": str(questions),
        "self_train.start": str(start),
        "self_train.rounds": rounds or args.rounds,
        "self_train.reshape": reshape,
        "self_train.reshape_hops": not even,
        "self_train.reshape_types": not (reshape and args.reshape_types == "even"),
        "self_train.reshape_smoothing": args.reshape_smoothing if reshape else 0.0,
        "self_train.reshape_unsure": reshape and args.reshape_unsure,
        "self_train.relabel": args.relabel,
        "self_train.wording_schema_words": not args.phrases_only,
        # every setting said, whatever the library's defaults (its defaults are the recipe's)
        "self_train.wording_center": args.wording_center,
        "self_train.wording_slack": slack,
        "self_train.asked_type_first": args.label_asked_type,
    }
    mine = output_dir / "round-1" / LABELS
    if args.continue_from:
        # round N+1's labels were written by round N's L1, the one this variant starts from
        number = int(args.continue_from.name.removeprefix("round-"))
        written = args.continue_from.parent / f"round-{number + 1}" / LABELS
        if written.exists() and not mine.exists():
            mine.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(written, mine)
    elif not mine.exists() and (made := round_one_labels(args, output_dir)):
        # round 1 labels with the same adapter (the generated-only L1, or one real-pair row's) in
        # every variant, and the labelling is deterministic: another variant's label file is copied
        # rather than made again (25-60 min on 2 cores); its rows keep every query L1 wrote, so
        # self-training decides them again under this variant's settings (relabel, wording, the
        # order labels are taken in) without asking L1
        mine.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(made, mine)
    if args.smoke:
        overrides.update(base_model="tiny-random", validation_examples=8, batch_size=4)
    config = TrainConfig.from_yaml(Path("training/l1_cpu.yaml"), **overrides)
    print(f"self-training from {start} on {questions}", flush=True)
    return self_train(config, settings, progress_callback=lambda entry: print("  ", entry, flush=True))


def evaluate_variant(settings, graph: str, adapter: Path, items, smoke: bool, folder: Path, queries: int = 1) -> dict:
    """No-l2 Hit@1 per hop with L1 writing ``queries`` queries (ask's order: the paths answering what
    is asked first); the whole report (each question's class and top query) in ``folder``."""
    from graphraft.evaluation.runner import evaluate, write_report
    from graphraft.inference.pipeline import GraphRAFT

    done = folder / "report.json"
    if done.exists() and done.stat().st_mtime > (adapter / "adapter_model.safetensors").stat().st_mtime:
        report = json.loads(done.read_text())  # scored before, after the adapter was written
        if report["questions"] == len(items):
            hit = {"all": report["overall"]["no-l2"]["hit_at_1"]}
            hit.update({h: scores["no-l2"]["hit_at_1"] for h, scores in report["by_hop"].items()})
            return {"hit@1": hit, "failures": report["failures"]["no-l2"], "eval_seconds": None}
    asked = load_settings(l1_adapter=adapter, **({"base_model": "tiny-random"} if smoke else {}))
    pipeline = GraphRAFT(asked, graph=graph, beams=queries)
    try:
        started = time.perf_counter()
        report = evaluate(items, pipeline, ["no-l2"])
        seconds = time.perf_counter() - started
    finally:
        pipeline.close()
    write_report(report, folder)
    hit = {"all": report.table()["no-l2"]["hit_at_1"]}
    hit.update({str(h): report.table(h)["no-l2"]["hit_at_1"] for h in report.hops()})
    return {"hit@1": hit, "failures": report.failures("no-l2"), "eval_seconds": round(seconds, 1)}


def plot(results: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    xs = [r["real_fraction"] * 100 for r in results]
    for key, style in (("all", "o-"), ("1", "s--"), ("2", "^--"), ("3", "v--")):
        ax.plot(xs, [100 * r["hit@1"][key] for r in results], style, label="all" if key == "all" else f"{key}-hop")
    ax.set_xscale("symlog", linthresh=1)
    ax.set_xticks(xs, [f"{x:g} %" for x in xs])
    ax.set_xlabel("real MetaQA training pairs added (share of all)")
    ax.set_ylabel("Hit@1 % (L1's top query), MetaQA validation")
    ax.set_title("Cold start: L1 trained on questions generated from the graph")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generated", type=int, default=3000, help="Questions generated from the graph.")
    parser.add_argument("--examples", type=int, default=2000, help="L1 training examples per variant.")
    parser.add_argument("--fractions", default="0,0.01,0.1", help="Shares of the real training pairs to add.")
    parser.add_argument("--self-train", type=int, default=500, help="Unlabelled training questions a hop (0: none).")
    parser.add_argument("--rounds", type=int, default=2, help="Most self-training rounds.")
    parser.add_argument(
        "--reshape", action="store_true", help="Also self-train with the shape prior re-estimated every round."
    )
    parser.add_argument(
        "--reshape-only", action="store_true", help="Only the self-training with the prior re-estimated."
    )
    parser.add_argument(
        "--reshape-hops",
        choices=("labels", "even"),
        default="labels",
        help="The reshaped questions' hop lengths: the labels' shares, or equal (l1-self-train-reshape-even-hops).",
    )
    parser.add_argument(
        "--reshape-types",
        choices=("labels", "even"),
        default="labels",
        help="The reshaped questions' relationship types: the labels' shares, or even over the types the labels "
        "used for each path's labels and directions (folder -even-types).",
    )
    parser.add_argument(
        "--reshape-smoothing",
        type=float,
        default=0.0,
        help="Each shape's count among the labels raised by this many times their mean count (folder -smoothS).",
    )
    parser.add_argument(
        "--reshape-unsure",
        action="store_true",
        help="Dropped labels' questions count in the prior by their closest-reading query (folder -unsure-shapes).",
    )
    parser.add_argument(
        "--relabel",
        choices=("none", "longer", "longer-unsure", "closest"),
        default="none",
        help="Self-training's relabel policy (--self-train-relabel; a folder of its own).",
    )
    parser.add_argument(
        "--phrases-only",
        action="store_true",
        help="The wording check without the schema words (--no-self-train-wording-schema-words; folder -phrases).",
    )
    parser.add_argument(
        "--wording-center",
        action="store_true",
        help="Decide labels on each query's similarity less its shape's mean, at slack 0 (folder -centered).",
    )
    parser.add_argument(
        "--wording-slack",
        type=float,
        help="The wording check's slack (--self-train-wording-slack; default: the config's, 0 with "
        "--wording-center; folder -slackS).",
    )
    parser.add_argument(
        "--label-asked-type",
        action="store_true",
        help="Label with the first of L1's queries in ask's order (--self-train-asked-type-first; folder -asked-type).",
    )
    parser.add_argument(
        "--continue-from",
        type=Path,
        help="A round folder (OUT/l1-VARIANT/round-N): self-train from its L1, deciding again the labels it "
        "wrote for round N+1 (folder -after-VARIANT-round-N).",
    )
    parser.add_argument(
        "--self-train-start",
        type=float,
        default=0.0,
        help="Self-train the L1 of this real-pair fraction's row (0: the generated-only one).",
    )
    parser.add_argument(
        "--prior-real",
        action="store_true",
        help="With real pairs, generate the questions in their shapes (--shape-prior; folder l1-real-F-prior).",
    )
    parser.add_argument("--limit", type=int, default=100, help="Validation questions per hop.")
    parser.add_argument(
        "--queries",
        type=int,
        default=DEFAULT_QUERIES,
        help="Queries L1 writes a validation question, tried in ask's order (1: L1's top query alone).",
    )
    parser.add_argument("--dataset", choices=("metaqa", "demo"), default="metaqa", help="Graph and questions.")
    parser.add_argument("--out", type=Path, help="Output folder (default: outputs/cold_start[-demo]).")
    parser.add_argument("--smoke", action="store_true", help="Tiny random model: checks the script only.")
    args = parser.parse_args()
    args.out = args.out or Path("outputs/cold_start" + ("-demo" if args.dataset == "demo" else ""))
    args.out.mkdir(parents=True, exist_ok=True)
    graph = args.graph = "metaqa" if args.dataset == "metaqa" else DEMO_GRAPH
    if args.dataset != "metaqa" and args.fractions != "0":
        parser.error("--fractions: the real pairs are MetaQA's (give --fractions 0 with --dataset demo)")
    missing = [path for path in REAL if not Path(path).exists()]
    if any(float(f) > 0 for f in args.fractions.split(",")) and missing:
        # checked before the generation (minutes) so that a missing file does not end the run after it
        parser.error(
            f"--fractions: {missing[0]} not found; make MetaQA's pairs first "
            "(`make metaqa-pairs`), or give --fractions 0"
        )
    settings = load_settings(graph=graph)
    ensure_graph(settings, args.dataset, graph)
    items = questions_of(args.dataset, Split.validation, args.limit)
    fractions = [float(f) for f in args.fractions.split(",")]
    # the questions spread evenly: made first (minutes) unless every row takes the real pairs' shapes
    even_needed = not args.prior_real or 0.0 in fractions
    generated = generate(settings, graph, args.generated, args.out) if even_needed else None
    results = []

    def record(name: str, fraction: float, real: Path | None, summary: dict, adapter: Path) -> None:
        folder = adapter.parent / ("eval" if args.queries == 1 else f"eval-{args.queries}q")
        scores = evaluate_variant(settings, graph, adapter, items, args.smoke, folder, args.queries)
        # on the held-out generated questions (training's own validation)
        exact = (summary.get("history") or [{}])[-1].get("exact_match")
        results.append(
            {
                "variant": name,
                "real_fraction": fraction,
                "real_pairs": sum(1 for _ in read_rows(real)) if real else 0,
                "train_examples": summary["train_examples"],
                "train_minutes": round(summary["total_s"] / 60, 1),
                "exact_query_generated_validation": exact,
                "queries": args.queries,
                **scores,
            }
        )
        row = results[-1]
        print(
            f"| {name} | {row['real_pairs']} | {row['train_examples']} | "
            + " | ".join(f"{100 * row['hit@1'].get(k, 0):.1f}" for k in ("all", "1", "2", "3"))
            + f" | {row['train_minutes']} min |",
            flush=True,
        )
        (args.out / "cold_start.json").write_text(json.dumps(results, indent=2))

    starts: dict[float, tuple[Path, Path | None, Path]] = {}
    for fraction in fractions:
        real = real_subset(fraction, args.out)
        shaped = generate(settings, graph, args.generated, args.out, real) if real and args.prior_real else generated
        summary = train_variant(
            settings, graph, shaped, real, args.examples, args.out, args.smoke, shaped is not generated
        )
        record(
            (f"+ {fraction * 100:g} % real pairs" if fraction else "generated only")
            + (", the generated questions in their shapes" if shaped is not generated else ""),
            fraction,
            real,
            summary,
            Path(summary["adapter"]),
        )
        starts[fraction] = Path(summary["adapter"]), real, shaped
    if args.self_train and args.self_train_start not in starts:
        parser.error(f"--self-train-start {args.self_train_start:g}: not among --fractions {args.fractions}")
    if args.self_train:
        start, real, generated = starts[args.self_train_start]  # that row's generated questions too
        if args.continue_from:
            if not (args.continue_from / "adapter").is_dir():
                parser.error(f"--continue-from {args.continue_from}: no adapter there (a self-training round's folder)")
            start = args.continue_from / "adapter"
        questions = unlabelled_questions(args.dataset, args.self_train, args.out)
        kinds = (True,) if args.reshape_only else (False, True) if args.reshape else (False,)
        for reshape in kinds:
            scored: set[int] = set()
            # one round more at a time (each run goes on from the rounds trained before), each scored
            # once trained: a run stopped part way has the figures of the rounds it finished
            for upto in range(1, args.rounds + 1):
                report = self_train_variant(settings, generated, start, questions, args, reshape, real, upto)
                entries = [entry for entry in report["rounds"][1:] if entry["round"] not in scored]
                scored |= {entry["round"] for entry in entries}
                for entry in entries:
                    if "adapter" not in entry:  # a round that labelled and stopped: nothing new to score
                        print(f"round {entry['round']}: stopped, {entry.get('stopped')}", flush=True)
                        continue
                    trained = json.loads((Path(entry["adapter"]).parent / "summary.json").read_text())
                    record(
                        self_train_row(reshape, args, entry),
                        args.self_train_start,
                        real,
                        trained,
                        Path(entry["adapter"]),
                    )
                if len(report["rounds"]) <= upto or "adapter" not in report["rounds"][-1]:
                    break  # the rounds stopped before this many (no label kept, the labels did not move)
            report_file = args.out / f"{self_train_name(reshape, args).replace('-', '_')}.json"
            report_file.write_text(json.dumps(report, indent=2))
    curve = [r for r in results if r["variant"] == "generated only" or "real pairs" in r["variant"]]
    plot(curve, args.out / "cold_start.png")
    print(f"-> {args.out / 'cold_start.json'}, {args.out / 'cold_start.png'}")


if __name__ == "__main__":
    main()
