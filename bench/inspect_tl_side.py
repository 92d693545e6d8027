"""The TransformerLens side of bench/inspect_vs_transformerlens.py. Runs in a scratch environment that has
transformer-lens (never a project dependency), imports nothing from the project, and writes JSON.

    /tmp/tlvenv/bin/python bench/inspect_tl_side.py request.json answer.json

TransformerLens 4 boots the same local checkpoint through its TransformerBridge in compatibility mode
(HookedTransformer-equivalent: final-norm gain folded into W_U, W_U centred), the mode its documentation asks for
logit lens and direct logit attribution:
- lens: accumulated_resid -> apply_ln_to_stack(recompute_ln=True) (each layer normed with its own statistics)
  -> @ W_U + b_U -> softmax (W_U centring shifts every logit of a position equally: probabilities unchanged);
- DLA: stack_head_results / decompose_resid with apply_ln=True (scale of the final residual) onto
  W_U[:, target] - W_U[:, contrast] (a difference: W_U centring cancels);
- attention: blocks.{l}.attn.hook_pattern.
"""
from __future__ import annotations

import json
import sys
import time

import torch


def main(request_path: str, answer_path: str) -> None:
    from transformer_lens.model_bridge import TransformerBridge
    import transformer_lens.model_bridge.sources.transformers  # noqa: F401  (attaches boot_transformers)

    request = json.loads(open(request_path).read())
    torch.set_num_threads(request.get("threads", 2))
    start = time.perf_counter()
    bridge = TransformerBridge.boot_transformers(request["model_dir"], device="cpu", dtype=torch.float32,
                                                 hf_config_overrides={"architectures": [request["architecture"]]})
    bridge.enable_compatibility_mode(disable_warnings=True)
    boot = time.perf_counter() - start
    w_u, b_u = bridge.W_U.detach().float(), bridge.b_U.detach().float()
    answers = []
    for case in request["cases"]:
        tokens = torch.tensor([case["ids"]])
        with torch.no_grad():
            _, cache = bridge.run_with_cache(tokens)
            resid = cache.accumulated_resid(apply_ln=False)  # [L + 1, 1, T, d]
            probs = torch.softmax(cache.apply_ln_to_stack(resid, recompute_ln=True) @ w_u + b_u, dim=-1)[:, 0]
            top = probs.topk(request["top_k"], dim=-1)
            position = case["position"]
            direction = w_u[:, case["target"]] - w_u[:, case["contrast"]]
            heads = cache.stack_head_results(layer=-1, pos_slice=position, apply_ln=True)[:, 0] @ direction
            parts, labels = cache.decompose_resid(apply_ln=True, pos_slice=position, return_labels=True)
            blocks = dict(zip(labels, (parts[:, 0] @ direction).tolist()))
            n_layers, n_heads = bridge.cfg.n_layers, bridge.cfg.n_heads
            answers.append({
                "lens_top_ids": top.indices.tolist(), "lens_top_probs": top.values.tolist(),
                "dla_heads": heads.reshape(n_layers, n_heads).tolist(),
                "dla_attn": [blocks[f"{i}_attn_out"] for i in range(n_layers)],
                "dla_mlps": [blocks[f"{i}_mlp_out"] for i in range(n_layers)],
                "patterns": {f"{l},{h}": cache[f"blocks.{l}.attn.hook_pattern"][0, h].tolist()
                             for l, h in case["heads"]}})
    from importlib.metadata import version
    json.dump({"transformer_lens": version("transformer-lens"), "torch": torch.__version__,
               "transformers": version("transformers"), "boot_seconds": boot, "cases": answers},
              open(answer_path, "w"))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
