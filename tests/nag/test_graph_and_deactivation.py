"""The NAG graph on hand-made profiles; deactivation zeroes exactly the chosen neurons and restores them."""
import json

import numpy as np
import pytest
import torch

from backend.__main__ import main
from backend.errors import UserError
from backend.models import load
from backend.models.architecture import mlp_up_proj
from backend.models.hooks import capture
from backend.nag import DeactivationConfig, GraphConfig, TargetSet, build_graph, deactivation_check
from backend.nag import samples
from backend.nag.deactivate import zeroed
from backend.nag.profile import build_profile
from backend.nag.targets import TargetProfiles


def _profiles():
    tops = np.array([[[0, 1], [2, 3], [0, 1]],
                     [[0, 2], [2, 1], [0, 3]]])  # 2 target docs, 3 layers, K=2
    w = build_profile(tops, 4)
    return TargetProfiles(("t",), w[None], (tops,), (("a", "b"),), 2, (np.array([5, 5]),), ())


def test_graph_nodes_edges_and_filters():
    g = build_graph(_profiles())
    # layer 0: neuron 0 (2/4), 1 (1/4), 2 (1/4); heaviest first
    assert list(zip(g.layers[:3], g.neurons[:3])) == [(0, 0), (0, 1), (0, 2)]
    np.testing.assert_allclose(g.weights[:3], [0.5, 0.25, 0.25])
    edges = {(int(g.neurons[a]), int(g.layers[a]), int(g.neurons[b])): w
             for a, b, w in zip(g.edge_src, g.edge_dst, g.edge_weights)}
    assert edges[(0, 0, 2)] == 1.0          # neuron 0 (layer 0) and 2 (layer 1) co-occur in both docs
    assert edges[(1, 0, 3)] == 0.5 and (1, 0, 1) not in edges
    assert g.to_networkx().number_of_nodes() == len(g.layers) and g.positions().shape == (len(g.layers), 2)
    small = build_graph(_profiles(), 0, GraphConfig(layer_min=1, layer_max=2, min_weight=0.5, min_edge_weight=1.0))
    assert set(small.layers) == {1, 2} and (small.weights >= 0.5).all() and (small.edge_weights == 1.0).all()
    with pytest.raises(UserError):
        build_graph(_profiles(), 0, GraphConfig(layer_min=5))


def test_a_capped_graph_keeps_the_heaviest_nodes_over_all_layers():
    full, capped = build_graph(_profiles()), build_graph(_profiles(), 0, GraphConfig(max_nodes=4))
    assert len(capped.layers) == 4 < len(full.layers)
    heaviest = sorted(full.weights, reverse=True)[:4]
    assert sorted(capped.weights, reverse=True) == heaviest and list(capped.layers) == sorted(capped.layers)
    kept = set(zip(capped.layers.tolist(), capped.neurons.tolist()))
    for a, b, w in zip(full.edge_src, full.edge_dst, full.edge_weights):  # edges among kept nodes stay as they were
        ends = {(int(full.layers[a]), int(full.neurons[a])), (int(full.layers[b]), int(full.neurons[b]))}
        if ends <= kept:
            assert any({(int(capped.layers[x]), int(capped.neurons[x])), (int(capped.layers[y]),
                        int(capped.neurons[y]))} == ends and v == w
                       for x, y, v in zip(capped.edge_src, capped.edge_dst, capped.edge_weights))


@pytest.mark.parametrize("arch", ["llama", "gpt2"])
def test_zeroed_neurons_output_zero_and_weights_are_restored(arch):
    handle = load(f"tiny-{arch}")
    model = handle.model
    before = {k: v.clone() for k, v in model.state_dict().items()}
    ids = torch.tensor([[5, 6, 7, 8]])
    with zeroed(model, {0: np.array([3, 9]), 1: np.array([0])}):
        up = capture(model, ids, mlp_up=[0, 1]).mlp_up
        assert up[0][..., [3, 9]].abs().max() == 0 and up[1][..., 0].abs().max() == 0
        assert up[0][..., 4].abs().max() > 0
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert mlp_up_proj(model, 0).weight.requires_grad


def test_deactivation_result_and_cli(fresh_store, capsys):
    handle = load("tiny-llama")
    targets = [TargetSet("code", tuple(samples.sample_targets("code")[:3]))]
    heldout = [d for d in samples.heldout()][::3]
    result = deactivation_check(handle, targets, heldout, config=DeactivationConfig(share=0.02, n_random=2)).value
    assert result.per_layer == 3 and result.nag_neurons.shape == (2, 3)
    assert result.random.shape == (2, len(result.domains)) and np.isfinite(result.base).all()
    summary = result.summary()
    assert summary["target"] == "code" and "ratio_target" in summary
    assert main(["nag", "deactivate", "--model", "tiny-llama", "--target-domain", "maths", "--n-random", "1",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["per_domain"]
    assert main(["nag", "graph", "--model", "tiny-llama", "--target-domain", "maths", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["nodes"] > 0
    assert main(["nag", "list", "--json"]) == 0
    assert "act_x_grad" in json.loads(capsys.readouterr().out)["impacts"]
