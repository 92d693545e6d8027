"""The green list after a given previous token: the first gamma*|V| entries of a permutation of the
vocabulary seeded by HMAC(KGW key, previous token id). Cached per (key, previous token)."""
from __future__ import annotations

from collections import OrderedDict

import torch

from backend.watermark.keys import Key

_CACHE_SIZE = 4096


class GreenLists:
    def __init__(self, key: Key, vocab_size: int, gamma: float):
        self.key, self.vocab_size, self.gamma = key, vocab_size, gamma
        self.size = int(gamma * vocab_size)
        self._cache: OrderedDict[int, torch.Tensor] = OrderedDict()

    def mask(self, previous: int) -> torch.Tensor:
        """`[vocab]` bool, True for green tokens."""
        previous = int(previous)
        if previous in self._cache:
            self._cache.move_to_end(previous)
            return self._cache[previous]
        seed = int.from_bytes(self.key.mac(f"kgw|{previous}".encode())[:8], "big") & ((1 << 63) - 1)
        perm = torch.randperm(self.vocab_size, generator=torch.Generator().manual_seed(seed))
        mask = torch.zeros(self.vocab_size, dtype=torch.bool)
        mask[perm[:self.size]] = True
        self._cache[previous] = mask
        if len(self._cache) > _CACHE_SIZE:
            self._cache.popitem(last=False)
        return mask

    def processor(self, delta: float):
        """A logits processor (transformers' signature): +delta on the green list of each row, seeded by its last id."""
        def apply(input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:  # input_ids [n, L]
            bias = torch.stack([self.mask(int(p)) for p in input_ids[:, -1].tolist()]).to(scores.device)
            return scores + delta * bias[:, :scores.shape[-1]].float()
        return apply
