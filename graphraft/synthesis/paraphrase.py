"""Rewrite generated questions the way people ask them, with any OpenAI-compatible chat model
(`base_url`): batched (many questions a request), cached in a JSONL file beside the output (a
rerun or another seed asks only for what is new; an interrupted run resumes), and checked (a
rewrite that drops or changes the entity is not used)."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable
from pathlib import Path

from graphraft.errors import ConfigurationError, GraphRAFTError
from graphraft.graph.loaders.questions import BRACKETED
from graphraft.sampling import stable_hash

logger = logging.getLogger(__name__)

SYSTEM_PROMPT = (
    "You rewrite questions about a knowledge graph the way a person would ask them: natural, varied "
    "wording, the same meaning. Keep every name exactly as written, and keep [brackets] where a name "
    "has them. Answer with a JSON list of strings, one rewrite per question, in order, and nothing else."
)


def keeps_entities(original: str, rewrite: str, names: Iterable[str] = ()) -> bool:
    """A rewrite is usable when every [marked] mention, and each given name, is still in it."""
    return all(mark.group(0) in rewrite for mark in BRACKETED.finditer(original)) and all(n in rewrite for n in names)


class ChatParaphraser:
    def __init__(
        self,
        model: str,
        cache_path: Path,
        base_url: str | None = None,
        api_key: str | None = None,
        batch_size: int = 16,
        timeout: float = 60.0,
    ):
        from openai import OpenAI

        self.model, self.batch_size = model, batch_size
        self.cache_path = Path(cache_path)
        self._client = OpenAI(base_url=base_url, api_key=api_key or "unused", timeout=timeout, max_retries=2)
        self.cache: dict[str, str | None] = {}
        if self.cache_path.exists():
            for line in self.cache_path.read_text(encoding="utf-8").splitlines():
                try:
                    entry = json.loads(line)
                    self.cache[entry["key"]] = entry["rewrite"]
                except (ValueError, KeyError):
                    continue  # a half-written last line from an interrupted run

    @classmethod
    def from_settings(cls, settings, cache_path: Path) -> ChatParaphraser:
        if not (settings.openai_base_url and settings.llm_model):
            raise ConfigurationError(
                "--paraphrase needs a chat model: set GRAPHRAFT_OPENAI_BASE_URL and GRAPHRAFT_LLM_MODEL"
            )
        key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
        return cls(settings.llm_model, cache_path, settings.openai_base_url, key)

    def _key(self, question: str) -> str:
        return stable_hash(f"{self.model}\n{question}")

    def rewrite(self, question: str) -> str | None:
        """The cached rewrite (None: none usable)."""
        return self.cache.get(self._key(question))

    def rewrite_many(self, questions: list[tuple[str, list[str]]], progress=None) -> None:
        """Ask for the questions (each with the names it must keep) not in the cache yet, a batch
        a request; each batch is appended to the cache as soon as it is answered."""
        from openai import OpenAIError

        todo = list({q: names for q, names in questions if self._key(q) not in self.cache}.items())
        self.cache_path.parent.mkdir(parents=True, exist_ok=True)
        with self.cache_path.open("a", encoding="utf-8") as sink:
            for start in range(0, len(todo), self.batch_size):
                batch = todo[start : start + self.batch_size]
                listing = json.dumps([q for q, _ in batch], ensure_ascii=False)
                try:
                    response = self._client.chat.completions.create(
                        model=self.model,
                        messages=[{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": listing}],
                        temperature=0.7,
                    )
                except OpenAIError as exc:
                    raise GraphRAFTError(f"paraphrasing endpoint failed ({self.model}): {exc}") from None
                replies = _json_list(response.choices[0].message.content or "")
                if len(replies) != len(batch):
                    logger.warning(
                        "paraphraser answered %d of %d questions; keeping them as written", len(replies), len(batch)
                    )
                    replies = [None] * len(batch)
                for (question, names), reply in zip(batch, replies):
                    usable = isinstance(reply, str) and reply.strip() and keeps_entities(question, reply, names)
                    entry = {
                        "key": self._key(question),
                        "question": question,
                        "rewrite": reply.strip() if usable else None,
                    }
                    self.cache[entry["key"]] = entry["rewrite"]
                    sink.write(json.dumps(entry, ensure_ascii=False) + "\n")
                sink.flush()
                if progress is not None:
                    progress(len(batch))


def _json_list(reply: str) -> list:
    match = re.search(r"\[.*\]", reply, re.DOTALL)
    if not match:
        return []
    try:
        items = json.loads(match.group(0))
    except json.JSONDecodeError:
        return []
    return items if isinstance(items, list) else []
