"""The contribution graph against direct logit attribution on the embedded SmolLM2, for the IOI prompt: do the
strongest attention edges into the last position come from the heads DLA ranks highest? And what the graph costs
next to DLA on the same prompt, both computed in this process (no store).

    .venv/bin/python bench/inspect_graph_dla.py
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

from backend.internals.dla import compute_dla  # noqa: E402
from backend.internals.config import DlaConfig  # noqa: E402
from backend.internals.flow import contributions  # noqa: E402
from backend.internals.graph import compute_graph  # noqa: E402
from backend.internals.graph_config import GraphConfig  # noqa: E402
from backend.models import load  # noqa: E402
from bench.output import write_result  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "inspect_graph_dla.json"
MODEL = "smollm2-135m-instruct"
PROMPT = "When Mary and John went to the store, John gave a drink to"
TOP = 8


def timed(call):
    start = time.perf_counter()
    value = call()
    return value, time.perf_counter() - start


def main() -> dict:
    handle = load(MODEL)
    model, tokenizer = handle.model, handle.tokenizer
    compute_dla(model, tokenizer, DlaConfig(prompt=PROMPT))  # warm-up: the first forward after loading
    graph, graph_s = timed(lambda: compute_graph(model, tokenizer, GraphConfig(prompt=PROMPT, per_head=True)))
    _, token_graph_s = timed(lambda: compute_graph(model, tokenizer, GraphConfig(prompt=PROMPT)))
    result = {"command": ".venv/bin/python bench/inspect_graph_dla.py", "model": MODEL, "prompt": PROMPT,
              "threshold": graph.threshold, "graph": {"states": len(graph.nodes), "edges": len(graph.edges)}}
    into_last = sorted((e for e in graph.edges if e.kind == "attn" and e.target.position == graph.position),
                       key=lambda e: -e.weight)
    ids = torch.tensor([tokenizer(PROMPT)["input_ids"]])
    per_head = contributions(model, ids, per_head=True).attn[:, -1].sum(1)  # [L, H]: each head's share at the last
    for name, contrast in (("dla", ""), ("dla_vs_john", " John")):
        dla, dla_s = timed(lambda: compute_dla(model, tokenizer, DlaConfig(prompt=PROMPT, contrast=contrast)))
        order = list(np.argsort(-dla.heads.ravel()))  # rank 1 = the largest positive direct effect
        n_heads = dla.heads.shape[1]
        rank = {divmod(int(i), n_heads): r + 1 for r, i in enumerate(order)}
        result[name] = {"target": dla.target_token, "contrast": dla.contrast_token, "seconds": round(dla_s, 3),
                        "top_heads": [{"head": f"L{int(i) // n_heads}H{int(i) % n_heads}",
                                       "effect": round(float(dla.heads.flat[i]), 3)} for i in order[:TOP]]}
        result[name]["graph_edges_into_last"] = [
            {"head": f"L{e.target.layer - 1}H{e.head}", "source": graph.tokens[e.source.position],
             "share": round(e.weight, 3), "dla_rank": rank[(e.target.layer - 1, e.head)]} for e in into_last[:TOP]]
        result[name]["dla_top_heads_graph_share"] = {
            f"L{int(i) // n_heads}H{int(i) % n_heads}": round(float(per_head.flat[i]), 3) for i in order[:TOP]}
        top_dla = {divmod(int(i), n_heads) for i in order[:TOP]}
        top_graph = {(e.target.layer - 1, e.head) for e in into_last[:TOP]}
        result[name]["overlap_of_top"] = len(top_dla & top_graph)
    result["load_average"], result["cpus"] = round(os.getloadavg()[0], 2), os.cpu_count()
    result["seconds"] = {"graph_per_head": round(graph_s, 3), "graph_per_source": round(token_graph_s, 3),
                         "dla": result["dla"]["seconds"]}
    return write_result(RESULTS, result)


if __name__ == "__main__":
    main()
