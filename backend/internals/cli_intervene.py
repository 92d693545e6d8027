"""The causal verbs' part of `python -m backend inspect`: `patch`, `ablate`, `steer` (flags and plain-text tables;
`backend.internals.cli` runs them like the other inspect verbs)."""
from __future__ import annotations

import numpy as np

from backend.internals.ablation import AblateResult
from backend.internals.intervene_config import AblateConfig, PatchConfig, SteerConfig
from backend.internals.patching import PatchResult, cell_name
from backend.internals.steering import SteerResult


def patch_table(result: PatchResult) -> dict:
    cells = [np.unravel_index(i, result.values.shape) for i in np.abs(result.values).ravel().argsort()[::-1][:5]]
    named = [cell_name(result.site, tuple(int(v) for v in c)) for c in cells]
    return {"site": result.site, "target - contrast": f"{result.target_token!r} - {result.contrast_token!r}",
            "clean logit diff": f"{result.clean_logit_diff:.4f}",
            "corrupted logit diff": f"{result.corrupted_logit_diff:.4f}",
            "largest effects": ", ".join(f"{n} {result.values[c]:+.3f}" for n, c in zip(named, cells))}


def ablate_table(result: AblateResult) -> list[dict]:
    rows = []
    for name, run in (("before", result.before), ("after", result.after)):
        rows.append({"run": name, "top": ", ".join(f"{t!r} {p:.3f}" for t, p in run.top[:3]),
                     "logit diff": f"{run.logit_diff:.4f}", "generation": run.generation})
    return rows


def steer_table(result: SteerResult) -> list[dict]:
    return [{"coefficient": c, "generation": g, "lens top-1 (last layer)": tokens[-1]}
            for c, g, tokens in zip(result.coefficients, result.generations, result.lens_tokens)]


FLAGS = {PatchConfig: ("clean", "corrupted", "target", "contrast", "site", "top_k"),
         AblateConfig: ("prompt", "heads", "layers", "mlps", "neurons", "mode", "reference", "target", "contrast",
                        "generate", "top_k"),
         SteerConfig: ("plus", "minus", "layer", "coefficients", "prompt", "max_new_tokens")}
VERBS = {"patch": (PatchConfig, patch_table, "activation patching from a clean prompt into a corrupted one"),
         "ablate": (AblateConfig, ablate_table, "zero- or mean-ablate heads, layers, MLPs or neurons"),
         "steer": (SteerConfig, steer_table, "add a plus-minus residual direction at a layer while generating")}
