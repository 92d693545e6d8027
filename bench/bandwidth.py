"""The memory-bandwidth bound of a decoding step: how fast this machine reads memory, and how many bytes of weights
one greedy step of a model (or of its reduced copy) reads.

At batch 1 a CPU decoding step reads every weight matrix once and does little else, so
`bandwidth / bytes_per_token` tokens per second is the most any loop can reach with that model, and a contestant's
share of that bound says how much of the step is overhead (Python, small ops, a slow kernel) rather than reading.
"""
from __future__ import annotations

import statistics
import time

READ_BYTES = 512 * 2**20  # far beyond the caches, so the sum streams from memory


def measured_bandwidth(reps: int = 5) -> float:
    """Bytes per second that `torch.sum` streams through a large fp32 tensor at torch's current thread count
    (median of `reps` reads after one warm-up read)."""
    import torch

    data = torch.ones(READ_BYTES // 4)
    data.sum()
    seconds = []
    for _ in range(reps):
        start = time.perf_counter()
        data.sum()
        seconds.append(time.perf_counter() - start)
    return READ_BYTES / statistics.median(seconds)


def bytes_per_token(model) -> int:
    """Bytes of weights one batch-1 decoding step of `model` reads: every tensor of the decoder layers, the final
    norm and the output head (a head tied to the input embeddings counted once, as the head); the input embedding
    table is not read, only one row of it per token. Works for reduced copies (backend/models/reduced.py): their
    int8 / bf16 buffers are what their layers read (a packed head's MKL layout is the same bytes as its weight)."""
    import torch

    head = model.get_output_embeddings()
    skipped = ({id(p) for p in model.get_input_embeddings().parameters()}
               - {id(p) for p in head.parameters()} - {id(b) for b in head.buffers()})
    seen: set[int] = set()
    total = 0
    for module in model.modules():
        tensors = [*module.parameters(recurse=False),
                   *(b for name, b in module.named_buffers(recurse=False) if name != "packed")]
        for t in tensors:
            if id(t) in seen or id(t) in skipped or t.dtype in (torch.int64, torch.bool):  # ids, masks: not weights
                continue
            seen.add(id(t))
            total += t.numel() * t.element_size()
    return total
