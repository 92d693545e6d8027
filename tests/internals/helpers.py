"""Tiny models the shared fixtures lack: biases everywhere (so the bias term is not zero) and Gemma 3 with
final-logit soft-capping."""
from __future__ import annotations

import torch
from transformers import AutoModelForCausalLM

from tests.support.tiny import GEMMA_WINDOW, byte_tokenizer, tiny_config

PROMPT = "Paris is a city in Fr"  # 21 byte tokens: longer than the tiny Gemma's sliding window
assert len(PROMPT) > 2 * GEMMA_WINDOW


def tiny_variant(arch: str, seed: int = 1, **overrides):
    """(model, tokenizer): a tiny random `arch` model with config overrides, eval mode, fp32."""
    tokenizer = byte_tokenizer()
    config = tiny_config(arch, len(tokenizer))
    for name, value in overrides.items():
        setattr(config, name, value)
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config).eval()
    with torch.no_grad():
        for name, param in model.named_parameters():
            if name.endswith("norm.weight") or name.endswith("bias"):
                param.normal_(0.0, 0.3)  # non-trivial gains and biases
    return model, tokenizer


VARIANTS = {
    "llama-biases": lambda: tiny_variant("llama", attention_bias=True, mlp_bias=True),
    "gemma3-softcap": lambda: tiny_variant("gemma3", final_logit_softcapping=0.05),
}
