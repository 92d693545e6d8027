"""Input attribution (inseq's question: which input tokens did this output come from). One target token after the
prompt (given, or the model's prediction), or a greedy continuation from the project's kernel with each generated
token attributed to the prompt and the tokens generated before it: a targets × sources matrix. The methods are in
`backend.internals.attribution_methods`."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from backend.internals.attribution_methods import attribute, baseline_ids
from backend.internals.config import AttributeConfig
from backend.internals.prompt import encode, single_token, token_text
from backend.models.kernel import decode, greedy_policy, start
from backend.models.rules import model_stop_ids
from backend.progress import Progress, silent



@dataclass(frozen=True)
class AttributionResult:
    """Sources: the prompt's tokens, then the continuation's but its last. scores `[targets, sources]`: target i's
    attribution to each source, NaN on the sources written after it (target i sees n_prompt + i sources)."""

    tokens: tuple[str, ...]
    n_prompt: int
    targets: tuple[str, ...]
    target_ids: tuple[int, ...]
    scores: np.ndarray  # [targets, sources]
    f_input: np.ndarray  # [targets] f after the real input
    f_baseline: np.ndarray  # [targets] f after the baseline
    deltas: np.ndarray | None  # [targets] integrated gradients' convergence deltas; None for the other methods
    method: str
    function: str  # "probability" | "logit"
    baseline_token: str

    @property
    def delta(self) -> float | None:
        """The largest convergence delta in absolute value (what completeness is checked against)."""
        return None if self.deltas is None else float(self.deltas[np.abs(self.deltas).argmax()])

    def to_json(self) -> dict:
        scores = [[None if np.isnan(v) else float(v) for v in row] for row in self.scores]
        return {"tokens": list(self.tokens), "targets": list(self.targets), "scores": scores, "delta": self.delta,
                "method": self.method, "function": self.function, "n_prompt": self.n_prompt,
                "target_ids": list(self.target_ids), "f_input": self.f_input.tolist(),
                "f_baseline": self.f_baseline.tolist(), "baseline_token": self.baseline_token,
                "deltas": None if self.deltas is None else self.deltas.tolist()}


def continuation(model, tokenizer, ids: torch.Tensor, n: int) -> list[int]:
    """n greedy tokens (fewer when a stop id ends it, kept) from the kernel, the one token loop."""
    decoder = start(model, ids, max_new_tokens=n)
    return decode(decoder, greedy_policy, n, model_stop_ids(model, tokenizer), speculate=True).row(0)


def compute_attribution(model, tokenizer, config: AttributeConfig, progress: Progress = silent) -> AttributionResult:
    encoded = encode(model, tokenizer, config.prompt)
    if config.generate:
        targets = continuation(model, tokenizer, encoded.ids, config.generate)  # refuses over the context first
        progress(0.1, f"generated {len(targets)} tokens")
    elif config.target:
        targets = [single_token(tokenizer, config.target, "target token")]
    else:  # the model's own prediction
        targets = continuation(model, tokenizer, encoded.ids, 1)
    full = torch.cat([encoded.ids, torch.tensor([targets[:-1]], dtype=torch.long, device=encoded.ids.device)], 1)
    baseline, fill = baseline_ids(tokenizer, full)
    n_prompt, n_sources = encoded.length, full.shape[1]
    scores = np.full((len(targets), n_sources), np.nan)
    f_input, f_baseline, deltas = np.zeros(len(targets)), np.zeros(len(targets)), np.zeros(len(targets))
    for i, target in enumerate(targets):
        progress(0.1 + 0.9 * i / len(targets), f"attributing target {i + 1} of {len(targets)}")
        seen = n_prompt + i
        found, f_input[i], f_baseline[i] = attribute(model, config.method, full[:, :seen], baseline[:, :seen],
                                                     target, config.function, config.steps)
        scores[i, :seen] = found.scores
        deltas[i] = np.nan if found.delta is None else found.delta
    progress(1.0, "attribution done")
    return AttributionResult(tokens=tuple(token_text(tokenizer, int(i)) for i in full[0]), n_prompt=n_prompt,
                             targets=tuple(token_text(tokenizer, t) for t in targets), target_ids=tuple(targets),
                             scores=scores, f_input=f_input, f_baseline=f_baseline,
                             deltas=None if np.isnan(deltas).all() else deltas, method=config.method,
                             function=config.function, baseline_token=token_text(tokenizer, fill))
