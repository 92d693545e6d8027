"""`inspect patch` against TransformerLens 4.3's `patching` functions, side by side in one process.

For each model and prompt pair (same token ids on both sides): our verb (`inspect patch`, batched, through the
store: computed, then cached) and TransformerLens' `get_act_patch_resid_pre`, `get_act_patch_attn_out`,
`get_act_patch_mlp_out` and `get_act_patch_attn_head_out_all_pos` (TransformerBridge in compatibility mode, as
bench/inspect_tl_side.py boots it; one forward per patch) with the same normalised logit-difference metric, at a fixed
number of torch threads. Reported: the largest absolute difference of the values and each side's seconds. On a busy
machine `--tl-sample N` runs TransformerLens on N random cells only (their values compared, its seconds scaled to
every cell: it costs one forward per cell). The scratch environment has transformer-lens (never a project
dependency) and sees the project's packages through a .pth file:

    python3.11 -m venv /tmp/tlvenv && echo /work/main/.venv/lib/python3.11/site-packages \\
        > /tmp/tlvenv/lib/python3.11/site-packages/project.pth && /tmp/tlvenv/bin/pip install transformer-lens==4.3.0
    /tmp/tlvenv/bin/python bench/inspect_patching.py
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.inspect_vs_transformerlens import MODELS, timed  # noqa: E402  (it also sets a store of its own, offline)

import numpy as np  # noqa: E402
import torch  # noqa: E402

from backend.internals.intervene_config import PatchConfig  # noqa: E402
from backend.internals.verbs import patch  # noqa: E402
from backend.models import load  # noqa: E402
from backend.models.embedded import cache_dir_for  # noqa: E402
from bench.output import write_result  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "inspect_patching.json"
TL_FUNCTIONS = {"resid_pre": "get_act_patch_resid_pre", "attn_out": "get_act_patch_attn_out",
                "mlp_out": "get_act_patch_mlp_out", "head": "get_act_patch_attn_head_out_all_pos"}
# IOI-style (timed; 16 tokens on SmolLM2) and a held-out factual pair; corruptions keep the token count
PAIRS = (("Later, when Mary and John went to the store, John gave a drink to",
          "Later, when Mary and John went to the store, Mary gave a drink to"),
         ("The Eiffel Tower is in the city of", "The Colosseum is in the city of"))


def boot_bridge(model_id: str):
    from transformer_lens.model_bridge import TransformerBridge
    import transformer_lens.model_bridge.sources.transformers  # noqa: F401  (attaches boot_transformers)

    bridge = TransformerBridge.boot_transformers(str(cache_dir_for(model_id)), device="cpu", dtype=torch.float32,
                                                 hf_config_overrides={"architectures": [MODELS[model_id]]})
    bridge.enable_compatibility_mode(disable_warnings=True)
    return bridge


@torch.no_grad()
def theirs(bridge, clean: list[int], corrupted: list[int], target: int, contrast: int, site: str,
           cells: np.ndarray | None) -> np.ndarray:
    """TransformerLens' values, flat in the order of `cells` (flat indices into our values; None: every cell)."""
    import pandas as pd
    from transformer_lens import patching

    clean_ids, corrupted_ids = torch.tensor([clean]), torch.tensor([corrupted])
    clean_logits, cache = bridge.run_with_cache(clean_ids)
    corrupted_logits = bridge(corrupted_ids)
    diff = lambda logits: logits[0, -1, target] - logits[0, -1, contrast]  # noqa: E731
    low, high = diff(corrupted_logits), diff(clean_logits)
    metric = lambda logits: (diff(logits) - low) / (high - low)  # noqa: E731
    shape = (bridge.cfg.n_layers, bridge.cfg.n_heads if site == "head" else len(clean))
    index = None if cells is None else pd.DataFrame(np.stack(np.unravel_index(cells, shape), axis=1),
                                                    columns=["layer", "head" if site == "head" else "pos"])
    chosen = {} if index is None else {"index_df": index, "index_axis_names": None}  # the partial names the axes
    values = getattr(patching, TL_FUNCTIONS[site])(bridge, corrupted_ids, cache, metric, **chosen)
    return values.detach().float().numpy().ravel()


