"""Re-key shipped reference rows to their verbs' current code versions, for a change that moved code without
changing what it computes (checked first: `bench/verb_snapshot.py` before and after gives identical outputs).

    .venv/bin/python scripts/rekey_reference.py            # every file of data/reference/
    .venv/bin/python scripts/rekey_reference.py --check    # list rows whose version differs; change nothing
    .venv/bin/python scripts/rekey_reference.py --directory bench/runs   # a benchmark's shipped runs

A row whose computation did change must be recomputed instead (bench/first_open.py --export-reference and the
scripts named in docs/architecture.md), never re-keyed.
"""
from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from backend.store.artifacts import artifact_key  # noqa: E402
from backend.store.reference_files import REFERENCE_DIR, read_reference  # noqa: E402
from backend.verbs import all_verbs  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--directory", type=Path, default=REFERENCE_DIR)
    args = parser.parse_args()
    versions = {(v.feature, v.name): v.code_version for v in all_verbs()}
    stale = 0
    for path in sorted(args.directory.glob("*.jsonl.gz")):
        rows = list(read_reference(path))
        for row in rows:
            current = versions[(row["feature"], row["action"])]
            if row["code_version"] != current:
                stale += 1
                print(f"{path.name}: {row['feature']} {row['action']} {row['code_version']} -> {current}")
                row["key"] = artifact_key(row["feature"], row["action"], row["fingerprint"], row["params"], current)
                row["code_version"] = current
        if not args.check:
            with open(path, "wb") as raw, gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as f:
                for row in rows:
                    f.write((json.dumps(row, sort_keys=True) + "\n").encode())
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
