"""Seeded outputs of every verb, to show a refactor left what they compute unchanged.

Runs every command of the verb list in tests/support/every_verb.py (each feature's CLI verbs on the
tiny random-weight models, plus the verbs only a page calls) on a fresh store, and writes each one's JSON output
with the fields that depend on the run rather than on the computation (timings, run ids, cache keys, whether it
was cached) left out. Run it on the code before and after a change and compare:

    .venv/bin/python bench/verb_snapshot.py --out /tmp/before.json      # on the old checkout
    .venv/bin/python bench/verb_snapshot.py --out /tmp/after.json
    .venv/bin/python bench/verb_snapshot.py --compare /tmp/before.json /tmp/after.json
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# Fields that say how a result was obtained, not what it is.
RUN_FIELDS = {"seconds", "compute_seconds", "elapsed", "elapsed_s", "run_id", "cached", "key", "created",
              "provenance", "wall_seconds", "detect_seconds", "generate_seconds", "tokens_per_second", "load",
              "stored", "started", "finished", "out", "written", "path", "scores_parquet", "job_id", "out_dir",
              "run_key"}


def _is_run_field(name: str) -> bool:
    """A timing (`*_s`, `*_ms`, `*_per_s`, `*seconds*`, latency) or a where/when of this run."""
    return name in RUN_FIELDS or "second" in name or "latency" in name or name.endswith(("_s", "_ms"))


def _without_run_fields(value):
    if isinstance(value, dict):
        return {k: _without_run_fields(v) for k, v in value.items() if not _is_run_field(k)}
    if isinstance(value, list):
        return [_without_run_fields(v) for v in value]
    return value


def snapshot() -> dict[str, object]:
    import tests.conftest  # noqa: F401  (the tiny random-weight models, allowlisted as the test suite does)
    from backend.__main__ import main
    from backend.store.codec import to_jsonable
    from tests.support.every_verb import CLI, PAGE, argv_of, command_names

    folder = Path(tempfile.mkdtemp(prefix="verb-snapshot-"))
    os.environ["DASH_STORE"] = str(folder / "store.duckdb")
    os.environ["DASH_WATERMARK_SECRET"] = "a fixed secret for the snapshot"
    names = command_names(folder)
    outputs: dict[str, object] = {}
    for verb in CLI:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = main(["--json", *argv_of(verb, names)])
        text = out.getvalue()
        try:
            parsed = json.loads(text) if text.strip() else None
        except json.JSONDecodeError:
            parsed = text
        outputs[verb] = {"exit": code, "output": _without_run_fields(parsed)}
        print(f"{verb}: exit {code}", file=sys.stderr)
    for verb, call in PAGE.items():
        result = call(names)
        value = getattr(result, "value", result)
        outputs[verb] = {"output": _without_run_fields(json.loads(json.dumps(to_jsonable(value), default=str)))}
        print(f"{verb}: done", file=sys.stderr)
    return outputs


def compare(before: Path, after: Path) -> int:
    old, new = json.loads(before.read_text()), json.loads(after.read_text())
    differing = [verb for verb in old if verb in new and old[verb] != new[verb]]
    for verb in differing:
        print(f"differs: {verb}")
    for verb in sorted(set(old) ^ set(new)):
        print(f"only in {'before' if verb in old else 'after'}: {verb}")
    same = len([v for v in old if v in new]) - len(differing)
    print(f"{same} verbs identical, {len(differing)} differ")
    return 1 if differing else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args()
    if args.compare:
        return compare(*args.compare)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    outputs = snapshot()
    (args.out or Path("verb_snapshot.json")).write_text(json.dumps(outputs, indent=1, sort_keys=True, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
