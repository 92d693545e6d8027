"""Re-decode the Decoding page's first-view ASMC run so its shipped reference artifact carries the particle history
(tokens and weights per step, recorded since the particle drill-down), keeping its key, and only if the new run still
shows the first view's claim (greedy and ASMC answer differently, ASMC resampled). Greedy is left as shipped.

    .venv/bin/python scripts/refresh_decoding_first_view.py
"""
from __future__ import annotations

import gzip
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from backend.decoding import FIRST_VIEW, DecodeConfig  # noqa: E402
from backend.decoding.run import run_keyed, run_key  # noqa: E402
from backend.features import load_all  # noqa: E402
from backend.models import get_spec, load  # noqa: E402
from backend.store.codec import dumps, loads  # noqa: E402
from backend.tasks import problem_set  # noqa: E402

PATH = ROOT / "data" / "reference" / "decoding_first_view.jsonl.gz"


def main() -> None:
    load_all()
    handle = load(FIRST_VIEW.model_id)
    task = problem_set(FIRST_VIEW.problem_set, FIRST_VIEW.index + 1, FIRST_VIEW.steps)[-1]
    tokens = get_spec(FIRST_VIEW.model_id).max_new_tokens
    rows = [json.loads(line) for line in gzip.open(PATH, "rt")]
    old = {loads(r["payload"]).strategy: r for r in rows}
    greedy = loads(old["greedy"]["payload"])
    start = time.perf_counter()
    fresh = run_keyed(handle, run_key(task, DecodeConfig(strategy="asmc", max_new_tokens=tokens,
                                                         n=FIRST_VIEW.particles)), store=False)
    seconds = time.perf_counter() - start
    claim = (fresh.answer != greedy.answer and fresh.correct != greedy.correct and fresh.resampling_events >= 1
             and fresh.ess_min_ratio < fresh.config.ess_threshold and fresh.particles[0].has_history)
    print(f"asmc: answer {fresh.answer} (greedy {greedy.answer}), {fresh.resampling_events} resampling events, "
          f"ESS_min/N {fresh.ess_min_ratio:.2f}, {seconds:.0f} s; claim holds: {claim}")
    if not claim:
        sys.exit("the re-decoded run does not show the first view's claim: the reference is left as it is")
    old["asmc"]["payload"] = dumps(fresh)
    old["asmc"]["compute_seconds"] = seconds
    with gzip.open(PATH, "wt") as out:
        for r in rows:
            out.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
