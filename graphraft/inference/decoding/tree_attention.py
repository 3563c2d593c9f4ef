"""One KV cache over a prompt and a tree of continuations (tree attention).

Branches of a token tree are fed in any order, several in one forward call: the new tokens
are laid one after another in the cache, and a 4D attention mask lets each token see the
prompt, the tokens on its path from the root, and nothing else; position ids follow the
depth along the path. So a branch's log-probabilities are those of the prompt followed by
its path alone, as if teacher-forced on its own (Medusa's and SpecInfer's tree
verification use the same mask). Calls are few and wide, which is what a CPU does best: on
this project's 2-core CPU, one float32 forward of the 135M model feeding 48 tokens took about
230 ms and one feeding a single token about 70 ms.

The prompt's KV can be reused across questions that share a beginning (the chat template's
fixed system prefix) through a ``PromptCache``."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass

import torch


def common_prefix_length(sequences: Sequence[Sequence[int]], limit: int) -> int:
    """How many tokens all ``sequences`` start with, at most ``limit``."""
    n = 0
    while n < limit and all(seq[n] == sequences[0][n] for seq in sequences):
        n += 1
    return n


class PromptCache:
    """The KV of the last prompt fed, reused up to the longest common prefix with the next.

    Valid for one model with fixed weights (and one active adapter): make a new one when
    either changes."""

    def __init__(self, min_reuse: int = 8):
        self.ids: list[int] = []
        self.cache = None
        self.min_reuse = min_reuse  # below this, copying the cache is not worth it

    def take(self, prompt: Sequence[int]):
        """(a cache holding the first n prompt tokens, n), n < len(prompt); (None, 0) if none."""
        if self.cache is None:
            return None, 0
        # at least one token is fed: its logits are needed
        n = common_prefix_length([self.ids, prompt], min(len(self.ids), len(prompt) - 1))
        if n < self.min_reuse:
            return None, 0
        cache = copy.deepcopy(self.cache)
        if len(self.ids) > n:
            cache.crop(n - len(self.ids))
        return cache, n

    def keep(self, prompt: Sequence[int], cache, length: int) -> None:
        """Remember the prompt's KV: the first ``len(prompt)`` of ``length`` tokens in ``cache``."""
        kept = copy.deepcopy(cache)
        if length > len(prompt):
            kept.crop(len(prompt) - length)
        self.ids, self.cache = list(prompt), kept


@dataclass(frozen=True)
class Branch:
    """Tokens to feed below a node of the tree. The node is reached by ``path`` (cache slots
    of the tokens between the prompt and it, fed in earlier calls; empty: right after the
    prompt), or, with ``after``, by the end of an earlier branch of the same call."""

    path: tuple[int, ...]
    tokens: tuple[int, ...]
    after: int | None = None


class FedBranch:
    """What a forward returned for one branch: the cache slots of its whole path (its own
    tokens last), and the row of each of its tokens' next-token distribution in ``Forward``."""

    __slots__ = ("path", "rows")

    def __init__(self, path: tuple[int, ...], rows: range):
        self.path, self.rows = path, rows


class Forward:
    """Next-token log-probabilities for the rows one call kept logits for."""

    def __init__(self, logits: torch.Tensor):
        # log_softmax, as beam search and teacher forcing score: on a CPU, torch.logsumexp
        # over a 49k vocabulary sums less exactly (1e-4 off on confident rows)
        self.logprob = torch.log_softmax(logits.float(), dim=-1)  # (rows, vocab)

    def logprobs(self, rows: Sequence[int] | torch.Tensor, tokens: Sequence[int] | torch.Tensor) -> torch.Tensor:
        """log p(tokens[i] | row rows[i]) for every i, in one gather."""
        rows = torch.as_tensor(rows, dtype=torch.long, device=self.logprob.device)
        tokens = torch.as_tensor(tokens, dtype=torch.long, device=self.logprob.device)
        return self.logprob[rows, tokens]


class TreeCache:
    """The KV cache of one prompt and the branches fed below it so far."""

    def __init__(self, model, prompt: Sequence[int], prefix: PromptCache | None = None):
        self.model = model
        self.prompt = list(prompt)
        self.prefix = prefix
        self.cache, self.length = prefix.take(self.prompt) if prefix is not None else (None, 0)
        self.reused = self.length
        self.started = False
        dtype = next(model.parameters()).dtype
        self._dtype = dtype if dtype.is_floating_point else torch.float32
        self._device = next(model.parameters()).device

    @property
    def prompt_length(self) -> int:
        return len(self.prompt)

    @torch.no_grad()
    def feed(self, branches: Sequence[Branch]) -> tuple[Forward, int | None, list[FedBranch]]:
        """One forward call: the rest of the prompt (on the first call) and ``branches``.

        Returns the log-probabilities, the row of the distribution after the prompt's last
        token (first call only, else None), and each branch's slots and rows."""
        new_prompt = [] if self.started else self.prompt[self.length :]
        ids = list(new_prompt)
        positions = list(range(self.length, self.length + len(new_prompt)))
        past = self.length
        # rows of the kept logits: the prompt's last token (first call), then every branch token
        first_row = 1 if new_prompt else 0
        fed: list[FedBranch] = []
        above: list[tuple[int, ...]] = []  # each branch's path before its own tokens
        offsets: list[int] = []  # where each branch starts among the new tokens
        for branch in branches:
            offset = len(ids)
            offsets.append(offset)
            before = fed[branch.after].path if branch.after is not None else tuple(branch.path)
            depth = self.prompt_length + len(before)
            ids.extend(branch.tokens)
            positions.extend(range(depth, depth + len(branch.tokens)))
            above.append(before)
            row = first_row + offset - len(new_prompt)
            fed.append(
                FedBranch(
                    before + tuple(range(past + offset, past + offset + len(branch.tokens))),
                    range(row, row + len(branch.tokens)),
                )
            )
        count = len(ids)
        if count == 0:
            raise ValueError("nothing to feed")
        total = past + count
        visible = torch.zeros((count, total), dtype=torch.bool)
        if new_prompt:  # causal over the prompt
            rows = torch.arange(len(new_prompt))
            visible[: len(new_prompt)] = torch.arange(total)[None, :] <= (past + rows)[:, None]
        for branch, before, offset in zip(branches, above, offsets):
            k = len(branch.tokens)
            own = past + offset  # the branch's first slot
            rows = slice(offset, offset + k)
            visible[rows, : self.prompt_length] = True
            if before:
                visible[rows, list(before)] = True
            visible[rows, own : own + k] = torch.ones((k, k), dtype=torch.bool).tril()
        mask = torch.zeros((1, 1, count, total), dtype=self._dtype, device=self._device)
        mask.masked_fill_(~visible.to(self._device)[None, None], torch.finfo(self._dtype).min)
        # logits only where a distribution is needed (the rows above)
        keep = ([len(new_prompt) - 1] if new_prompt else []) + list(range(len(new_prompt), count))
        output = self.model(
            input_ids=torch.tensor([ids], device=self._device),
            attention_mask=mask,
            position_ids=torch.tensor([positions], device=self._device),
            past_key_values=self.cache,
            use_cache=True,
            logits_to_keep=torch.tensor(keep, device=self._device),
        )
        self.cache = output.past_key_values
        prompt_row = 0 if new_prompt else None
        if new_prompt and self.prefix is not None and self.reused == 0:  # the first prompt seen
            self.prefix.keep(self.prompt, self.cache, total)
        self.length, self.started = total, True
        return Forward(output.logits[0]), prompt_row, fed
