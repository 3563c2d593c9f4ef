"""How a question is answered: the settings of the asking stage. `graphraft ask` and
`graphraft eval` take each field as a flag; the models, adapters and database come from
``graphraft.config.Settings`` (environment and global flags)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from graphraft.config import StageConfig

DEFAULT_QUERIES = 5  # queries L1 writes when no L2 adapter says how many it reads


class AskConfig(StageConfig):
    beams: int | None = Field(
        None, ge=1, description="Queries L1 writes (default: as many as the L2 adapter reads, else 5)."
    )
    max_hops: int = Field(3, ge=1, le=3, description="Longest candidate pattern.")
    node_budget: int = Field(
        100,
        ge=1,
        description="Stop running the paths' queries after this many nodes (the language's all run); name this many.",
    )
    # self-training's labelling reads L1's top query's rows and every query's score and text
    run_queries: int | None = Field(
        None, ge=1, description="Run L1's first N queries only; the others are listed, not run (unset: all)."
    )
    fanout_cap: int = Field(500, ge=1, description="Do not expand nodes with more relationships than this.")
    evidence_tokens: int = Field(
        1_500, ge=1, description="Evidence budget in tokens (an L2 adapter's own setting wins)."
    )
    group: int = Field(8, ge=1, description="Questions L1 searches together in one forward call (many questions).")
    language: Literal["paths", "full"] = Field(
        "paths",
        description=(
            "What L1 may write: paths from the question's entities (paths), or the whole query language "
            "(full): also their properties, counts and aggregates, filters with the question's values, "
            "order and limit, and queries rooted at a label."
        ),
    )
    stated_first: bool = Field(
        True,
        description=(
            "Try first, among L1's queries of the language, those that say more of the values the question "
            "states (its numbers, quoted text, named entities) and less that it does not; L1's order within "
            "each (off: left out; with --no-asked-label-first too, L1's order)."
        ),
    )
    asked_label_first: bool = Field(
        True,
        description=(
            "Then try first those that answer with nodes of the label the question asks for (the first it "
            "names, not one after 'how many'): 'which suppliers have the most products' by supplier, not by "
            "product (off: no such preference)."
        ),
    )
    asked_type_first: bool = Field(
        True,
        description=(
            "Paths: try first those whose answer nodes have the label the question asks for: the one whose name "
            "reads nearest (MiniLM) to the two words after its 'which' or 'what' ('which films': Movie), or to "
            "'person' after 'who'; L1's order within each (off, or with no embedder: L1's order)."
        ),
    )
