"""Resident memory of the dashboard's server as a user meets it: start the app, open every page once.

Starts `streamlit run app/main.py` on a free localhost port (HF_HUB_OFFLINE=1, a fresh store into which the app
imports the reference artifacts, as after `make run`), opens Home in one headless Chromium tab and then every
other page by its sidebar link, as one clicks through the views, each until its script is idle. The server's
RSS (and that of any child process) is sampled after startup, after each page, at the end (after --settle
seconds), and every 0.5 s throughout for the peak. Writes bench/results/app_rss.json; `python -m bench report`
puts it in docs/RESULTS.md.

    nice -n 10 .venv/bin/python bench/app_rss.py
    nice -n 10 .venv/bin/python bench/app_rss.py --store data/store.duckdb   # on an existing store instead

Debian's chromium is used (/usr/bin/chromium); no browser is downloaded.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.server import (CHROMIUM, CHROMIUM_FLAGS, CLICKED_PAGE_RAN, free_port, wait_for_health,  # noqa: E402
                        wait_until_idle)
from app.views import FEATURES, HOME, TOOLS  # noqa: E402
from bench.output import write_result  # noqa: E402

OUT = ROOT / "bench" / "results" / "app_rss.json"
MB = 2**20


def rss(pid: int) -> tuple[float, float]:
    """(RSS of the process, RSS of it and its children) in MiB."""
    proc = psutil.Process(pid)
    own = proc.memory_info().rss
    children = 0
    for child in proc.children(recursive=True):
        try:
            children += child.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return own / MB, (own + children) / MB


class Sampler(threading.Thread):
    """The peak RSS over the run, sampled every `every` seconds."""

    def __init__(self, pid: int, every: float = 0.5):
        super().__init__(daemon=True)
        self.pid, self.every, self.peak, self.peak_tree = pid, every, 0.0, 0.0
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            try:
                own, tree = rss(self.pid)
            except psutil.NoSuchProcess:
                return
            self.peak, self.peak_tree = max(self.peak, own), max(self.peak_tree, tree)
            self.done.wait(self.every)


def start_server(port: int, env: dict, log, app_root: Path) -> subprocess.Popen:
    python = ROOT / ".venv" / "bin" / "python"
    cmd = [str(python if python.exists() else sys.executable), "-m", "streamlit", "run", "app/main.py",
           "--server.headless", "true", "--server.port", str(port), "--server.address", "127.0.0.1",
           "--browser.gatherUsageStats", "false"]
    return subprocess.Popen(cmd, cwd=app_root, env=env, stdout=log, stderr=subprocess.STDOUT)


def code_version(app_root: Path) -> str:
    """The commit the server ran (`-dirty` when its tree had uncommitted changes)."""
    try:
        out = subprocess.run(["git", "describe", "--always", "--dirty", "--abbrev=7"], cwd=app_root,
                             capture_output=True, text=True, timeout=30)
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    marker = app_root / ".source-commit"  # a `git archive` export says what it was exported from
    return marker.read_text().strip() if marker.exists() else "unknown"


def measure(store: Path, timeout_s: float, settle_s: float, log_path: Path, app_root: Path) -> dict:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "DASH_STORE": str(store)}
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    views = [HOME, *FEATURES, *TOOLS]
    pages: list[dict] = []
    with open(log_path, "w") as log:
        server = start_server(port, env, log, app_root)
        try:
            wait_for_health(url, server, 120)
            time.sleep(2.0)
            startup_own, startup_tree = rss(server.pid)
            sampler = Sampler(server.pid)
            sampler.start()
            from playwright.sync_api import sync_playwright

            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS, headless=True)
                chromium = browser.version
                page = browser.new_page(viewport={"width": 1400, "height": 1600})
                for view in views:
                    start = time.perf_counter()
                    if view is HOME:
                        page.goto(f"{url}/")
                        page.wait_for_selector('h1, [data-testid="stException"]', timeout=timeout_s * 1000)
                        if not page.locator("h1").count():  # the app itself failed: no page to measure
                            raise RuntimeError("the app shows an exception: "
                                               + page.locator('[data-testid="stException"]').first.inner_text()[:500])
                    else:
                        old = page.evaluate("document.querySelector('h1').textContent")
                        page.locator(f'[data-testid="stSidebarNav"] a[href$="/{view.url_path}"]').first.click()
                        page.wait_for_function(CLICKED_PAGE_RAN, arg=old, timeout=timeout_s * 1000, polling=100)
                    wait_until_idle(page, timeout_s)
                    seconds = time.perf_counter() - start
                    own, tree = rss(server.pid)
                    error = page.locator('[data-testid="stException"]')
                    pages.append({"page": view.title, "seconds": round(seconds, 1), "rss_mb": round(own),
                                  "rss_tree_mb": round(tree),
                                  "exception_shown": error.first.inner_text()[:500] if error.count() else None})
                    print(f"{view.title}: {own:.0f} MB after {seconds:.1f} s", file=sys.stderr, flush=True)
                time.sleep(settle_s)
                end_own, end_tree = rss(server.pid)
                browser.close()
            sampler.done.set()
            sampler.join()
        finally:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
    return {"startup_rss_mb": round(startup_own), "startup_rss_tree_mb": round(startup_tree), "pages": pages,
            "end_rss_mb": round(end_own), "end_rss_tree_mb": round(end_tree), "settle_s": settle_s,
            "peak_rss_mb": round(max(sampler.peak, end_own, *[p["rss_mb"] for p in pages])),
            "peak_rss_tree_mb": round(max(sampler.peak_tree, end_tree, *[p["rss_tree_mb"] for p in pages])),
            "children": any(p["rss_tree_mb"] > p["rss_mb"] for p in pages), "chromium": chromium}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, default=None,
                        help="DuckDB store the app opens (default: a fresh one in a temporary folder)")
    parser.add_argument("--timeout", type=float, default=900, help="seconds a page may take to become idle")
    parser.add_argument("--settle", type=float, default=10, help="seconds after the last page before the end sample")
    parser.add_argument("--app-root", type=Path, default=ROOT,
                        help="the checkout whose app is served (e.g. a `git archive` of HEAD with .venv and "
                             "data/cache linked in), to measure committed code beside work in progress")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="app-rss-"))
    store = args.store or tmp / "store.duckdb"
    load_start = round(os.getloadavg()[0], 2)
    result = measure(store, args.timeout, args.settle, tmp / "streamlit.log", args.app_root.resolve())
    flags = [] if args.store is None else ["--store", str(args.store)]
    if args.settle != 10:
        flags += ["--settle", f"{args.settle:g}"]
    out = {"command": " ".join(["nice -n 10 .venv/bin/python bench/app_rss.py", *flags]),
           "store": "fresh (reference artifacts imported by the app)" if args.store is None else str(args.store),
           "code": code_version(args.app_root.resolve()),
           "default_model": os.environ.get("DASH_DEFAULT_MODEL", "smollm2-135m-instruct"),
           "cpus": os.cpu_count(), "load_average_start": load_start, **result,
           "load_average_end": round(os.getloadavg()[0], 2)}
    return write_result(args.out, out)


if __name__ == "__main__":
    main()
