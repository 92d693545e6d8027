"""Steering with a direction of one's own (activation addition, Turner et al. 2023): the vector is the mean
residual stream entering a layer at the last token of the "plus" prompts minus that of the "minus" prompts; it is
added, times a coefficient, to the residual entering that layer at every position of a prompt and of its greedy
continuation. One row per coefficient, decoded side by side by the kernel; and the logit lens (the residual
entering each layer, then the final one, read out as the model's output) of each steered prompt's last token."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from backend.internals.units import lines
from backend.internals.intervene_config import SteerConfig, coefficient_values
from backend.internals.prompt import check_layer, encode, token_text
from backend.models.architecture import arch_info
from backend.models.kernel import decode, greedy_policy, start, start_many
from backend.models.readout import capture_final_residual, readout_logits
from backend.models.rules import check_room, model_stop_ids
from backend.models.sites import SiteAdd, intervened
from backend.progress import Progress, silent



@dataclass(frozen=True)
class SteerResult:
    tokens: tuple[str, ...]  # the prompt's
    layer: int
    coefficients: tuple[float, ...]
    generations: tuple[str, ...]  # one per coefficient
    vector_norm: float  # |plus - minus|
    lens_tokens: tuple[tuple[str, ...], ...]  # [coefficients][L + 1] top-1 at the prompt's last token
    lens_probs: np.ndarray  # [coefficients, L + 1]

    def to_json(self) -> dict:
        return {"tokens": list(self.tokens), "layer": self.layer, "vector_norm": self.vector_norm,
                "runs": [{"coefficient": c, "generation": g,
                          "lens": [{"layer": i, "token": t, "prob": float(p)}
                                   for i, (t, p) in enumerate(zip(tokens, probs))]}
                         for c, g, tokens, probs in zip(self.coefficients, self.generations, self.lens_tokens,
                                                        self.lens_probs)]}


def mean_residual(model, tokenizer, texts: tuple[str, ...], layer: int) -> torch.Tensor:
    """`[hidden]` mean of the residual entering `layer` at each text's last token."""
    total = None
    for text in texts:
        with intervened(model, reads=[("resid_pre", layer)]) as seen:
            start(model, encode(model, tokenizer, text).ids)
        last = seen[("resid_pre", layer)][0][0, -1].double()
        total = last if total is None else total + last
    return (total / len(texts)).float()


def steered_lens(model, ids: torch.Tensor, add: SiteAdd, rows: int) -> torch.Tensor:
    """`[rows, L + 1, V]` logits of the residual entering each layer and the final one, at the last token."""
    n_layers = arch_info(model).n_layers
    with capture_final_residual(model) as final, \
            intervened(model, [add], reads=[("resid_pre", layer) for layer in range(n_layers)]) as seen:
        start_many(model, [ids] * rows)
    stack = [seen[("resid_pre", layer)][0][:, -1] for layer in range(n_layers)] + [final[-1][:, -1]]
    return readout_logits(model, torch.stack(stack, dim=1).float())


@torch.no_grad()
def compute_steer(model, tokenizer, config: SteerConfig, progress: Progress = silent) -> SteerResult:
    layer = check_layer(model, config.layer)
    coefficients = coefficient_values(config.coefficients)
    plus, minus = lines(config.plus, "plus prompts"), lines(config.minus, "minus prompts")
    encoded = encode(model, tokenizer, config.prompt)
    check_room(model, encoded.length, config.max_new_tokens)
    progress(0.05, "reading the steering vector")
    vector = mean_residual(model, tokenizer, plus, layer) - mean_residual(model, tokenizer, minus, layer)
    rows = len(coefficients)
    add = SiteAdd(site="resid_pre", layer=layer, vector=vector, scales=torch.tensor(coefficients))
    progress(0.2, f"{rows} steered generations side by side")
    with intervened(model, [add]):
        out = decode(start_many(model, [encoded.ids] * rows, max_new_tokens=config.max_new_tokens), greedy_policy,
                     config.max_new_tokens, model_stop_ids(model, tokenizer))
    generations = tuple(tokenizer.decode(out.row(i, keep_stop=False), skip_special_tokens=True) for i in range(rows))
    progress(0.85, "logit lens of the steered runs")
    probs = torch.softmax(steered_lens(model, encoded.ids, add, rows), dim=-1)
    best = probs.max(dim=-1)
    progress(1.0, "steering done")
    return SteerResult(tokens=encoded.tokens, layer=layer, coefficients=coefficients, generations=generations,
                       vector_norm=float(vector.norm()),
                       lens_tokens=tuple(tuple(token_text(tokenizer, int(i)) for i in row) for row in best.indices),
                       lens_probs=best.values.float().cpu().numpy().astype(np.float32))
