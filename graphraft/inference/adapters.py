"""Trained adapters and the metadata that says what they were trained for.

An adapter folder holds the PEFT LoRA weights and ``graphraft_adapter.json``: the task (l1 or
l2), the base model, the prompt template version and the renderer version. ``ask`` refuses an
adapter whose metadata does not match what it is about to run."""

from __future__ import annotations

import json
import logging
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from graphraft.errors import ConfigurationError
from graphraft.inference.prompts import L1_PROMPT_VERSION, L2_PROMPT_VERSION, schema_hint
from graphraft.synthesis.patterns import RENDERER_VERSION

METADATA_FILE = "graphraft_adapter.json"

logger = logging.getLogger(__name__)


def expected_metadata(task: str, base_model: str) -> dict[str, Any]:
    return {
        "task": task,
        "base_model": base_model,
        "prompt_version": L1_PROMPT_VERSION if task == "l1" else L2_PROMPT_VERSION,
        "renderer_version": RENDERER_VERSION,
    }


def write_metadata(folder: Path, task: str, base_model: str, **extra) -> None:
    data = {**expected_metadata(task, base_model), **extra}
    (Path(folder) / METADATA_FILE).write_text(json.dumps(data, indent=2))


def read_metadata(folder: Path) -> dict[str, Any]:
    path = Path(folder) / METADATA_FILE
    if not path.is_file():
        raise ConfigurationError(f"{folder} is not a GraphRAFT adapter ({METADATA_FILE} is missing)")
    try:
        return json.loads(path.read_text())
    except ValueError as exc:
        raise ConfigurationError(f"{path}: unreadable adapter metadata: {exc}") from None


def check_metadata(folder: Path, task: str, base_model: str) -> dict[str, Any]:
    """The adapter's metadata, or a one-line error naming what differs."""
    found = read_metadata(folder)
    wanted = expected_metadata(task, base_model)
    wrong = [
        f"{key} is {found.get(key)!r}, expected {value!r}" for key, value in wanted.items() if found.get(key) != value
    ]
    if wrong:
        raise ConfigurationError(f"adapter {folder} does not fit: " + "; ".join(wrong))
    return found


def load_adapter(model, folder: Path, task: str, base_model: str):
    """The base model with the adapter applied (checked first)."""
    return load_adapters(model, {task: folder}, base_model)


def load_adapters(model, folders: dict[str, Path], base_model: str):
    """One base model with several named adapters (PEFT multi-adapter), each checked first and
    named after its task ('l1', 'l2'): half the memory and load time of one copy each. Pick
    one per call with ``adapter_active``."""
    from peft import PeftModel

    for task, folder in folders.items():
        check_metadata(folder, task, base_model)
    adapted = None
    for task, folder in folders.items():
        if adapted is None:
            adapted = PeftModel.from_pretrained(model, str(folder), adapter_name=task)
        else:
            adapted.load_adapter(str(folder), adapter_name=task)
    if adapted is None:
        return model
    adapted.eval()
    return adapted


BASE = "base"  # the adapter name that means: the base model, adapters disabled


@contextmanager
def adapter_active(model, name: str | None):
    """Run with adapter ``name`` active on a multi-adapter model, or the base model for
    ``BASE`` (adapters disabled); None, or a model without adapters: as it is."""
    from peft import PeftModel

    if name is None or not isinstance(model, PeftModel):
        yield model
    elif name == BASE:
        with model.disable_adapter():
            yield model
    else:
        if name not in model.peft_config:
            raise ConfigurationError(f"no adapter named {name!r} is loaded (have {', '.join(model.peft_config)})")
        if model.active_adapter != name:
            model.set_adapter(name)
        yield model


def l1_schema_hint(folder: Path | None, store) -> str | None:
    """The schema line L1's adapter was trained with in its prompt (None: trained without, or no
    adapter). Ask, eval and L2's training use the recorded line, so L1 sees the prompt it learned;
    when the graph's schema has changed since, that is logged (train L1 again to see the new one).
    An adapter that recorded only that it used hints gets the graph's line now."""
    if folder is None:
        return None
    trained = read_metadata(folder)
    if not trained.get("schema_hints"):
        return None
    now = schema_hint(store)
    recorded = trained.get("schema_hint", now)
    if recorded != now:
        logger.warning("the graph's schema changed since %s was trained; L1 is given the schema it learned", folder)
    return recorded


def l1_exemplars(folder: Path | None, store, home: Path):
    """The solved questions L1's adapter was trained to read before a question (an
    ``exemplars.Exemplars`` of the store's graph), or None: trained without them, or no adapter."""
    if folder is None:
        return None
    k = read_metadata(folder).get("prompt_examples", 0)
    if not k:
        return None
    from graphraft.inference.exemplars import Exemplars, bundled_embedder

    embedder = bundled_embedder(home)
    return Exemplars.load(folder, k, embedder.embed).for_graph(getattr(store, "graph_name", None))
