"""A node of the graph opened: the last state's lens is the model's output; a "mid" state's promoted and
suppressed tokens are its attention output through the final norm (scale of the state) and the unembedding."""
import numpy as np
import pytest
import torch

from backend.errors import UserError
from backend.internals.graph_config import NodeConfig
from backend.internals.node import compute_node
from tests.internals.helpers import PROMPT


def test_last_state_lens_is_the_output(tiny_handle):
    model, tokenizer = tiny_handle.model, tiny_handle.tokenizer
    result = compute_node(model, tokenizer, NodeConfig(prompt=PROMPT, layer=2, position=-1, top_k=4))
    with torch.no_grad():
        probs = torch.softmax(model(input_ids=torch.tensor([tokenizer(PROMPT)["input_ids"]])).logits[0, -1], -1)
    top = probs.topk(4)
    assert [e.id for e in result.lens] == top.indices.tolist()
    assert np.allclose([e.logit for e in result.lens], top.values.numpy(), atol=1e-6)
    assert result.writer == "MLP" and result.write_norm > 0 and len(result.promoted) == 4
    assert compute_node(model, tokenizer, NodeConfig(prompt=PROMPT, layer=0, position=3)).promoted == ()


def test_attention_write_effects_by_hand():
    from tests.internals.helpers import tiny_variant
    model, tokenizer = tiny_variant("llama")
    ids = torch.tensor([tokenizer(PROMPT)["input_ids"]])
    written = []
    hook = model.model.layers[1].self_attn.register_forward_hook(lambda m, a, out: written.append(out[0]) and None)
    with torch.no_grad():
        hidden = model(input_ids=ids, output_hidden_states=True).hidden_states
    hook.remove()
    position = 5
    write = written[0][0, position]
    state = hidden[1][0, position] + write
    norm = model.model.norm
    effects = model.lm_head.weight @ (norm.weight * write * torch.rsqrt(state.pow(2).mean() + norm.variance_epsilon))
    result = compute_node(model, tokenizer, NodeConfig(prompt=PROMPT, layer=2, position=position, stage="mid",
                                                       top_k=5))
    assert result.writer == "attention"
    assert [e.id for e in result.promoted] == effects.topk(5).indices.tolist()
    assert np.allclose([e.logit for e in result.suppressed], (-(-effects).topk(5).values).detach().numpy(), atol=1e-5)


def test_bad_node_is_one_line(tiny_handle):
    with pytest.raises(UserError, match="residual states are 0..2"):
        compute_node(tiny_handle.model, tiny_handle.tokenizer, NodeConfig(prompt=PROMPT, layer=3))
    with pytest.raises(UserError, match="from layer 1 on"):
        NodeConfig(layer=0, stage="mid")
