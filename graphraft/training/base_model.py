"""The base model training starts from: the bundled model (or a folder or hub id), the tiny
random model for tests, or a 4-bit quantised one for QLoRA on a GPU."""

from __future__ import annotations

from pathlib import Path

from graphraft.training.config import TrainConfig


def load_base(config: TrainConfig, home: Path):
    import torch

    from graphraft.models import TINY_RANDOM, load_causal_lm, tiny_random_model

    if config.base_model == TINY_RANDOM:
        return tiny_random_model(home, seed=config.seed)
    quantization = None
    if config.load_in_4bit and torch.cuda.is_available():
        from transformers import BitsAndBytesConfig

        quantization = BitsAndBytesConfig(
            load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=torch.bfloat16
        )
    if quantization is None:
        return load_causal_lm(
            config.base_model, home, dtype=torch.bfloat16 if config.bf16 and torch.cuda.is_available() else None
        )
    from transformers import AutoModelForCausalLM

    from graphraft.models import load_tokenizer, resolve_model_path

    model = AutoModelForCausalLM.from_pretrained(
        resolve_model_path(config.base_model, home), quantization_config=quantization, device_map="auto"
    )
    return model, load_tokenizer(config.base_model, home)


# ---------------------------------------------------------------------------------- validation
