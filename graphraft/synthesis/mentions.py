"""L0: find the entity mentions in a question.

Extractors: marked mentions (``[brackets]`` or quotes), a lexical matcher over the graph's
own names (Aho-Corasick), and a few-shot chat prompt (paper appendix A.1) answered by any
OpenAI-compatible endpoint or by a local transformers model. ``auto`` picks marked when the
question has marks, else the endpoint when one is configured, else lexical."""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass

from graphraft.errors import ConfigurationError, GraphRAFTError
from graphraft.graph.loaders.questions import BRACKETED
from graphraft.models import pad_token_id
from graphraft.text import normalize_name

#: [bracketed], "quoted" or “quoted” (the bracket form is the one question files use)
_MARKED = re.compile(BRACKETED.pattern + r'|"([^"]+)"|“([^”]+)”')


@dataclass(frozen=True)
class Mention:
    text: str
    method: str  # marked | lexical | llm


class EntityExtractor(ABC):
    name: str = "extractor"

    @abstractmethod
    def extract(self, question: str) -> list[Mention]: ...


class MarkedMentionExtractor(EntityExtractor):
    """``[Tom Hanks]``, ``"Tom Hanks"`` or “Tom Hanks”."""

    name = "marked"

    @staticmethod
    def has_marks(question: str) -> bool:
        return _MARKED.search(question) is not None

    def extract(self, question: str) -> list[Mention]:
        found = []
        for match in _MARKED.finditer(question):
            text = next(group for group in match.groups() if group is not None).strip()
            if text and text not in (m.text for m in found):
                found.append(Mention(text, "marked"))
        return found


# Words that are names somewhere in most graphs but almost never the entity a question is about.
STOPWORDS = frozenset(
    (
        "a an and are as at be by did do does for from had has have he her his how i in is it its of on or "
        "she that the their them they this to was were what when where which who whom whose why will with "
        "you film films movie movies book books acted act directed written wrote released release year years "
        "language genre genres type types about also share same "
    ).split()
)


class LexicalExtractor(EntityExtractor):
    """Longest non-overlapping matches of the graph's normalised names, at word boundaries.

    Between overlapping matches the longer wins, then the rarer name (fewer nodes carry it)."""

    name = "lexical"

    def __init__(self, names: dict[str, int], min_length: int = 3, max_mentions: int = 3):
        import ahocorasick

        self.min_length = min_length
        self.max_mentions = max_mentions
        self._automaton = ahocorasick.Automaton()
        for key, count in names.items():
            if len(key) >= min_length and key not in STOPWORDS:
                self._automaton.add_word(key, (key, count))
        if len(self._automaton):
            self._automaton.make_automaton()

    @classmethod
    def from_store(cls, store, **kwargs) -> LexicalExtractor:
        return cls(store.name_counts(), **kwargs)

    def extract(self, question: str) -> list[Mention]:
        text = normalize_name(question)
        if not len(self._automaton):
            return []
        candidates = []
        for end, (key, count) in self._automaton.iter(text):
            start = end - len(key) + 1
            before_ok = start == 0 or not text[start - 1].isalnum()
            after_ok = end + 1 == len(text) or not text[end + 1].isalnum()
            if before_ok and after_ok:
                candidates.append((start, end + 1, key, count))
        candidates.sort(key=lambda c: (-(c[1] - c[0]), c[3], c[0]))
        taken: list[tuple[int, int, str, int]] = []
        for cand in candidates:
            if all(cand[1] <= t[0] or cand[0] >= t[1] for t in taken):
                taken.append(cand)
            if len(taken) == self.max_mentions:
                break
        return [Mention(key, "lexical") for _, _, key, _ in sorted(taken)]


# Few-shot prompt in the style of the paper's appendix A.1.
SYSTEM_PROMPT = (
    "You extract the named entities from a question about a knowledge graph. Entities are the specific "
    "things the question is about: people, titles, places, organisations, years, tags. Answer with a JSON "
    "list of strings, copied exactly as they appear in the question, and nothing else."
)
FEW_SHOT = [
    ("who directed the movies written by Christopher Nolan", ["Christopher Nolan"]),
    ("what genre is The Grand Budapest Hotel", ["The Grand Budapest Hotel"]),
    ("which films did Meryl Streep and Tom Hanks both act in", ["Meryl Streep", "Tom Hanks"]),
    ("what language is spoken in the films released in 1994", ["1994"]),
]


