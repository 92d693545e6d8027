"""Resident memory of the running dashboard with the default model loaded (target: < 1.5 GB).

Starts the app on a free port, opens Home in headless Chromium (which loads the default model),
then reads the server process's RSS. Prints JSON and writes bench/results/app_memory.json.

    .venv/bin/python bench/app_memory.py
"""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def main() -> dict:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    server = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app/main.py", "--server.port", str(port),
                               "--server.headless", "true"], cwd=ROOT, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1)
                break
            except OSError:
                time.sleep(0.5)
        idle_rss = psutil.Process(server.pid).memory_info().rss
        from playwright.sync_api import sync_playwright

        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=FLAGS)
            page = browser.new_page()
            page.goto(f"http://127.0.0.1:{port}/")
            page.wait_for_selector("text=fingerprint", state="attached", timeout=300_000)
            time.sleep(2)
            loaded_rss = psutil.Process(server.pid).memory_info().rss
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    result = {"idle_rss_mb": round(idle_rss / 2**20), "with_default_model_rss_mb": round(loaded_rss / 2**20),
              "target_mb": 1536}
    (ROOT / "bench" / "results").mkdir(exist_ok=True)
    (ROOT / "bench" / "results" / "app_memory.json").write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
