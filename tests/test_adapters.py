"""One base model with L1 and L2 as named adapters: each stage runs exactly the model it
would run alone, the base model is the base model, and a wrong adapter is a clear error."""

from __future__ import annotations

import pytest
import torch

from graphraft.errors import ConfigurationError
from graphraft.inference.adapters import BASE, adapter_active, load_adapter, load_adapters, write_metadata
from graphraft.models import TINY_RANDOM, native_bfloat16, resolve_dtype


def random_adapter(graphraft_home, folder, task: str, seed: int):
    """A LoRA adapter with random (non-zero) weights on the tiny model, saved with metadata."""
    from peft import LoraConfig, get_peft_model

    from graphraft.models import tiny_random_model

    base, _ = tiny_random_model(graphraft_home, seed=0)
    torch.manual_seed(seed)
    config = LoraConfig(
        r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], init_lora_weights=False, task_type="CAUSAL_LM"
    )
    get_peft_model(base, config).save_pretrained(folder)
    write_metadata(folder, task, TINY_RANDOM)
    return folder


@pytest.fixture(scope="module")
def adapters(graphraft_home, tmp_path_factory):
    root = tmp_path_factory.mktemp("adapters")
    return {
        "l1": random_adapter(graphraft_home, root / "l1", "l1", 1),
        "l2": random_adapter(graphraft_home, root / "l2", "l2", 2),
    }


def logits(model, ids):
    with torch.no_grad():
        return model(input_ids=ids).logits


def test_each_named_adapter_runs_as_it_would_alone(graphraft_home, adapters):
    from graphraft.models import tiny_random_model

    ids = torch.tensor([[1, 2, 3, 4, 5]])
    plain = logits(tiny_random_model(graphraft_home, seed=0)[0], ids)
    alone = {
        task: logits(load_adapter(tiny_random_model(graphraft_home, seed=0)[0], folder, task, TINY_RANDOM), ids)
        for task, folder in adapters.items()
    }
    both = load_adapters(tiny_random_model(graphraft_home, seed=0)[0], adapters, TINY_RANDOM)
    for _ in range(2):  # switching back and forth changes nothing
        for task in ("l1", "l2"):
            with adapter_active(both, task) as model:
                assert torch.allclose(logits(model, ids), alone[task], atol=1e-6)
        with adapter_active(both, BASE) as model:
            assert torch.allclose(logits(model, ids), plain, atol=1e-6)
    assert not torch.allclose(alone["l1"], alone["l2"])  # the adapters do differ
    # one copy of the base weights, not one per adapter
    names = [n for n, _ in both.named_parameters() if "lora_" not in n]
    assert len(names) == len(set(names)) == len(list(tiny_random_model(graphraft_home, seed=0)[0].parameters()))
    with pytest.raises(ConfigurationError, match="no adapter named 'l3'"), adapter_active(both, "l3"):
        pass


def test_an_adapter_for_the_other_task_is_refused(graphraft_home, adapters):
    from graphraft.models import tiny_random_model

    with pytest.raises(ConfigurationError, match="task is 'l2', expected 'l1'"):
        load_adapters(tiny_random_model(graphraft_home, seed=0)[0], {"l1": adapters["l2"]}, TINY_RANDOM)


def test_dtype_settings():
    assert resolve_dtype("float32") is torch.float32
    assert resolve_dtype("bfloat16") is torch.bfloat16
    assert resolve_dtype("auto") is (torch.bfloat16 if native_bfloat16() else torch.float32)
    with pytest.raises(ConfigurationError, match="unknown dtype 'float16'"):
        resolve_dtype("float16")