def chat_messages(question: str) -> list[dict[str, str]]:
    messages = [{"role": "system", "content": SYSTEM_PROMPT}]
    for shot_question, entities in FEW_SHOT:
        messages += [{"role": "user", "content": shot_question}, {"role": "assistant", "content": json.dumps(entities)}]
    messages.append({"role": "user", "content": question})
    return messages


def parse_entity_list(reply: str) -> list[str]:
    """A JSON list if there is one; otherwise one entity per non-empty line."""
    match = re.search(r"\[.*?\]", reply, re.DOTALL)
    if match:
        try:
            items = json.loads(match.group(0))
            if isinstance(items, list):
                return [str(item).strip() for item in items if str(item).strip()]
        except json.JSONDecodeError:
            pass
    return [line.strip(" -*\"'") for line in reply.splitlines() if line.strip(" -*\"'")]


class OpenAIChatExtractor(EntityExtractor):
    """Few-shot chat through any OpenAI-compatible endpoint (the ``openai`` client)."""

    name = "openai"

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None, timeout: float = 30.0):
        from openai import OpenAI

        self.model = model
        self._client = OpenAI(base_url=base_url, api_key=api_key or "unused", timeout=timeout, max_retries=1)

    def extract(self, question: str) -> list[Mention]:
        from openai import OpenAIError

        try:
            response = self._client.chat.completions.create(
                model=self.model, messages=chat_messages(question), temperature=0, max_tokens=128
            )
        except OpenAIError as exc:
            raise GraphRAFTError(f"entity extraction endpoint failed ({self.model}): {exc}") from None
        reply = response.choices[0].message.content or ""
        return [Mention(text, "llm") for text in parse_entity_list(reply) if text.lower() in question.lower()]


class LocalChatExtractor(EntityExtractor):
    """The same few-shot prompt on a local transformers chat model."""

    name = "local"

    def __init__(self, model, tokenizer, max_new_tokens: int = 48):
        self.model, self.tokenizer, self.max_new_tokens = model, tokenizer, max_new_tokens

    def extract(self, question: str) -> list[Mention]:
        import torch

        prompt = self.tokenizer.apply_chat_template(chat_messages(question), tokenize=False, add_generation_prompt=True)
        inputs = self.tokenizer(prompt, return_tensors="pt", add_special_tokens=False)
        with torch.no_grad():
            output = self.model.generate(
                **inputs,
                max_new_tokens=self.max_new_tokens,
                do_sample=False,
                pad_token_id=pad_token_id(self.tokenizer),
            )
        reply = self.tokenizer.decode(output[0, inputs["input_ids"].shape[1] :], skip_special_tokens=True)
        return [Mention(text, "llm") for text in parse_entity_list(reply) if text.lower() in question.lower()]


class AutoExtractor(EntityExtractor):
    """Marked mentions when the question has marks; else the chat endpoint if configured; else lexical."""

    name = "auto"

    def __init__(self, lexical_factory, chat: EntityExtractor | None = None):
        self._marked = MarkedMentionExtractor()
        self._lexical_factory = lexical_factory
        self._lexical: EntityExtractor | None = None
        self._chat = chat

    def extract(self, question: str) -> list[Mention]:
        if self._marked.has_marks(question):
            return self._marked.extract(question)
        if self._chat is not None:
            return self._chat.extract(question)
        if self._lexical is None:
            self._lexical = self._lexical_factory()
        return self._lexical.extract(question)


def make_extractor(kind: str, store, settings) -> EntityExtractor:
    """Build the extractor named in settings (``auto``, ``marked``, ``lexical``, ``openai``, ``local``)."""
    key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None

    def chat_endpoint():
        if not settings.llm_model:
            raise ConfigurationError("the openai extractor needs GRAPHRAFT_LLM_MODEL (and OPENAI_BASE_URL)")
        return OpenAIChatExtractor(settings.llm_model, settings.openai_base_url, key)

    if kind == "marked":
        return MarkedMentionExtractor()
    if kind == "lexical":
        return LexicalExtractor.from_store(store)
    if kind == "openai":
        return chat_endpoint()
    if kind == "local":
        from graphraft.models import load_causal_lm

        model, tokenizer = load_causal_lm(settings.base_model, settings.home)
        return LocalChatExtractor(model, tokenizer)
    if kind == "auto":
        chat = chat_endpoint() if (settings.llm_model and settings.openai_base_url) else None
        return AutoExtractor(lambda: LexicalExtractor.from_store(store), chat)
    raise ConfigurationError(f"unknown extractor {kind!r}; choose auto, marked, lexical, openai or local")
