"""How often long work shows something new on the embedded models: the Disagreement budget sweep, an MT ablation
and the NAG ranking of the sample pool, each run as its page runs it with a watcher of its partial results
(backend.progress.report_partial), and once more with nobody watching, side by side in one process.

For each: the seconds to the first partial result, the longest stretch with nothing new on screen (start to the
first partial, between two, or the last to the end), how many partials came, and the time with a watcher over the
time without (what building the partials costs). Every run is on a fresh temporary store, so everything is
computed; the watched and unwatched runs alternate in order between workloads, and the load average is recorded.

    .venv/bin/python bench/partial_stream.py [--problems 3] [--calibration 8] [--sentences 3] [--rounds 2]
    .venv/bin/python bench/partial_stream.py --only mt,nag --rounds 2   # the others' figures kept
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from bench.output import write_result  # noqa: E402

OUT = ROOT / "bench" / "results" / "partial_stream.json"


class Timeline:
    """A progress that watches partials: when each came (seconds from the start)."""

    watches_partials = True

    def __init__(self) -> None:
        self.start = time.perf_counter()
        self.at: list[float] = []
        self.done: list[int] = []

    def __call__(self, fraction: float, message: str) -> None:
        pass

    def partial(self, partial) -> None:
        self.at.append(time.perf_counter() - self.start)
        self.done.append(partial.done)


def _fresh_store() -> None:
    os.environ["DASH_STORE"] = str(Path(tempfile.mkdtemp(prefix="partial-bench-")) / "store.duckdb")
    from backend.store.db import release

    release()  # the next connection opens the new file


def _run(work: Callable, watched: bool) -> dict:
    from backend.progress import silent

    _fresh_store()
    timeline = Timeline()
    start = time.perf_counter()
    work(timeline if watched else silent)
    seconds = time.perf_counter() - start
    out = {"seconds": round(seconds, 2)}
    if watched:
        edges = [0.0, *timeline.at, seconds]
        out.update(partials=len(timeline.at), first_partial_s=round(timeline.at[0], 2) if timeline.at else None,
                   longest_without_news_s=round(max(b - a for a, b in zip(edges, edges[1:])), 2),
                   done_counts=sorted(set(timeline.done)))
    return out


def _side_by_side(name: str, work: Callable, watched_first: bool, rounds: int) -> dict:
    """`rounds` = 1: watched and unwatched once (in the given order); 2: the same and then the other way round
    (ABBA), so the first run's one-time costs (lazy imports, kernels for new shapes) and a drifting load weigh on
    both sides alike."""
    load_before = os.getloadavg()[0]
    order = [watched_first, not watched_first] + ([not watched_first, watched_first] if rounds > 1 else [])
    runs = [(w, _run(work, w)) for w in order]
    watched = [r for w, r in runs if w]
    unwatched = sum(r["seconds"] for w, r in runs if not w)
    result = {**watched[0], "watched_seconds": [r["seconds"] for r in watched],
              "unwatched_seconds": [r["seconds"] for w, r in runs if not w],
              "watched_over_unwatched": round(sum(r["seconds"] for r in watched) / unwatched, 3),
              "order": " ".join("W" if w else "U" for w in order),
              "load_1min": [round(load_before, 2), round(os.getloadavg()[0], 2)]}
    print(name, result, file=sys.stderr)
    return result


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=3, help="held-out problems of the sweep")
    parser.add_argument("--calibration", type=int, default=8, help="training problems the sweep's gate is "
                        "calibrated on (the page's 'Calibration problems'; 32 by default there)")
    parser.add_argument("--sentences", type=int, default=3, help="held-out sentences of the MT ablation")
    parser.add_argument("--rounds", type=int, default=1, choices=(1, 2), help="2: watched and unwatched twice, "
                        "in ABBA order")
    parser.add_argument("--only", default="", help="comma-separated workload names (sweep, mt, nag); the others "
                        "keep their figures from the result file, each with its own command and load")
    opts = parser.parse_args(argv)
    wanted = set(filter(None, opts.only.split(","))) or {"sweep", "mt", "nag"}

    from backend.disagreement import CalibrationConfig, ProblemSet, SweepConfig, load_pair, sweep
    from backend.models import default_model_id, load
    from backend.mt import ExperimentConfig, run_experiment
    from backend.nag import RankConfig, TargetSet, rank, samples

    base = default_model_id()
    pair = load_pair(base, "smollm2-135m-arith-reasoner")
    gemma = load("gemma-3-270m")
    small = load(base)
    targets = [TargetSet("science", tuple(samples.sample_targets("science")))]
    workloads = {
        "Disagreement budget sweep": ("sweep",
            f"{pair.label}, {opts.problems} held-out problems, gate calibrated on {opts.calibration}, the page's "
            "default budgets and policies",
            lambda progress: sweep(pair, SweepConfig(ProblemSet(opts.problems), calibration=CalibrationConfig(
                ProblemSet(opts.calibration, "train", 1))), progress)),
        "MT ablation": ("mt",
            f"{gemma.display_name}, en->fr, {opts.sentences} held-out sentences, 1 random-head draw (4 conditions)",
            lambda progress: run_experiment(gemma, "ablate", ExperimentConfig(n_sentences=opts.sentences,
                                                                              n_random=1), progress=progress)),
        "NAG ranking": ("nag",
            f"{small.display_name}, the sample pool (250 documents) against the 'science' targets, page defaults",
            lambda progress: rank(small, samples.pool_path(), targets, RankConfig(), progress=progress)),
    }
    command = "nohup .venv/bin/python bench/partial_stream.py " + " ".join(argv if argv is not None else sys.argv[1:])
    results = json.loads(OUT.read_text())["workloads"] if OUT.exists() and opts.only else {}
    for i, (name, (short, what, work)) in enumerate(workloads.items()):
        if short in wanted:
            results[name] = {"what": what, "command": command.strip(),
                             **_side_by_side(name, work, watched_first=i % 2 == 0, rounds=opts.rounds)}
    return write_result(OUT, {"cpu_count": os.cpu_count(), "workloads": results})


if __name__ == "__main__":
    main()
