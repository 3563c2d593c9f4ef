"""Shared-prefix batches for training: a batch's examples in one sequence, the beginning they
all share (the chat template's system prompt and user header: ~31 of L1's ~110 tokens) fed
once, and each example's rest after it.

The attention mask is the tree attention of ``decoding/tree_attention.py`` with two levels:
every token sees the shared beginning and the tokens of its own example before it; position
ids continue from the beginning in every example. So each example's tokens are computed
exactly as in a padded batch (the loss is the same, tests/test_training.py), with the shared
tokens computed once instead of once per example.

Labels come pre-shifted (``shift_labels``: the label of position i is the token after it in
its own example), as TRL's fused LM head and transformers' loss accept them, because the
token after a position is not the next position of the sequence. The shared beginning must
hold no label: it ends before the first completion token of every example.

SFTTrainer counts a batch's tokens from a 2D ``attention_mask`` when there is one, so the 4D
mask travels as ``tree_mask`` and ``route_tree_mask`` renames it at the model's door."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from graphraft.inference.decoding.tree_attention import common_prefix_length

IGNORE = -100


def _learned(example: dict) -> list[bool]:
    """Which tokens carry a loss: ``labels`` (-100: none), as SFTTrainer builds them, or the
    ``completion_mask`` the examples are written with."""
    if "labels" in example:
        return [label != IGNORE for label in example["labels"]]
    return [bool(keep) for keep in example["completion_mask"]]


def shared_length(examples: Sequence[dict]) -> int:
    """Tokens every example starts with, ending before any label and leaving each example at
    least one token of its own."""
    ids = [e["input_ids"] for e in examples]
    n = common_prefix_length(ids, min(len(x) for x in ids) - 1)
    # position n - 1 predicts token n: both must be outside every completion
    learned = [_learned(e) for e in examples]
    while n > 0 and any(flags[n] for flags in learned):
        n -= 1
    return n


@dataclass
class SharedPrefixCollator:
    """Collates examples (``input_ids`` with ``labels`` or ``completion_mask``) into one
    shared-prefix sequence."""

    mask_dtype: torch.dtype = torch.float32

    def __call__(self, examples: Sequence[dict]) -> dict[str, torch.Tensor]:
        shared = shared_length(examples)
        first = examples[0]["input_ids"]
        ids, positions, labels = list(first[:shared]), list(range(shared)), [IGNORE] * shared
        spans = []
        for example in examples:
            tokens, completion = example["input_ids"], _learned(example)
            start = len(ids)
            ids.extend(tokens[shared:])
            positions.extend(range(shared, len(tokens)))
            labels.extend(
                tokens[i + 1] if i + 1 < len(tokens) and completion[i + 1] else IGNORE
                for i in range(shared, len(tokens))
            )
            spans.append((start, len(ids)))
        total = len(ids)
        visible = torch.zeros((total, total), dtype=torch.bool)
        visible[:shared, :shared] = torch.ones((shared, shared), dtype=torch.bool).tril()
        for start, end in spans:
            visible[start:end, :shared] = True
            visible[start:end, start:end] = torch.ones((end - start, end - start), dtype=torch.bool).tril()
        mask = torch.zeros((1, 1, total, total), dtype=self.mask_dtype)
        mask.masked_fill_(~visible[None, None], torch.finfo(self.mask_dtype).min)
        # `labels` too, although the loss reads `shift_labels`: the Trainer counts a batch's
        # label tokens only when a `labels` key is present
        shift_labels = torch.tensor([labels])
        return {
            "input_ids": torch.tensor([ids]),
            "position_ids": torch.tensor([positions]),
            "tree_mask": mask,
            "labels": shift_labels,
            "shift_labels": shift_labels,
        }


def route_tree_mask(model) -> None:
    """Make ``model(tree_mask=...)`` use it as the 4D attention mask (see the module's docstring)."""

    def hook(module, args, kwargs):
        mask = kwargs.pop("tree_mask", None)
        if mask is not None:
            kwargs["attention_mask"] = mask
        return args, kwargs

    model.register_forward_pre_hook(hook, with_kwargs=True)
