"""First open of every page from a fresh store, as a newcomer meets it, then a cached reopen; headless Chromium.

What `make run` does, timed: a new empty store, the preparation step (`python -m backend models prepare`,
which also imports the reference artifacts), then the server. Each page is opened in a new browser tab and
timed until its script has finished (title on screen, script idle) and every chart is drawn; then every page is opened again (cached reopen).
Prints a table and writes bench/results/first_open.json.

    .venv/bin/python bench/first_open.py            # the embedded default model, a fresh store
    .venv/bin/python bench/first_open.py --no-prepare  # skip the preparation (how it was before reference artifacts)
    .venv/bin/python bench/first_open.py --export-reference  # --no-prepare, then ship what the pages computed

--export-reference regenerates data/reference/embedded.jsonl.gz: every artifact the pages' first views computed
on the fresh store (the embedded models' defaults), exported with `python -m backend store reference-export`.
Run it after changing a page's default or a feature's code version.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.server import CHROMIUM, CHROMIUM_FLAGS, running_app, wait_until_rendered  # noqa: E402
from app.views import FEATURES, HOME, TOOLS  # noqa: E402

TIMEOUT_S = 900


def _open(browser, url: str, view) -> float:
    page = browser.new_page(viewport={"width": 1400, "height": 1600})
    start = time.perf_counter()
    page.goto(f"{url}/{'' if view is HOME else view.url_path}")
    wait_until_rendered(page, TIMEOUT_S)
    seconds = time.perf_counter() - start
    failed = page.locator('[data-testid="stException"]').count()
    page.close()
    if failed:
        raise RuntimeError(f"{view.title} shows an exception")
    return seconds


def export_reference(store: Path) -> None:
    import duckdb

    with duckdb.connect(str(store), read_only=True) as con:
        fingerprints = [row[0] for row in con.execute("SELECT DISTINCT fingerprint FROM artifacts").fetchall()]
    flags = [arg for fp in fingerprints for arg in ("--fingerprint", fp)]
    subprocess.run([sys.executable, "-m", "backend", "store", "reference-export", "--store", str(store), *flags,
                    "-o", str(ROOT / "data" / "reference" / "embedded.jsonl.gz")], cwd=ROOT, check=True)


def main(prepare: bool, export: bool = False) -> dict:
    store = Path(tempfile.mkdtemp(prefix="first-open-")) / "store.duckdb"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "DASH_STORE": str(store)}
    print(f"store: {store}", file=sys.stderr)  # kept: its artifacts are what the pages computed
    result: dict = {"store": "fresh", "cpus": os.cpu_count(), "load_average_start": round(os.getloadavg()[0], 2)}
    if prepare:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "backend", "models", "prepare"], cwd=ROOT, env=env, check=True,
                       stdout=subprocess.DEVNULL)
        result["prepare_seconds"] = round(time.perf_counter() - start, 1)
    views = [HOME, *FEATURES, *TOOLS]
    with running_app(env=env, start_timeout_s=120) as (url, _):
        from playwright.sync_api import sync_playwright

        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS, headless=True)
            first = {view.title: _open(browser, url, view) for view in views}
            again = {view.title: _open(browser, url, view) for view in views}
            browser.close()
    result["pages"] = {title: {"first_open_s": round(first[title], 1), "cached_reopen_s": round(again[title], 1)}
                       for title in first}
    result["load_average_end"] = round(os.getloadavg()[0], 2)
    if export:
        export_reference(store)
    return result


def table(result: dict) -> str:
    lines = ["| page | first open | cached reopen |", "|---|---|---|"]
    lines += [f"| {title} | {row['first_open_s']} s | {row['cached_reopen_s']} s |"
              for title, row in result["pages"].items()]
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-prepare", action="store_true", help="skip `models prepare` on the fresh store")
    parser.add_argument("--export-reference", action="store_true",
                        help="without preparation, then export the artifacts the pages computed to data/reference/")
    args = parser.parse_args()
    prepare = not (args.no_prepare or args.export_reference)
    out = main(prepare=prepare, export=args.export_reference)
    print(table(out))
    name = "first_open.json" if prepare else "first_open_unprepared.json"
    (ROOT / "bench" / "results" / name).write_text(json.dumps(out, indent=1) + "\n")
