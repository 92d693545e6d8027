"""Write the shipped watermark example texts (data/reference/watermark_examples.jsonl.gz) with the embedded model.

One text per registered watermark method, marked with the demo identity's keys (IPMark once per demo user; methods
that need no identity, such as hf-kgw and synthid, with their default public keys), and one
human-written text from the corpus; each is an artifact of the verb "watermark example" (backend.watermark.examples)
computed in a temporary store and exported as reference, so every install imports it on first open. Each text is
checked with the verdict table before it is written (printed; a method whose text is not flagged is reported, not
hidden).

    HF_HUB_OFFLINE=1 nice -n 15 .venv/bin/python scripts/watermark_examples.py [--threads 1] [--only ipmark,kgw]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
_TMP = Path(tempfile.mkdtemp(prefix="wm-examples-"))
(_TMP / "earlier").mkdir()
os.environ["DASH_STORE"] = str(_TMP / "store.duckdb")  # a private store: only the examples are exported from it
os.environ["DASH_WATERMARK_SECRET_FILE"] = str(_TMP / "secret.key")  # the examples never touch the master secret

import torch  # noqa: E402

from backend.features import load_all  # noqa: E402
from backend.models import default_model_id, load  # noqa: E402
from backend.store.origin import REFERENCE  # noqa: E402
from backend.store.reference import export_reference, import_artifacts  # noqa: E402
from backend.watermark import demo  # noqa: E402
from backend.watermark.examples import ExampleSpec, example_verb  # noqa: E402
from backend.watermark.methods import METHODS  # noqa: E402
from backend.watermark.sampling import SamplingConfig  # noqa: E402
from backend.watermark.verdicts import verdict_table  # noqa: E402

OUT = ROOT / "data" / "reference" / "watermark_examples.jsonl.gz"
IPMARK_SENTENCES = 24  # IPMark needs about 20 sentences for a verdict (bench/watermark_length.py)
TOKEN_SENTENCES = 8  # token-level methods decide on ~100 tokens
PROMPTS = ("Describe a rainy day in a big city.", "Write about a walk along the river in autumn.",
           "Explain how a small bakery starts its day.", "Tell me about a visit to a mountain village.",
           "Describe the view from a lighthouse at night.")


def _printed(name: str):
    """A progress callback printing each step of an example's generation to stderr."""
    return lambda fraction, message: print(f"  {name} [{fraction:.0%}] {message}", file=sys.stderr)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1, help="torch threads (1: steady under a shared CPU)")
    parser.add_argument("--only", default="", help="comma-separated methods (default: every registered one)")
    parser.add_argument("--output", default=str(OUT))
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    load_all()
    handle = load(default_model_id())
    demo.add_demo()
    wanted = [m.name for m in METHODS if not m.is_baseline and (not args.only or m.name in args.only.split(","))]
    specs = []
    for i, name in enumerate(wanted):
        users = [u for u, _ in demo.DEMO_USERS] if METHODS.get(name).identifies_users else [0]
        for user in users:
            long = METHODS.get(name).identifies_users
            sampling = SamplingConfig(max_sentences=IPMARK_SENTENCES if long else TOKEN_SENTENCES, seed=user)
            specs.append(ExampleSpec(name=f"{name}-user-{user}" if user else name, method=name,
                                     prompt=PROMPTS[(i + user) % len(PROMPTS)], user_address=user, sampling=sampling))
    if Path(args.output).is_file():  # keep the examples already written: their keys hit, only new methods compute
        shutil.copy(args.output, _TMP / "earlier" / "examples.jsonl.gz")
        import_artifacts(_TMP / "earlier", REFERENCE)
    report = []
    for spec in specs:
        try:
            done = example_verb(handle, spec, _printed(spec.name))
        except Exception as err:  # noqa: BLE001 - a method that cannot generate here is reported, the rest written
            report.append({"name": spec.name, "error": f"{type(err).__name__}: {err}"})
            continue
        report.append({"name": spec.name, "seconds": round(done.seconds, 1), **_check(done.value, handle)})
    human = example_verb(handle, ExampleSpec(name="human", method="none")).value
    report.append({"name": "human", **_check(human, handle)})
    written = export_reference([handle.fingerprint], Path(args.output), actions=[f"watermark:{demo.EXAMPLE_ACTION}"])
    print(json.dumps({"written": args.output, "examples": written, "checks": report}, indent=1))
    return 0


def _check(example: demo.Example, handle) -> dict:
    table = verdict_table(example.text, handle, model_address=demo.DEMO_MODEL_ADDRESS)
    return {"verdicts": {r.method: f"{r.verdict} (p {r.p_value:.2g}, {r.identity})" if r.p_value is not None
                         else r.verdict for r in table.rows}}


if __name__ == "__main__":
    raise SystemExit(main())
