"""Direct logit attribution: each head's and each MLP's direct contribution to one output token's logit (minus a
contrast token's), through the final norm with the scale of the full final residual. The parts (embedding, heads,
MLPs, biases) sum to the model's own logit (difference) before soft-capping; `backend.internals.decompose` says how
Gemma 3's post-norms are taken."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from backend.errors import UserError
from backend.internals.config import DlaConfig, same_token
from backend.internals.decompose import decompose, direction_of, run
from backend.internals.prompt import encode, position_index, single_token, token_text
from backend.models.readout import capped, readout_logits, softcap
from backend.progress import Progress, silent



@dataclass(frozen=True)
class DlaResult:
    tokens: tuple[str, ...]
    position: int  # 0-based
    target_id: int
    target_token: str
    contrast_id: int | None
    contrast_token: str | None
    heads: np.ndarray  # [L, H] logit units
    mlps: np.ndarray  # [L]
    embed: float
    biases: float  # attention/MLP output biases, the final norm's bias, the lm_head bias
    total: float  # embed + heads + mlps + biases
    logit: float  # the model's own logit (difference) before soft-capping, from its modules
    output_logit: float  # the same after the model's final-logit soft-capping (equal when it has none)
    softcap: float | None

    def to_json(self) -> dict:
        return {"tokens": list(self.tokens), "position": self.position,
                "target": {"token": self.target_token, "id": self.target_id},
                "contrast": None if self.contrast_id is None else {"token": self.contrast_token,
                                                                   "id": self.contrast_id},
                "heads": self.heads.tolist(), "mlps": self.mlps.tolist(), "embed": self.embed,
                "biases": self.biases, "total": self.total, "logit": self.logit,
                "output_logit": self.output_logit, "softcap": self.softcap}


@torch.no_grad()
def compute_dla(model, tokenizer, config: DlaConfig, progress: Progress = silent) -> DlaResult:
    encoded = encode(model, tokenizer, config.prompt)
    position = position_index(config.position, encoded.length)
    target = single_token(tokenizer, config.target, "target token") if config.target else None
    contrast = single_token(tokenizer, config.contrast, "contrast token") if config.contrast else None
    if target is not None and target == contrast:  # two spellings of one token
        raise UserError(same_token())
    progress(0.1, "forward pass reading every head")
    traced, final = run(model, encoded.ids)
    target = int(traced.logits[0, position].argmax()) if target is None else target
    if target == contrast:  # the contrast is the model's own prediction, the target asked for
        raise UserError(same_token(f"the model's prediction here ({token_text(tokenizer, target)!r})"))
    progress(0.6, "decomposing the final residual")
    parts = decompose(model, traced, final, position)
    direction, bias = direction_of(model, target, contrast)
    direct = parts.direct(direction, bias)
    heads, mlps = direct["heads"].cpu().numpy(), direct["mlps"].cpu().numpy()
    total = direct["embed"] + float(heads.sum(dtype=np.float64)) + float(mlps.sum(dtype=np.float64)) + direct["biases"]
    own = readout_logits(model, final[0, position], softcapped=False)  # the model's own read-out
    pick = lambda v: float(v[target] - (v[contrast] if contrast is not None else 0.0))  # noqa: E731
    progress(1.0, "attribution done")
    return DlaResult(tokens=encoded.tokens, position=position, target_id=target,
                     target_token=token_text(tokenizer, target), contrast_id=contrast,
                     contrast_token=None if contrast is None else token_text(tokenizer, contrast),
                     heads=heads.astype(np.float32), mlps=mlps.astype(np.float32), embed=direct["embed"],
                     biases=direct["biases"], total=total, logit=pick(own), output_logit=pick(capped(model, own)),
                     softcap=softcap(model))
