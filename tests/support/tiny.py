"""Tiny random-weight models (2 layers, 4 heads, 2 kv heads, hidden 64) with a real byte-level tokenizer.

Saved as ordinary model directories (config.json + safetensors + tokenizer), so the tests load them
through the same allowlist and loader as real models; no network needed.
"""
from __future__ import annotations

import os
from pathlib import Path

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers
from transformers import (AutoModelForCausalLM, Gemma3TextConfig, GPT2Config, LlamaConfig, PreTrainedTokenizerFast,
                          Qwen2Config, Qwen3Config)

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CHAT_TEMPLATE = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
                 "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
ARCHITECTURES = ("gpt2", "llama", "qwen2", "qwen3", "gemma3")
GEMMA_WINDOW = 6  # the tiny Gemma's sliding window: tests with longer sequences cross it


def byte_tokenizer() -> PreTrainedTokenizerFast:
    """256 byte tokens + 3 specials: encodes any text, decodes it back exactly."""
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    vocab = {ch: i for i, ch in enumerate(sorted(alphabet))}
    for special in SPECIALS:
        vocab[special] = len(vocab)
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", bos_token="<|endoftext|>",
                                   pad_token="<|endoftext|>", additional_special_tokens=SPECIALS)
    fast.chat_template = CHAT_TEMPLATE
    return fast


def tiny_config(arch: str, vocab_size: int):
    common = dict(vocab_size=vocab_size, bos_token_id=vocab_size - 3, eos_token_id=vocab_size - 1,
                  pad_token_id=vocab_size - 3)
    if arch == "gpt2":
        return GPT2Config(n_embd=64, n_layer=2, n_head=4, n_positions=256, **common)
    llama_like = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                      num_key_value_heads=2, max_position_embeddings=256, **common)
    if arch == "llama":
        return LlamaConfig(**llama_like)
    if arch == "qwen2":
        return Qwen2Config(**llama_like)
    if arch == "qwen3":
        return Qwen3Config(head_dim=16, **llama_like)
    if arch == "gemma3":  # QK-norm, (1 + w) norms, sqrt(hidden) embedding scale, scaling 1/sqrt(24) != 1/sqrt(16),
        # a sliding-window layer then a full one (each with its own rotary table)
        return Gemma3TextConfig(head_dim=16, query_pre_attn_scalar=24, sliding_window=GEMMA_WINDOW,
                                layer_types=["sliding_attention", "full_attention"], **llama_like)
    raise ValueError(arch)


def build_tiny_model(arch: str, directory: Path, seed: int = 0) -> Path:
    """Write a tiny random model of `arch` to `directory` and return it."""
    tokenizer = byte_tokenizer()
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(tiny_config(arch, len(tokenizer)))
    if arch == "gemma3":  # Gemma initialises its norm weights at 0 (gain 1 + w = 1): make the "+ 1" matter
        with torch.no_grad():
            for name, param in model.named_parameters():
                if name.endswith("norm.weight"):
                    param.normal_(0.0, 0.3)
    directory.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(directory, safe_serialization=True)
    tokenizer.save_pretrained(directory)
    return directory


def save_for_tokenizer(directory: Path, tokenizer: PreTrainedTokenizerFast, seed: int = 0, config=None) -> Path:
    """A tiny random llama sized to `tokenizer` (or one of `config`), saved with that tokenizer to `directory`:
    a model that differs from the shared ones in its tokenizer (another vocabulary, another eos)."""
    torch.manual_seed(seed)
    AutoModelForCausalLM.from_config(config or tiny_config("llama", len(tokenizer))).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def allow_model(monkeypatch, model_id: str, directory: Path) -> None:
    """Put the model saved in `directory` on this test's allowlist as `model_id` (DASH_EXTRA_MODELS)."""
    monkeypatch.setenv("DASH_EXTRA_MODELS", os.environ["DASH_EXTRA_MODELS"] + f";{model_id}={directory}")
