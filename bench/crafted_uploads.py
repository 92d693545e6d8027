"""Hostile uploads: worst parse time and peak memory of the upload reader on crafted files, each read in a fresh
process (so peak RSS is the reader's own), beside a normal upload of the same kind.

Run: .venv/bin/python bench/crafted_uploads.py  (writes bench/results/crafted_uploads.json)
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.crafted import (docx_attribute_bomb, docx_bomb, docx_bzip2_header,  # noqa: E402
                                   docx_element_bomb, docx_empty_paragraphs, docx_header_bomb, docx_many_parts,
                                   docx_redirect, pdf_operator_bomb, pdf_pages)

RESULTS = ROOT / "bench" / "results" / "crafted_uploads.json"
READER = """
import resource, sys, time
from pathlib import Path
from backend.errors import UserError
from backend.watermark.uploads import read_upload
path = Path(sys.argv[1])
data = path.read_bytes()
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
try:
    outcome = f"read {len(read_upload(path.name, data)):,} characters"
except UserError as err:
    outcome = f"refused: {err}"
seconds = time.perf_counter() - start
print(seconds, (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) / 1024, outcome, sep="\\t")
"""


def measure(name: str, data: bytes) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_bytes(data)
        out = subprocess.run([sys.executable, "-c", READER, str(path)], cwd=ROOT, capture_output=True, text=True,
                             check=True, timeout=900).stdout.strip().split("\t")
    return {"file": name, "size_kb": round(len(data) / 1024, 1), "seconds": round(float(out[0]), 3),
            "peak_rss_mb": round(float(out[1]), 1), "outcome": out[2]}


def main() -> None:
    cases = [("bomb-100mb.docx", docx_bomb(100)), ("5000-parts.docx", docx_many_parts(5000)),
             ("5000-pages.pdf", pdf_pages(5000)), ("1.2m-empty-paragraphs.docx", docx_empty_paragraphs(1_200_000)),
             # issue 46: the main part behind a relationship redirect, a header bomb, one 900k-operator stream
             ("8m-paragraphs-redirect.docx", docx_redirect(8_000_000)),
             ("8m-paragraphs-header.docx", docx_header_bomb(8_000_000)),
             ("499-pages-900k-operators.pdf", pdf_operator_bomb(499, 900_000)),
             # issue 55: elements that are neither paragraphs nor runs, a bzip2 part, attributes
             ("7m-elements-header.docx", docx_element_bomb(7_000_000)),
             ("7m-elements-main.docx", docx_element_bomb(7_000_000, where="main")),
             ("8m-elements-bzip2-header.docx", docx_bzip2_header(8_000_000)),
             ("3m-attributes-footnotes.docx", docx_attribute_bomb(3_000_000)),
             ("1m-attributes-one-tag.docx", docx_attribute_bomb(1_000_000, 1_000_000)),
             ("normal-20-pages.pdf", pdf_pages(20))]
    rows = [measure(name, data) for name, data in cases]
    crafted = rows[:-1]
    report = {"load_average": os.getloadavg()[0], "cpus": os.cpu_count(), "rows": rows,
              "worst_crafted_seconds": max(r["seconds"] for r in crafted),
              "worst_crafted_peak_rss_mb": max(r["peak_rss_mb"] for r in crafted)}
    RESULTS.write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