def compare_model(model_id: str, sites: tuple[str, ...], sample: int | None, pairs=PAIRS) -> dict:
    """Per pair and site: our verb computed (then cached) on every cell; TransformerLens on every cell, or on
    `sample` cells drawn at random (seed 0) with its seconds scaled to every cell (a busy machine)."""
    handle = load(model_id)
    bridge = boot_bridge(model_id)
    rows = []
    for clean, corrupted in pairs:
        ids = [handle.tokenizer(p)["input_ids"] for p in (clean, corrupted)]
        if len(ids[0]) != len(ids[1]):
            rows.append({"clean": clean, "skipped": f"{len(ids[0])} vs {len(ids[1])} tokens"})
            continue
        for site in sites:
            config = PatchConfig(clean=clean, corrupted=corrupted, site=site)
            computed, our_s = timed(lambda: patch(handle, config))
            again, cached_s = timed(lambda: patch(handle, config))
            assert not computed.cached and again.cached
            mine = computed.value
            total = mine.values.size
            cells = None if sample is None or sample >= total else \
                np.sort(np.random.default_rng(0).choice(total, sample, replace=False))
            tl, tl_s = timed(lambda: theirs(bridge, ids[0], ids[1], mine.target_id, mine.contrast_id, site, cells))
            ours_flat = mine.values.ravel() if cells is None else mine.values.ravel()[cells]
            tl_all_s = tl_s * total / (total if cells is None else len(cells))
            rows.append({"clean": clean, "corrupted": corrupted, "tokens": len(ids[0]), "site": site,
                         "target": mine.target_token, "contrast": mine.contrast_token, "cells": total,
                         "tl_cells_run": total if cells is None else len(cells),
                         "max_abs_diff": float(np.abs(ours_flat - tl).max()),
                         "max_abs_value": float(np.abs(mine.values).max()), "ours_s": round(our_s, 3),
                         "ours_cached_s": round(cached_s, 3), "transformerlens_s": round(tl_s, 3),
                         "transformerlens_every_cell_s": round(tl_all_s, 3), "speedup": round(tl_all_s / our_s, 2)})
            print(rows[-1], file=sys.stderr, flush=True)
    return {"rows": rows, "max_abs_diff": max(r["max_abs_diff"] for r in rows if "site" in r)}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--sites", nargs="+", default=list(TL_FUNCTIONS), choices=list(TL_FUNCTIONS))
    parser.add_argument("--pairs", type=int, default=len(PAIRS), help="how many of the prompt pairs (the first is "
                        "the 16-token one)")
    parser.add_argument("--tl-sample", type=int, default=None,
                        help="run TransformerLens on this many random cells only, its time scaled to every cell")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--keep-other-models", action="store_true",
                        help="keep the stored results of the models not run now (each keeps its own command and load)")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    from importlib.metadata import version

    command = "/tmp/tlvenv/bin/python bench/inspect_patching.py " + " ".join(argv if argv is not None else sys.argv[1:])
    models = {}
    if args.keep_other_models and RESULTS.exists():
        old = json.loads(RESULTS.read_text())
        models = {m: {"command": old["command"], "load_average": old["load_average"], **entry}
                  for m, entry in old["models"].items() if m not in args.models}
    for m in args.models:  # each model's own load average: a kept model was measured at another time
        models[m] = compare_model(m, tuple(args.sites), args.tl_sample, PAIRS[:args.pairs])
        models[m] |= {"command": command.strip(), "load_average": os.getloadavg()[0]}
    result = {"command": command.strip(), "torch_threads": args.threads,
              "versions": {"transformer_lens": version("transformer-lens"), "torch": torch.__version__,
                           "transformers": version("transformers")},
              "models": models, "load_average": os.getloadavg()[0], "target_speedup": 3.0,
              "targets_s": {"computed": 10.0, "cached": 1.0}}
    return write_result(RESULTS, result)


if __name__ == "__main__":
    main()
