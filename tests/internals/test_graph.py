"""The contribution graph: every state's shares sum to 1, and on tiny Llama-like models the pruned graph equals a
brute-force computation written from the method's definition with the model's own modules, loop by loop."""
import numpy as np
import pytest
import torch

from backend.internals.flow import contributions
from backend.internals.graph import GraphNode, compute_graph
from backend.internals.graph_config import GraphConfig
from tests.internals.helpers import PROMPT, VARIANTS, tiny_variant


def _ids(handle_or_tokenizer, prompt=PROMPT):
    return torch.tensor([handle_or_tokenizer(prompt)["input_ids"]])


@pytest.mark.parametrize("per_head", [False, True])
def test_shares_into_every_state_sum_to_one(tiny_handle, per_head):
    shares = contributions(tiny_handle.model, _ids(tiny_handle.tokenizer), per_head=per_head)
    sources = shares.attn.sum((-1, -2)) if per_head else shares.attn.sum(-1)
    assert np.allclose(sources + shares.attn_resid, 1.0, atol=1e-5)
    assert np.allclose(shares.ffn + shares.ffn_resid, 1.0, atol=1e-5)
    assert (shares.attn >= 0).all() and shares.attn.max() > 0.01
    future = np.triu(np.ones(shares.attn.shape[1:3], dtype=bool), k=1)
    assert (shares.attn[:, future] == 0).all(), "no share from a position after the query"


def _importance(whole, terms):
    raw = [max(0.0, float(whole.abs().sum() - (whole - t).abs().sum())) for t in terms]
    return [r / sum(raw) for r in raw]


def _brute_force_edges(model, tokenizer, position, threshold, per_head):
    """{(from, to, kind, head): weight}, by the definition: per layer, per query, per source (and head)."""
    cfg = model.config
    n_heads, n_kv, dh = cfg.num_attention_heads, cfg.num_key_value_heads, cfg.hidden_size // cfg.num_attention_heads
    ids = _ids(tokenizer)[:, :position + 1]
    with torch.no_grad():
        model.set_attn_implementation("eager")
        out = model(input_ids=ids, output_attentions=True, output_hidden_states=True)
        x = out.hidden_states[0][0]
        edges = {}
        for block, layer in enumerate(model.model.layers):
            attn = layer.self_attn
            v = attn.v_proj(layer.input_layernorm(x)).view(-1, n_kv, dh)
            w_o = attn.o_proj.weight
            a = out.attentions[block][0]
            mid = torch.zeros_like(x)
            for i in range(x.shape[0]):
                terms, keys = [], []
                for j in range(i + 1):
                    per = [a[h, i, j] * (w_o[:, h * dh:(h + 1) * dh] @ v[j, h // (n_heads // n_kv)])
                           for h in range(n_heads)]
                    if per_head:
                        terms += per
                        keys += [(j, h) for h in range(n_heads)]
                    else:
                        terms.append(sum(per))
                        keys.append((j, None))
                mid[i] = x[i] + sum(terms) + (attn.o_proj.bias if attn.o_proj.bias is not None else 0)
                for (j, h), share in zip(keys + [(i, "resid")], _importance(mid[i], terms + [x[i]])):
                    kind, head = ("resid", None) if h == "resid" else ("attn", h)
                    edges[((block, j, "post"), (block + 1, i, "mid"), kind, head)] = share
            post = mid + layer.mlp(layer.post_attention_layernorm(mid))
            for i in range(x.shape[0]):
                ffn, resid = _importance(post[i], [post[i] - mid[i], mid[i]])
                edges[((block + 1, i, "mid"), (block + 1, i, "post"), "ffn", None)] = ffn
                edges[((block + 1, i, "mid"), (block + 1, i, "post"), "resid", None)] = resid
            x = post
    strong = {key: w for key, w in edges.items() if w >= threshold}
    kept, frontier = set(), {(len(model.model.layers), position, "post")}
    while frontier:  # backwards from the root over strong edges
        kept |= frontier
        frontier = {key[0] for key in strong if key[1] in frontier} - kept
    return {key: w for key, w in strong.items() if key[1] in kept}


def _loud(model):
    """Random init writes little next to the residual; larger values, queries and writes give a graph with
    attention and MLP edges over the default threshold."""
    with torch.no_grad():
        for layer in model.model.layers:
            for module in (layer.self_attn.v_proj, layer.self_attn.o_proj, layer.self_attn.q_proj):
                module.weight.mul_(6)
            for module in (layer.mlp.up_proj, layer.mlp.gate_proj, layer.mlp.down_proj):
                module.weight.mul_(12)
    return model


@pytest.mark.parametrize("arch", ["llama", "qwen2", "qwen3", "llama-biases"])
@pytest.mark.parametrize("per_head, threshold, position", [(False, 0.04, -1), (True, 0.02, 9)])
def test_graph_equals_brute_force(arch, per_head, threshold, position):
    model, tokenizer = VARIANTS[arch]() if arch in VARIANTS else tiny_variant(arch, seed=3)
    model = _loud(model)
    result = compute_graph(model, tokenizer, GraphConfig(prompt=PROMPT, position=position, threshold=threshold,
                                                         per_head=per_head))
    expected = _brute_force_edges(model, tokenizer, result.position, threshold, per_head)
    got = {((e.source.layer, e.source.position, e.source.stage), (e.target.layer, e.target.position, e.target.stage),
            e.kind, e.head): e.weight for e in result.edges}
    assert set(got) == set(expected)
    assert np.allclose([got[k] for k in expected], [expected[k] for k in expected], atol=1e-4)
    assert {k[2] for k in got} == {"attn", "ffn", "resid"}, "every kind of edge is compared"
    assert {(n.layer, n.position, n.stage) for n in result.nodes} == {k[0] for k in got} | {k[1] for k in got}
    assert result.nodes[-1] == GraphNode(2, result.position, "post")
    assert [e.weight for e in result.edges] == sorted((e.weight for e in result.edges), reverse=True)


def test_a_source_edge_carries_its_heads_shares():
    model, tokenizer = tiny_variant("qwen2", seed=3)
    model = _loud(model)
    result = compute_graph(model, tokenizer, GraphConfig(prompt=PROMPT, threshold=0.04))
    by_head = contributions(model, _ids(tokenizer), per_head=True).attn
    attn = [e for e in result.edges if e.kind == "attn"]
    assert attn and all(e.heads == () for e in result.edges if e.kind != "attn")
    for e in attn:
        assert np.allclose(e.heads, by_head[e.target.layer - 1, e.target.position, e.source.position], atol=1e-6)
