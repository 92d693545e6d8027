"""IPMark attribution accuracy by length (1 to 40 sentences) on the embedded SmolLM2, 2 models x 100 users.

Text i is generated for real (B = 8 candidates per sentence, the end-of-answer token suppressed until
40 sentences, seed i) by model identity i mod 2 and one of its users, recording every candidate set
(backend.watermark.length; cached in the store, so a rerun resumes after the last finished text).
Each path is then replayed with the keys of every one of the model's 100 users (see length.py for
what a replay is and is not) and the first k sentences are detected against the registry of 2 x 100
identities. Writes bench/results/watermark_length.json after every finished text.

    nohup .venv/bin/python bench/watermark_length.py --texts 8 > /tmp/wm_length.log 2>&1 &
    (parts in parallel: --first I --texts N --out OTHER.json; a final run over all texts reads them from the store)
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from backend.features import load_all  # noqa: E402
from publish import publish  # noqa: E402  (bench/, beside this script)
from backend.models import load  # noqa: E402
from backend.watermark.corpus import prompts  # noqa: E402
from backend.watermark.evaluation import eval_identities  # noqa: E402
from backend.watermark.generation import make_request  # noqa: E402
from backend.watermark.ipmark.config import IPMarkConfig  # noqa: E402
from backend.watermark.length import attribution_trials, generate_path, length_rows  # noqa: E402
from backend.watermark.sampling import SamplingConfig  # noqa: E402

RESULT = ROOT / "bench" / "results" / "watermark_length.json"
LENGTHS = (1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 35, 40)
load_all()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--texts", type=int, default=8, help="real generations (alternating the two models)")
    parser.add_argument("--sentences", type=int, default=40)
    parser.add_argument("--users", type=int, default=100, help="users per model")
    parser.add_argument("--model-id", default="smollm2-135m-instruct")
    parser.add_argument("--first", type=int, default=0, help="index of the first text (run parts in parallel)")
    parser.add_argument("--out", default=str(RESULT), help="where to write the JSON")
    args = parser.parse_args()
    handle = load(args.model_id)
    cfg = IPMarkConfig()
    main_model, users = eval_identities(handle, args.users)  # the evaluation's model and its decoy, U users each
    from backend.watermark.identities import ensure_users, get_or_add_model
    decoy = get_or_add_model(f"eval-decoy:{handle.id}").address
    decoy_users = [u.user_address for u in ensure_users(decoy, args.users, "decoy")]
    identities = {main_model: users, decoy: decoy_users}
    lengths = tuple(k for k in LENGTHS if k <= args.sentences)
    replayed, written, paths = [], [], []
    for i in range(args.first, args.first + args.texts):
        model = (main_model, decoy)[i % 2]
        user = identities[model][(i // 2) % len(identities[model])]
        sampling = SamplingConfig(max_sentences=args.sentences, seed=i)
        request = make_request(prompts()[i % len(prompts())], "ipmark", model, user, sampling, cfg)
        start = time.perf_counter()
        done = generate_path(handle, request, progress=lambda f, m, i=i: print(f"[text {i}] {m}", file=sys.stderr,
                                                                                   flush=True))
        path = done.value
        paths.append({"text": i, "model": model, "user": user, "sentences": len(path.chosen),
                      "context_full": path.context_full,
                      "generation_seconds": round(path.seconds, 1), "provenance": done.provenance,
                      "load_average": round(os.getloadavg()[0], 2)})
        print(json.dumps(paths[-1]), file=sys.stderr, flush=True)
        written.append(attribution_trials(path.text, model, user, identities, lengths, cfg))
        from backend.watermark.length import replay
        for u in identities[model]:
            replayed.append(attribution_trials(replay(path, model, u, cfg), model, u, identities, lengths, cfg))
        out = {"model": handle.display_name, "models": 2, "users_per_model": args.users,
               "candidates_per_sentence": cfg.n_candidates, "requested_sentences": args.sentences,
               "texts_generated": len(paths), "replayed_trials": len(replayed),
               "replayed": [r.__dict__ for r in length_rows(replayed)],
               "generated": [r.__dict__ for r in length_rows(written)], "paths": paths,
               "seconds_since_start_of_text": round(time.perf_counter() - start, 1),
               "command": "nohup .venv/bin/python bench/watermark_length.py --texts N"}
        Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
        publish(args.out)
        print(json.dumps(out["replayed"][-1]), file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
