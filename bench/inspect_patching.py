"""`inspect patch` against TransformerLens 4.3's `patching` functions, side by side in one process.

For each model and prompt pair (same token ids on both sides): our batched patching (`compute_patch`) and
TransformerLens' `get_act_patch_resid_pre`, `get_act_patch_attn_out`, `get_act_patch_mlp_out` and
`get_act_patch_attn_head_out_all_pos` (TransformerBridge in compatibility mode, as bench/inspect_tl_side.py boots it;
one forward per patch) with the same normalised logit-difference metric. Reported: the largest absolute difference
of the values, and the seconds of each side (TransformerLens: its clean run_with_cache plus the patching call; ours:
the whole verb uncached), interleaved per site, at a fixed number of torch threads. Then the verb through the store
twice (computed, cached). The scratch environment has transformer-lens (never a project dependency) and sees the
project's packages through a .pth file:

    python3.11 -m venv /tmp/tlvenv && echo /work/main/.venv/lib/python3.11/site-packages \\
        > /tmp/tlvenv/lib/python3.11/site-packages/project.pth && /tmp/tlvenv/bin/pip install transformer-lens==4.3.0
    /tmp/tlvenv/bin/python bench/inspect_patching.py
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.inspect_vs_transformerlens import MODELS, timed  # noqa: E402  (it also sets a store of its own, offline)

import numpy as np  # noqa: E402
import torch  # noqa: E402

from backend.inspect.intervene_config import PatchConfig  # noqa: E402
from backend.inspect.patching import compute_patch  # noqa: E402
from backend.inspect.verbs import patch  # noqa: E402
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
def theirs(bridge, clean: list[int], corrupted: list[int], target: int, contrast: int, site: str) -> np.ndarray:
    from transformer_lens import patching

    clean_ids, corrupted_ids = torch.tensor([clean]), torch.tensor([corrupted])
    clean_logits, cache = bridge.run_with_cache(clean_ids)
    corrupted_logits = bridge(corrupted_ids)
    diff = lambda logits: logits[0, -1, target] - logits[0, -1, contrast]  # noqa: E731
    low, high = diff(corrupted_logits), diff(clean_logits)
    values = getattr(patching, TL_FUNCTIONS[site])(bridge, corrupted_ids, cache,
                                                   lambda logits: (diff(logits) - low) / (high - low))
    return values.detach().float().numpy()


def compare_model(model_id: str, sites: tuple[str, ...]) -> dict:
    handle = load(model_id)
    bridge = boot_bridge(model_id)
    rows = []
    for clean, corrupted in PAIRS:
        ids = [handle.tokenizer(p)["input_ids"] for p in (clean, corrupted)]
        if len(ids[0]) != len(ids[1]):
            rows.append({"clean": clean, "skipped": f"{len(ids[0])} vs {len(ids[1])} tokens"})
            continue
        for site in sites:
            config = PatchConfig(clean=clean, corrupted=corrupted, site=site)
            mine, our_s = timed(lambda: compute_patch(handle.model, handle.tokenizer, config))
            tl, tl_s = timed(lambda: theirs(bridge, ids[0], ids[1], mine.target_id, mine.contrast_id, site))
            rows.append({"clean": clean, "corrupted": corrupted, "tokens": len(ids[0]), "site": site,
                         "target": mine.target_token, "contrast": mine.contrast_token,
                         "max_abs_diff": float(np.abs(mine.values - tl).max()),
                         "max_abs_value": float(np.abs(mine.values).max()), "ours_s": round(our_s, 3),
                         "transformerlens_s": round(tl_s, 3), "speedup": round(tl_s / our_s, 2)})
            print(rows[-1], file=sys.stderr, flush=True)
    return {"rows": rows, "max_abs_diff": max(r["max_abs_diff"] for r in rows if "site" in r)}


def verb_timings(model_id: str, sites: tuple[str, ...]) -> list[dict]:
    handle = load(model_id)
    clean, corrupted = PAIRS[0]
    out = []
    for site in sites:
        config = PatchConfig(clean=clean, corrupted=corrupted, site=site)
        first, computed_s = timed(lambda: patch(handle, config))
        again, cached_s = timed(lambda: patch(handle, config))
        assert not first.cached and again.cached
        out.append({"site": site, "computed_s": round(computed_s, 3), "cached_s": round(cached_s, 3)})
    return out


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--sites", nargs="+", default=list(TL_FUNCTIONS), choices=list(TL_FUNCTIONS))
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    from importlib.metadata import version

    sites = tuple(args.sites)
    result = {"command": "/tmp/tlvenv/bin/python bench/inspect_patching.py", "torch_threads": args.threads,
              "versions": {"transformer_lens": version("transformer-lens"), "torch": torch.__version__,
                           "transformers": version("transformers")},
              "verb_timings": {"model": "smollm2-135m-instruct",
                               "rows": verb_timings("smollm2-135m-instruct", ("resid_pre", "head")),
                               "targets": {"computed_s": 10.0, "cached_s": 1.0}},
              "models": {m: compare_model(m, sites) for m in args.models},
              "load_average": os.getloadavg()[0], "target_speedup": 3.0}
    return write_result(RESULTS, result)


if __name__ == "__main__":
    main()
