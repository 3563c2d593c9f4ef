"""Trained adapters and the metadata that says what they were trained for.

An adapter folder holds the PEFT LoRA weights and ``graphraft_adapter.json``: the task (l1 or
l2), the base model, the prompt template version and the renderer version. ``ask`` refuses an
adapter whose metadata does not match what it is about to run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from graphraft.errors import ConfigurationError
from graphraft.patterns import RENDERER_VERSION
from graphraft.prompts import L1_PROMPT_VERSION, L2_PROMPT_VERSION

METADATA_FILE = "graphraft_adapter.json"


def expected_metadata(task: str, base_model: str) -> dict[str, Any]:
    return {"task": task, "base_model": base_model,
            "prompt_version": L1_PROMPT_VERSION if task == "l1" else L2_PROMPT_VERSION,
            "renderer_version": RENDERER_VERSION}


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
    wrong = [f"{key} is {found.get(key)!r}, expected {value!r}" for key, value in wanted.items()
             if found.get(key) != value]
    if wrong:
        raise ConfigurationError(f"adapter {folder} does not fit: " + "; ".join(wrong))
    return found


def load_adapter(model, folder: Path, task: str, base_model: str):
    """The base model with the adapter applied (checked first)."""
    from peft import PeftModel

    check_metadata(folder, task, base_model)
    adapted = PeftModel.from_pretrained(model, str(folder))
    adapted.eval()
    return adapted
