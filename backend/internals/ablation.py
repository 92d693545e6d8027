"""Ablation: zero a set of heads, attention layers, MLP layers or MLP neurons, or replace them by their mean over
reference texts (mean ablation keeps the component's typical output and removes only what depends on this prompt;
zero is the simpler, harsher one). Compares the final position's top tokens, the target's logit (difference) and
a short greedy generation (the kernel's) before and after."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from backend.errors import UserError
from backend.internals.intervene_config import AblateConfig
from backend.internals.prompt import encode, single_token, token_text
from backend.internals.units import heads as named_heads
from backend.internals.units import layers as named_layers
from backend.internals.units import lines, neurons
from backend.models.architecture import arch_info
from backend.models.kernel import decode, greedy_policy, start
from backend.models.rules import model_stop_ids
from backend.models.sites import Ablation, intervened
from backend.progress import Progress, silent



@dataclass(frozen=True)
class RunView:
    """One run (before or after) at the prompt's final position."""

    top: tuple[tuple[str, float], ...]  # (token, probability)
    logit_diff: float  # logit[target] (- logit[contrast])
    generation: str  # greedy continuation ("" when none was asked for)

    def to_json(self) -> dict:
        return {"top": [{"token": t, "prob": p} for t, p in self.top], "logit_diff": self.logit_diff,
                "generation": self.generation}


@dataclass(frozen=True)
class AblateResult:
    tokens: tuple[str, ...]
    ablated: tuple[str, ...]  # e.g. "head 5.3", "attention 4", "MLP 5", "neuron 12:401"
    mode: str
    target_token: str
    contrast_token: str | None
    before: RunView
    after: RunView

    def to_json(self) -> dict:
        return {"tokens": list(self.tokens), "ablated": list(self.ablated), "mode": self.mode,
                "target": self.target_token, "contrast": self.contrast_token, "before": self.before.to_json(),
                "after": self.after.to_json()}


def _sites(model, config: AblateConfig) -> tuple[list[tuple[str, int, tuple[int, ...] | None]], tuple[str, ...]]:
    """(site, layer, units) to ablate and their labels; refuses an empty set."""
    picked, labels = [], []
    by_layer: dict[int, list[int]] = {}
    for layer, head in named_heads(model, config.heads):
        by_layer.setdefault(layer, []).append(head)
        labels.append(f"head {layer}.{head}")
    picked += [("head", layer, tuple(hs)) for layer, hs in by_layer.items()]
    for layer in named_layers(model, config.layers, "Attention layers"):
        picked.append(("attn_out", layer, None))
        labels.append(f"attention {layer}")
    for layer in named_layers(model, config.mlps, "MLP layers"):
        picked.append(("mlp_out", layer, None))
        labels.append(f"MLP {layer}")
    by_layer = {}
    for layer, index in neurons(model, config.neurons):
        by_layer.setdefault(layer, []).append(index)
        labels.append(f"neuron {layer}:{index}")
    picked += [("neuron", layer, tuple(idx)) for layer, idx in by_layer.items()]
    if not picked:
        raise UserError("Nothing to ablate: name heads (5.3), attention layers, MLP layers or neurons (12:401).")
    return picked, tuple(labels)


def _means(model, tokenizer, texts: tuple[str, ...], sites) -> dict[tuple[str, int], torch.Tensor]:
    """Each site's mean over every position of the reference texts (token-weighted): `[width]`, heads `[H, dh]`."""
    keys = list(dict.fromkeys((site, layer) for site, layer, _ in sites))
    sums: dict[tuple[str, int], torch.Tensor] = {}
    count = 0
    for text in texts:
        ids = encode(model, tokenizer, text).ids
        with intervened(model, reads=keys) as seen:
            start(model, ids)
        for key in keys:
            total = seen[key][0][0].double().sum(0)
            sums[key] = total if key not in sums else sums[key] + total
        count += ids.shape[1]
    return {key: (total / count).float() for key, total in sums.items()}


def _edits(model, sites, means) -> list[Ablation]:
    n_heads, edits = arch_info(model).n_heads, []
    for site, layer, picked in sites:
        value = None if means is None else means[(site, layer)]  # head site: `[H * head_dim]` as read
        if value is not None and site == "head":
            value = value.view(n_heads, -1)[list(picked)]
        elif value is not None and picked is not None:
            value = value[list(picked)]
        edits.append(Ablation(site=site, layer=layer, units=picked, value=value))
    return edits


def _run(model, tokenizer, ids, edits, target, contrast, config, stops) -> RunView:
    with intervened(model, edits):
        logits = start(model, ids).logits[0]
        generated = ""
        if config.generate:
            out = decode(start(model, ids, max_new_tokens=config.generate), greedy_policy, config.generate, stops)
            generated = tokenizer.decode(out.row(0, keep_stop=False), skip_special_tokens=True)
    probs = torch.softmax(logits, dim=-1).topk(min(config.top_k, logits.shape[-1]))
    diff = float(logits[target] - (logits[contrast] if contrast is not None else 0.0))
    return RunView(top=tuple((token_text(tokenizer, int(i)), float(p)) for i, p in zip(probs.indices, probs.values)),
                   logit_diff=diff, generation=generated)


@torch.no_grad()
def compute_ablate(model, tokenizer, config: AblateConfig, progress: Progress = silent) -> AblateResult:
    encoded = encode(model, tokenizer, config.prompt)
    sites, labels = _sites(model, config)
    target = single_token(tokenizer, config.target, "target token") if config.target else None
    contrast = single_token(tokenizer, config.contrast, "contrast token") if config.contrast else None
    texts = lines(config.reference, "reference texts") if config.mode == "mean" else ()
    progress(0.05, "means over the reference texts" if texts else "run before ablation")
    means = _means(model, tokenizer, texts, sites) if texts else None
    stops = model_stop_ids(model, tokenizer)
    if target is None:
        target = int(start(model, encoded.ids).logits[0].argmax())
    progress(0.3, "run before ablation")
    before = _run(model, tokenizer, encoded.ids, [], target, contrast, config, stops)
    progress(0.65, "run after ablation")
    after = _run(model, tokenizer, encoded.ids, _edits(model, sites, means), target, contrast, config, stops)
    progress(1.0, "ablation done")
    return AblateResult(tokens=encoded.tokens, ablated=labels, mode=config.mode,
                        target_token=token_text(tokenizer, target),
                        contrast_token=None if contrast is None else token_text(tokenizer, contrast),
                        before=before, after=after)
