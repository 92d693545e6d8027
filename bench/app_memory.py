"""Resident memory of the running dashboard with the default model loaded (target: < 1.5 GB).

Starts the app on a free port, opens Home in headless Chromium (which loads the default model),
then reads the server process's RSS. Prints JSON and writes bench/results/app_memory.json.

    .venv/bin/python bench/app_memory.py
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.server import CHROMIUM, CHROMIUM_FLAGS, running_app  # noqa: E402


def main() -> dict:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    with running_app(env=env, start_timeout_s=120) as (url, server):
        idle_rss = psutil.Process(server.pid).memory_info().rss
        from playwright.sync_api import sync_playwright

        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
            page = browser.new_page()
            page.goto(f"{url}/")
            page.wait_for_selector("text=fingerprint", state="attached", timeout=300_000)
            time.sleep(2)
            loaded_rss = psutil.Process(server.pid).memory_info().rss
            browser.close()
    result = {"idle_rss_mb": round(idle_rss / 2**20), "with_default_model_rss_mb": round(loaded_rss / 2**20),
              "target_mb": 1536}
    (ROOT / "bench" / "results").mkdir(exist_ok=True)
    (ROOT / "bench" / "results" / "app_memory.json").write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
