"""First open of every page from a fresh store, as a newcomer meets it, then a cached reopen; headless Chromium.

What `make run` does, timed: a new empty store, the preparation step (`python -m backend models prepare`,
which also imports the reference artifacts), then the server. One browser, as a researcher uses it: each page
is opened in a new tab of one browser context (so Streamlit's JavaScript, served as immutable, comes from the
HTTP cache after the first page) and timed until its script has finished (title on screen, script idle) and
every chart is drawn; then every page is opened again (cached reopen, the median of REOPENS rounds). For comparison
each reopen is also timed in a fresh browser context (empty HTTP cache: the whole bundle downloaded and parsed
again), and as a researcher clicks through the views: one tab, each page reached from the previous one by its link
in the sidebar (no page load: Streamlit's code and Plotly's are already in the tab), timed until the new page's
title, script idle, no stale element and every chart drawn.
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
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.server import (CHROMIUM, CHROMIUM_FLAGS, CLICKED_PAGE_RAN, running_app, wait_for_charts,  # noqa: E402
                        wait_until_rendered, wait_until_script_idle)
from app.views import FEATURES, HOME, TOOLS  # noqa: E402
from backend.store.reference import ENV_REFERENCE_DIR  # noqa: E402

TIMEOUT_S = 900
REOPENS = 3  # rounds of cached reopens; the median is reported


VIEWPORT = {"width": 1400, "height": 1600}
# Resources of this page load served from the HTTP cache (no bytes transferred) / all of them
CACHED_RESOURCES = ("[performance.getEntriesByType('resource').filter(r => r.name.includes('/static/'))]"
                    ".map(all => [all.filter(r => r.transferSize === 0).length, all.length])[0]")


@dataclass(frozen=True)
class Opened:
    script_idle_s: float  # the page's script has finished (the measure)
    drawn_s: float  # ... and every chart is drawn (what the tables report)
    static_from_cache: list[int]  # [static files served from the HTTP cache, all static files]


def _open(context, url: str, view) -> Opened:
    """`view` opened in a new tab of `context`, timed to script idle and to every chart drawn."""
    page = context.new_page()
    start = time.perf_counter()
    page.goto(f"{url}/{'' if view is HOME else view.url_path}")
    wait_until_script_idle(page, TIMEOUT_S)
    idle = time.perf_counter() - start
    wait_for_charts(page, TIMEOUT_S)
    drawn = time.perf_counter() - start
    failed = page.locator('[data-testid="stException"]').count()
    cached = page.evaluate(CACHED_RESOURCES)
    page.close()
    if failed:
        raise RuntimeError(f"{view.title} shows an exception")
    return Opened(idle, drawn, cached)


def _open_in_new_context(browser, url: str, view) -> Opened:
    context = browser.new_context(viewport=VIEWPORT)
    try:
        return _open(context, url, view)
    finally:
        context.close()




def _click_through(context, url: str, views: list) -> dict[str, float]:
    """Seconds per view, reached by its sidebar link from the previous view in one tab (Home last, to close the
    round)."""
    page = context.new_page()
    page.goto(url)
    wait_until_rendered(page, TIMEOUT_S)
    seconds = {}
    for view in [*views[1:], views[0]]:
        old_title = page.evaluate("document.querySelector('h1').textContent")
        link = page.locator(f'[data-testid="stSidebarNav"] a[href$="/{"" if view is HOME else view.url_path}"]')
        start = time.perf_counter()
        link.first.click()
        page.wait_for_function(CLICKED_PAGE_RAN, arg=old_title, timeout=TIMEOUT_S * 1000, polling=50)
        wait_for_charts(page, TIMEOUT_S)
        seconds[view.title] = time.perf_counter() - start
        if page.locator('[data-testid="stException"]').count():
            raise RuntimeError(f"{view.title} shows an exception")
    page.close()
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
    if not prepare:  # the app imports the shipped artifacts when it opens a store: point it at none
        env[ENV_REFERENCE_DIR] = str(store.parent / "no-reference")
        (store.parent / "no-reference").mkdir()
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
            chromium_version = browser.version
            context = browser.new_context(viewport=VIEWPORT)
            first = {view.title: _open(context, url, view) for view in views}
            again, fresh, clicked = ({view.title: [] for view in views} for _ in range(3))
            for _ in range(REOPENS):  # the ways side by side, round by round, so drifting load hits all alike
                for view in views:
                    fresh[view.title].append(_open_in_new_context(browser, url, view))
                    again[view.title].append(_open(context, url, view))
                for title, seconds in _click_through(context, url, views).items():
                    clicked[title].append(seconds)
            browser.close()
    result["chromium"] = chromium_version
    result["browser"] = ("one context, a new tab per page (shared HTTP cache); "
                         "cached_reopen_new_context_s: a new context per page (empty HTTP cache); "
                         "cached_click_through_s: one tab, reached by the sidebar link from the previous page")
    result["reopen_rounds"] = REOPENS

    def median(samples: list) -> float:
        return round(float(statistics.median(samples)), 1)

    result["pages"] = {title: {"first_open_s": round(first[title].drawn_s, 1),
                               "first_open_script_idle_s": round(first[title].script_idle_s, 1),
                               "cached_reopen_s": median([o.drawn_s for o in again[title]]),
                               "cached_reopen_script_idle_s": median([o.script_idle_s for o in again[title]]),
                               "cached_reopen_new_context_s": median([o.drawn_s for o in fresh[title]]),
                               "cached_click_through_s": median(clicked[title]),
                               "static_from_cache": again[title][-1].static_from_cache,
                               "static_from_cache_new_context": fresh[title][-1].static_from_cache}
                       for title in first}
    result["load_average_end"] = round(os.getloadavg()[0], 2)
    if export:
        export_reference(store)
    return result


def table(result: dict) -> str:
    lines = ["| page | first open (new tab) | cached reopen (new tab) | cached reopen (new browser context) | "
             "cached, clicked in the sidebar | new tab, to script idle: first open / reopen |",
             "|---|---|---|---|---|---|"]
    lines += [f"| {title} | {row['first_open_s']} s | {row['cached_reopen_s']} s | "
              f"{row['cached_reopen_new_context_s']} s | {row['cached_click_through_s']} s | "
              f"{row['first_open_script_idle_s']} s / {row['cached_reopen_script_idle_s']} s |"
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
