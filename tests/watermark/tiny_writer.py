"""A tiny byte-level llama trained for a few seconds on the shipped human texts, so that it writes
word-like text with spaces and full stops (random weights almost never end a sentence)."""
from __future__ import annotations

from pathlib import Path

import torch
from transformers import AutoModelForCausalLM

from backend.watermark.corpus import human_texts
from tests.support.tiny import byte_tokenizer, tiny_config


def build_tiny_writer(directory: Path, steps: int = 60, seed: int = 0) -> Path:
    """The writer of this test run: trained once by the first xdist worker that needs it, shared by the others
    (the same seeded weights each would train; `directory` is not used then)."""
    from tests.support.shared import built_once

    return built_once(f"models/tiny-writer-{steps}-{seed}", lambda path: train_tiny_writer(path, steps, seed))


def train_tiny_writer(directory: Path, steps: int = 60, seed: int = 0) -> Path:
    tokenizer = byte_tokenizer()
    torch.manual_seed(seed)
    config = tiny_config("llama", len(tokenizer))
    config.max_position_embeddings = 4096
    model = AutoModelForCausalLM.from_config(config)
    text = " ".join(human_texts())
    ids = torch.tensor(tokenizer(text, add_special_tokens=False)["input_ids"])
    optimiser = torch.optim.AdamW(model.parameters(), lr=1e-2)
    generator = torch.Generator().manual_seed(seed)
    model.train()
    for _ in range(steps):
        starts = torch.randint(0, len(ids) - 65, (8,), generator=generator)
        batch = torch.stack([ids[s:s + 64] for s in starts.tolist()])
        loss = model(input_ids=batch, labels=batch).loss
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    model.eval()
    directory.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(directory, safe_serialization=True)
    tokenizer.save_pretrained(directory)
    return directory
