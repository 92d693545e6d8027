"""One state of the contribution graph opened: the logit lens of that residual state (top-k) and what the block
part that wrote it last (the attention for a "mid" state, the MLP for a "post" one) promoted and suppressed.

The write's effect is read like DLA reads a head: the write through the final norm's linear part with the scale
of the state itself, onto the unembedding (its direct share of the lens's logits at this state)."""
from __future__ import annotations

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


@torch.no_grad()
def compute_node(model, tokenizer, config: NodeConfig, progress: Progress = silent) -> NodeResult:
    encoded = encode(model, tokenizer, config.prompt)
    n_layers = arch_info(model).n_layers
    if config.layer > n_layers:
        raise UserError(f"Layer {config.layer} does not exist: the residual states are 0..{n_layers} "
                        "(0: the embeddings).")
    position = position_index(config.position, encoded.length)
    progress(0.1, "forward pass reading the residual states")
    states, middle, _ = residual_states(model, encoded.ids[:, :position + 1], internals=False)
    layer = config.layer
    if config.stage == "mid":
        state, write, writer = middle[layer - 1][position], middle[layer - 1][position] - states[layer - 1][position], \
            "attention"
    else:
        state = states[layer][position]
        write, writer = (None, None) if layer == 0 else (state - middle[layer - 1][position], "MLP")
    listed = lambda ids, values: tuple(TokenEffect(token_text(tokenizer, int(i)), int(i), float(v))  # noqa: E731
                                       for i, v in zip(ids.tolist(), values.tolist()))
    progress(0.6, "reading the state out")
    probs = torch.softmax(readout_logits(model, state), dim=-1)
    k = min(config.top_k, probs.shape[-1])
    top = probs.topk(k)
    promoted = suppressed = ()
    if write is not None:
        parts = norm_parts(final_norm(model))
        w_u, _ = unembedding(model)
        effects = w_u @ parts.linear(write, parts.scale(state))
        up, down = effects.topk(k), (-effects).topk(k)
        promoted, suppressed = listed(up.indices, up.values), listed(down.indices, -down.values)
    progress(1.0, "state read")
    return NodeResult(tokens=encoded.tokens, layer=layer, position=position, stage=config.stage, writer=writer,
                      lens=listed(top.indices, top.values), promoted=promoted, suppressed=suppressed,
                      write_norm=0.0 if write is None else float(write.norm()))
