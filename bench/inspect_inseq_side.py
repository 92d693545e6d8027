"""The inseq side of bench/inspect_vs_inseq.py. Runs in a scratch environment that has inseq (never a project
dependency), imports nothing from the project, and writes JSON.

    /tmp/inseqvenv/bin/python bench/inspect_inseq_side.py request.json answer.json

Each case is a prompt and the text it continues with (the project's greedy continuation, so both sides attribute
the same targets); inseq's decoder-only attribution scores every generated token against the prompt and the tokens
generated before it, with `attributed_fn="probability"` (inseq's default). Granular methods (input_x_gradient,
integrated_gradients) are summed over the embedding here; occlusion is already one value per token.
"""
from __future__ import annotations

import json
import sys
import time

import torch


def main(request_path: str, answer_path: str) -> None:
    import inseq

    request = json.loads(open(request_path).read())
    torch.set_num_threads(request.get("threads", 2))
    answers = []
    for method, args in request["methods"].items():
        model = inseq.load_model(request["model_dir"], method)
        for case in request["cases"]:
            start = time.perf_counter()
            out = model.attribute(case["prompt"], case["prompt"] + case["continuation"], attributed_fn="probability",
                                  step_scores=["probability"], show_progress=False, **args)
            seconds = time.perf_counter() - start
            seq = out.sequence_attributions[0]
            scores = seq.target_attributions  # [sources + 1, targets(, d)], NaN where a source follows a target
            scores = scores.sum(-1) if scores.dim() == 3 else scores
            answers.append({"method": method, "prompt": case["prompt"], "seconds": seconds,
                            "tokens": [t.token for t in seq.target], "ids": [t.id for t in seq.target],
                            "scores": [[None if v != v else float(v) for v in row] for row in scores.T.tolist()],
                            "probability": seq.step_scores["probability"].tolist()})
    from importlib.metadata import version
    json.dump({"inseq": version("inseq"), "captum": version("captum"), "torch": torch.__version__,
               "transformers": version("transformers"), "cases": answers}, open(answer_path, "w"))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
