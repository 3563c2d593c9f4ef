"""L2: pick and order the answers among the retrieved nodes.

The adapter writes answer names, one per line; each is matched to a retrieved node by
normalised name, so L2 can only choose nodes the queries actually returned."""

from __future__ import annotations

import torch

from graphraft.prompts import l2_messages, prompt_ids
from graphraft.text import normalize_name


class AnswerSelector:
    def __init__(self, model, tokenizer, max_new_tokens: int = 96):
        self.model, self.tokenizer, self.max_new_tokens = model, tokenizer, max_new_tokens

    @torch.no_grad()
    def select(self, question: str, evidence: str, nodes: list[dict]) -> list[str]:
        """Ids of the retrieved nodes L2 names, in its order."""
        ids = torch.tensor([prompt_ids(self.tokenizer, l2_messages(question, evidence))])
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else self.tokenizer.eos_token_id
        output = self.model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), do_sample=False,
                                     max_new_tokens=self.max_new_tokens, eos_token_id=self.tokenizer.eos_token_id,
                                     pad_token_id=pad)
        reply = self.tokenizer.decode(output[0, ids.shape[1]:], skip_special_tokens=True)
        by_name: dict[str, list[str]] = {}
        for node in nodes:
            by_name.setdefault(normalize_name(str(node["name"])), []).append(node["id"])
        chosen: list[str] = []
        for line in reply.splitlines():
            for node_id in by_name.get(normalize_name(line.strip(" -*")), []):
                if node_id not in chosen:
                    chosen.append(node_id)
        return chosen
