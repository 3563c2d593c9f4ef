"""Prompts for L1 (question -> Cypher) and L2 (answer selection), in the base model's chat
template. Bump the versions when the text changes: adapters record the version they were
trained with, and `ask` refuses an adapter trained on another."""

from __future__ import annotations

from collections.abc import Sequence

L1_PROMPT_VERSION = 1
L2_PROMPT_VERSION = 1

L1_SYSTEM = "Write the Cypher query that retrieves the answer to the question from the knowledge graph."
EXAMPLES_HEADER = "Similar questions and their queries:"
DETAIL_CHARS = 240  # characters of node details per line of L2's evidence, by default
VALUE_ROWS = 5  # rows of values a query shows in L2's evidence, and L2 writes, by default
L2_SYSTEM = (
    "Answer the question from the knowledge graph evidence below. Reply with the names of the "
    "answers, one per line, best first."
)


def schema_hint(store) -> str:
    """The graph's schema as one line for L1's prompt (training with ``schema_hints``)."""
    return "; ".join(str(p) for p in store.schema().patterns)


def l1_messages(question: str, schema_hint: str | None = None, examples: Sequence = ()) -> list[dict[str, str]]:
    """L1's messages: the question alone, or after ``examples`` (solved questions, each with a
    ``question`` and its ``cypher``: ``exemplars.Exemplars.nearest``) for an adapter trained so."""
    system = L1_SYSTEM if not schema_hint else f"{L1_SYSTEM}\nSchema: {schema_hint}"
    user = question
    if examples:
        shown = "\n".join(f"Question: {e.question}\nCypher: {e.cypher}" for e in examples)
        user = f"{EXAMPLES_HEADER}\n{shown}\nQuestion: {question}"
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def l2_messages(question: str, evidence: str) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": L2_SYSTEM},
        {"role": "user", "content": f"Question: {question}\n\nEvidence:\n{evidence}"},
    ]


def l2_answer_text(names: list[str], evidence: str) -> str:
    """L2's reply for an answer set: one name per line, in the order the evidence lists them
    (names it does not show come last). Training writes it; answering scores it."""

    def position(name: str) -> int:
        found = evidence.find(f"- {name} (")
        return found if found >= 0 else len(evidence)

    return "\n".join(sorted(names, key=position))


def l2_values_text(rows: list[str]) -> str:
    """L2's reply for a query's rows of values (each as the evidence writes it,
    ``retrieval.value_row_text``): its first ``VALUE_ROWS`` rows, one per line, in the query's
    order (the order is part of an ordered result)."""
    return "\n".join(rows[:VALUE_ROWS])


def prompt_ids(tokenizer, messages: list[dict[str, str]]) -> list[int]:
    """The prompt's token ids, ending where the assistant's reply begins (invariant 4: the
    completion is tokenised separately and appended)."""
    text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    return tokenizer(text, add_special_tokens=False)["input_ids"]
