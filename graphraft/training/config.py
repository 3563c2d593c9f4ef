"""Training configuration (TRL style: a config object beside the trainer), read from YAML
in training/ with command-line overrides."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, Field, ValidationError

from graphraft.errors import InputFileError
from graphraft.inference.prompts import DETAIL_CHARS


class LoraSettings(BaseModel):
    r: int = Field(16, gt=0)
    alpha: int = Field(32, gt=0)
    dropout: float = Field(0.05, ge=0.0, lt=1.0)
    target_modules: list[str] = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
    # Adapt only the top N transformer layers (None: all). Backpropagation then stops there:
    # a step costs about half as much with the top 10 of SmolLM2-135M's 30 layers.
    top_layers: int | None = Field(None, gt=0)


class TrainConfig(BaseModel):
    task: Literal["l1", "l2"]
    base_model: str = "bundled"  # 'bundled', a folder, a hub id, or 'tiny-random' (tests)
    data: list[Path]  # synthesis JSONL files
    output_dir: Path
    graph: str | None = None  # graph the data was synthesised on (validation, L2 evidence)
    max_train_examples: int | None = 3000  # a stable sample, equal shares per hop
    validation_examples: int = 500
    epochs: float = 1.0
    batch_size: int = 8
    gradient_accumulation: int = 1
    learning_rate: float = 5e-4
    warmup_ratio: float = 0.03
    max_length: int = 384
    schema_hints: bool = False
    seed: int = 0
    # bfloat16 autocast; only where the hardware computes it natively (CUDA, a CPU with
    # AVX512-BF16 or AMX): emulated bfloat16 is slower than float32
    bf16: bool = False
    # no compute on padding: each batch is one sequence of the examples laid end to end, with
    # position ids restarting per example (a block-diagonal causal mask; no cross-talk). Worth
    # it for short examples (L1: 1.14x the examples a minute, benchmarks/train_speed.py); with
    # long ones (L2's evidence) the attention over one long sequence can cost more than padding
    padding_free: bool = False
    # padding-free, and the beginning all of a batch's examples share (the system prompt) fed
    # once for the batch, each example attending to it (graphraft/packing.py); takes
    # precedence over padding_free
    shared_prefix: bool = False
    load_in_4bit: bool = False  # QLoRA through bitsandbytes, only when CUDA is present
    save_steps: int = 100
    logging_steps: int = 10
    eval_batch_size: int = 16
    max_hops: int = 3
    l2_queries: int = 3  # queries whose results make up one L2 evidence block
    evidence_tokens: int = 700
    # L2: characters of node details per evidence line (0: name and label only, so more of
    # the retrieved nodes fit the token budget); `ask` uses what the adapter was trained with
    evidence_details: int = Field(DETAIL_CHARS, ge=0)
    # L2: an L1 adapter whose top query opens each evidence block, as at ask time; without
    # one, the best query is placed among the sampled ones at random
    l1_adapter: Path | None = None
    lora: LoraSettings = LoraSettings()

    @classmethod
    def from_yaml(cls, path: Path, **overrides) -> TrainConfig:
        path = Path(path)
        if not path.is_file():
            raise InputFileError(f"{path}: training config not found")
        try:
            data = yaml.safe_load(path.read_text()) or {}
        except yaml.YAMLError as exc:
            raise InputFileError(f"{path}: not valid YAML: {exc}") from None
        if not isinstance(data, dict):
            raise InputFileError(f"{path}: expected a mapping of settings")
        data.update({k: v for k, v in overrides.items() if v is not None})
        for key in ("data",):
            if key in data:
                values = data[key] if isinstance(data[key], list) else [data[key]]
                data[key] = [str(v) for v in values]
        try:
            config = cls.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise InputFileError(f"{path}: {where}: {first['msg']}") from None
        return config
