"""How fast the Watermark page's example texts get their verdicts: each shipped example (data/reference/
watermark_examples.jsonl.gz) imported into a fresh temporary store with the demo identity, then the verdict table of
every method computed on it with the embedded model, as the page does after a click. The first example pays the
one-time loads (the model, the sentence embedder); each is timed twice (first and repeated). Wall and CPU time and
the load average are recorded: the machine is shared.

    nice -n 15 .venv/bin/python bench/watermark_example_verdicts.py
"""
from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.scratch import scratch_store  # noqa: E402

_TMP = scratch_store("wm-example-verdicts-")

from backend.features import load_all  # noqa: E402
from backend.models import default_model_id, load  # noqa: E402
from backend.store.reference import REFERENCE_DIR, import_reference  # noqa: E402
from backend.watermark import demo  # noqa: E402
from backend.watermark.verdicts import verdict_table  # noqa: E402
from output import write_result  # noqa: E402  (bench/, beside this script)

SHIPPED = "watermark_examples.jsonl.gz"


def _timed(call):
    wall, cpu = time.perf_counter(), time.process_time()
    out = call()
    return out, round(time.perf_counter() - wall, 3), round(time.process_time() - cpu, 3)


def main() -> int:
    load_all()
    (_TMP / "ref").mkdir()
    shutil.copy(REFERENCE_DIR / SHIPPED, _TMP / "ref" / SHIPPED)
    import_reference(_TMP / "ref")
    demo.add_demo()
    handle, load_wall, load_cpu = _timed(lambda: load(default_model_id()))
    rows = []
    for example in demo.examples():
        load_average = os.getloadavg()[0]
        def judge(e=example):
            return verdict_table(e.text, handle, model_address=demo.DEMO_MODEL_ADDRESS)

        table, wall, cpu = _timed(judge)
        _, again_wall, again_cpu = _timed(judge)
        rows.append({"example": example.name, "method": example.method, "characters": len(example.text),
                     "load_average_1min": round(load_average, 2), "wall_s": wall, "cpu_s": cpu,
                     "again_wall_s": again_wall, "again_cpu_s": again_cpu,
                     "verdicts": {r.method: r.verdict for r in table.rows},
                     "flagged_by": [r.method for r in table.rows if r.verdict == "watermarked"]})
    write_result(ROOT / "bench" / "results" / "watermark_example_verdicts.json", {
        "model": handle.display_name, "model_load_wall_s": load_wall, "model_load_cpu_s": load_cpu,
        "cpu_count": os.cpu_count(), "examples": rows,
        "command": "nice -n 15 .venv/bin/python bench/watermark_example_verdicts.py"})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
