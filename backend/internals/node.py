"""One state of the contribution graph opened: the logit lens of that residual state (top-k) and what the block
part that wrote it last (the attention for a "mid" state, the MLP for a "post" one) promoted and suppressed.

The write's effect is read like DLA reads a head: the write through the final norm's linear part with the scale
of the state itself, onto the unembedding (its direct share of the lens's logits at this state). Every state a graph
shows comes from one forward of the prompt and one read-out per 64 states (`compute_nodes`)."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from backend.internals.attention import TokenEffect
from backend.internals.flow import residual_states
from backend.internals.graph_config import NodeConfig
from backend.internals.prompt import encode, position_index, token_text
from backend.errors import UserError
from backend.models.architecture import arch_info, final_norm
from backend.models.readout import norm_parts, readout_logits, unembedding
from backend.progress import Progress, silent



@dataclass(frozen=True)
class NodeResult:
    tokens: tuple[str, ...]
    layer: int
    position: int  # 0-based
    stage: str  # "mid" | "post"
    writer: str | None  # "attention" | "MLP" | None for the embeddings
    lens: tuple[TokenEffect, ...]  # top-k of the state's read-out; `logit` holds the probability
    promoted: tuple[TokenEffect, ...]  # the writer's largest direct effects, descending
    suppressed: tuple[TokenEffect, ...]  # most negative, ascending
    write_norm: float  # |write|, 0 for the embeddings

    def to_json(self) -> dict:
        listed = lambda items, name: [{"token": e.token, "id": e.id, name: e.logit} for e in items]  # noqa: E731
        return {"tokens": list(self.tokens), "layer": self.layer, "position": self.position, "stage": self.stage,
                "writer": self.writer, "lens": listed(self.lens, "prob"),
                "promoted": listed(self.promoted, "logit"), "suppressed": listed(self.suppressed, "logit"),
                "write_norm": self.write_norm}


CHUNK = 64  # states read out at once: [64, vocab] fp32 stays under ~64 MB at 256k tokens


def _chunks(indices: list[int]) -> list[list[int]]:
    return [indices[start:start + CHUNK] for start in range(0, len(indices), CHUNK)]


def _state_and_write(states, middle, config: NodeConfig, position: int
                     ) -> tuple[torch.Tensor, torch.Tensor | None, str | None]:
    """(the state `[d]`, what the block part before it wrote `[d]` (None for the embeddings), that writer)."""
    layer = config.layer
    if config.stage == "mid":
        state = middle[layer - 1][position]
        return state, state - states[layer - 1][position], "attention"
    state = states[layer][position]
    return (state, None, None) if layer == 0 else (state, state - middle[layer - 1][position], "MLP")


def _listed(tokenizer, ids: torch.Tensor, values: torch.Tensor) -> tuple[TokenEffect, ...]:
    return tuple(TokenEffect(token_text(tokenizer, int(i)), int(i), float(v)) for i, v in zip(ids.tolist(),
                                                                                             values.tolist()))


@torch.no_grad()
def compute_node(model, tokenizer, config: NodeConfig, progress: Progress = silent) -> NodeResult:
    return compute_nodes(model, tokenizer, [config], progress)[0]


@torch.no_grad()
def compute_nodes(model, tokenizer, configs: Sequence[NodeConfig], progress: Progress = silent) -> list[NodeResult]:
    """Every config's state drill-down, in order, from one forward per distinct prompt (the whole prompt: a state
    at position i depends on tokens 0..i only), so every state a graph shows costs one forward."""
    results: list[NodeResult | None] = [None] * len(configs)
    prompts: dict[str, list[int]] = {}
    for i, config in enumerate(configs):
        prompts.setdefault(config.prompt, []).append(i)
    n_layers = arch_info(model).n_layers
    parts = norm_parts(final_norm(model))
    w_u, _ = unembedding(model)
    finished = 0  # states done: each chunk reports progress, so a Stop (or a rerun) waits for one chunk at most
    for prompt, indices in prompts.items():
        encoded = encode(model, tokenizer, prompt)
        for i in indices:
            if configs[i].layer > n_layers:
                raise UserError(f"Layer {configs[i].layer} does not exist: the residual states are 0..{n_layers} "
                                "(0: the embeddings).")
        positions = {i: position_index(configs[i].position, encoded.length) for i in indices}
        progress(0.1 + 0.9 * finished / len(configs), "forward pass reading the residual states")
        states, middle, _ = residual_states(model, encoded.ids, internals=False)
        for chunk in _chunks(indices):  # many states read out (and their writes projected) in one matrix product
            read = [_state_and_write(states, middle, configs[i], positions[i]) for i in chunk]
            state = torch.stack([r[0] for r in read])
            probs = torch.softmax(readout_logits(model, state), dim=-1)  # [states, vocab]
            k = min(max(configs[i].top_k for i in chunk), probs.shape[-1])
            top = probs.topk(k)
            written = torch.stack([r[1] if r[1] is not None else torch.zeros_like(r[0]) for r in read])
            effects = parts.linear(written, parts.scale(state)) @ w_u.T
            up, down = effects.topk(k), (-effects).topk(k)
            for row, i in enumerate(chunk):
                config, (_, write, writer) = configs[i], read[row]
                kept = min(config.top_k, k)
                promoted = suppressed = ()
                if write is not None:
                    promoted = _listed(tokenizer, up.indices[row, :kept], up.values[row, :kept])
                    suppressed = _listed(tokenizer, down.indices[row, :kept], -down.values[row, :kept])
                results[i] = NodeResult(tokens=encoded.tokens, layer=config.layer, position=positions[i],
                                        stage=config.stage, writer=writer,
                                        lens=_listed(tokenizer, top.indices[row, :kept], top.values[row, :kept]),
                                        promoted=promoted, suppressed=suppressed,
                                        write_norm=0.0 if write is None else float(write.norm()))
            finished += len(chunk)
            progress(0.1 + 0.9 * finished / len(configs), f"{finished} of {len(configs)} states read out")
    progress(1.0, "state read" if len(configs) == 1 else f"{len(configs)} states read")
    return results
