"""Start the dashboard as a local subprocess on a free port (browser tests, the memory benchmark)."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"  # Debian's package; a browser is never downloaded
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-quic", "--no-first-run", "--disable-component-update", "--disable-sync"]


class AppDidNotStart(RuntimeError):
    pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_health(url: str, proc: subprocess.Popen, timeout_s: float) -> None:
    """Return once the streamlit server at `url` answers its health check; AppDidNotStart when it has not
    within `timeout_s` or its process `proc` has ended."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            urllib.request.urlopen(f"{url}/_stcore/health", timeout=1)
            return
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                raise AppDidNotStart(f"streamlit did not answer on {url} within {timeout_s:.0f} s")
            time.sleep(0.5)


@contextmanager
def running_app(log: IO | None = None, env: dict[str, str] | None = None,
                start_timeout_s: float = 60.0) -> Iterator[tuple[str, subprocess.Popen]]:
    """(base URL, server process) of a headless streamlit serving app/main.py; stopped on exit."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(ROOT / "app" / "main.py"),
                             "--server.port", str(port),  # address: .streamlit/config.toml (127.0.0.1)
                             "--server.headless", "true", "--browser.gatherUsageStats", "false"],
                            cwd=ROOT, stdout=log or subprocess.DEVNULL, stderr=subprocess.STDOUT,
                            env=env if env is not None else os.environ.copy())
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_health(url, proc, start_timeout_s)
        yield url, proc
    finally:
        proc.terminate()
        proc.wait(timeout=30)


# A page reached by a sidebar click has run: a new title (h1), the script finished, no element of the previous
# page left (stale). Reaching a page this way keeps the tab's loaded code (Streamlit's bundle, Plotly's chunk),
# where opening its URL in a new tab loads and compiles it again: 3-5 s of Chromium CPU per page on 2 cores.
CLICKED_PAGE_RAN = (
    "(old) => { const h = document.querySelector('h1'); return h && h.textContent !== old && "
    "document.querySelector('[data-testid=\"stApp\"][data-test-script-state=\"notRunning\"]') && "
    "!document.querySelector('[data-stale=\"true\"]') }")
# A rerun of the same page (an input changed) has finished.
RERUN_DONE = ("document.querySelector('[data-testid=\"stApp\"][data-test-script-state=\"notRunning\"]') && "
              "!document.querySelector('[data-stale=\"true\"]')")


def sidebar_link(page, url_path: str):
    """The sidebar's link to a page ("" for Home)."""
    return page.locator(f'[data-testid="stSidebarNav"] a[href$="/{url_path}"]').first


def visit_by_sidebar(page, url_path: str, timeout_s: float) -> None:
    """Click the sidebar link of another page (Playwright, sync) and wait until it has run."""
    old = page.evaluate("document.querySelector('h1') ? document.querySelector('h1').textContent : ''")
    sidebar_link(page, url_path).click()
    page.wait_for_function(CLICKED_PAGE_RAN, arg=old, timeout=timeout_s * 1000, polling=50)


def wait_until_idle(page, timeout_s: float) -> None:
    """Wait (Playwright page) until the app's script, including a page's default computation, has finished. On a
    page just opened the state reads "initial" until the first run ends, so this cannot hold early; after an action
    on an open page it can (the rerun starts a moment later): act through `rerun_after` instead."""
    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]',
                           state="attached", timeout=timeout_s * 1000)


# Armed before an action: notes whether the app's script state has left "notRunning" since (a rerun started),
# however quickly it came back: each change of the attribute is a record, with the value it replaced. The whole
# document is watched, so a rerun that replaces the app's element (React remounting it) is seen too. On a page that
# counts the script runs it is sent (`count_script_runs`), a run that ended after the arming counts as well: a short
# rerun's states can be drawn in one commit, leaving the attribute at "notRunning" throughout.
WATCH_FOR_RERUN = """() => {
    const first = document.querySelector('[data-testid="stApp"]');
    if (window.__dashRerunWatch) window.__dashRerunWatch.disconnect();
    window.__dashRerunStarted = false;
    window.__dashRunsArmedAt = window.__dashRunsReceived;
    window.__dashRerunWatch = new MutationObserver(records => {
        const app = document.querySelector('[data-testid="stApp"]');
        if (app !== first || app.dataset.testScriptState !== 'notRunning'
            || records.some(r => r.type === 'attributes' && r.oldValue !== 'notRunning'))
            window.__dashRerunStarted = true;
    });
    window.__dashRerunWatch.observe(document.documentElement, {subtree: true, childList: true, attributes: true,
        attributeOldValue: true, attributeFilter: ['data-test-script-state']});
}"""
# How long an action may take to start its rerun before the wait falls back to "idle again" alone. On a page that
# counts its script runs this is only spent by an action that caused none; elsewhere also by a rerun that left no
# trace in the DOM (a quick one: in the browser tests under load, now and then, 20 s lost each time).
RERUN_START_S = 20


def _script_runs_counter() -> str:
    """The page script of `count_script_runs`: the ForwardMsg field and values are read from Streamlit's own
    protocol (streamlit/proto/ForwardMsg.proto), so a renumbering cannot silently stop the count."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    field = ForwardMsg.DESCRIPTOR.fields_by_name["script_finished"].number
    whole_run = [ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_WITH_COMPILE_ERROR]  # not a fragment's
    return """(() => {
    const Native = window.WebSocket;
    if (!Native || window.__dashRunsReceived !== undefined) return;
    window.__dashRunsReceived = 0;
    const FIELD = %d, WHOLE_RUN = %s;
    // the script_finished value of a ForwardMsg (its top-level protobuf fields read in turn), or -1
    const finished = bytes => {
        let i = 0;
        const varint = () => {
            let value = 0, scale = 1, byte;
            do {
                byte = bytes[i++];
                value += (byte & 0x7f) * scale;
                scale *= 128;
            } while (byte & 0x80 && i < bytes.length);
            return value;
        };
        while (i < bytes.length) {
            const tag = varint(), field = Math.floor(tag / 8), wire = tag %% 8;
            if (wire === 0) { const value = varint(); if (field === FIELD) return value; }
            else if (wire === 2) { const length = varint(); i += length; }  // (i += varint() adds to the old i)
            else if (wire === 1) i += 8;
            else if (wire === 5) i += 4;
            else return -1;
        }
        return -1;
    };
    window.WebSocket = class extends Native {
        constructor(...args) {
            super(...args);
            this.addEventListener("message", event => {
                if (!(event.data instanceof ArrayBuffer) || !WHOLE_RUN.includes(finished(new Uint8Array(event.data))))
                    return;
                const run = ++window.__dashRunsReceived;
                // noted once the app has drawn it (its handler, React's commit and a frame come first), and only
                // for a run that ended after the watch was armed (WATCH_FOR_RERUN)
                setTimeout(() => requestAnimationFrame(() => setTimeout(() => {
                    if (run > window.__dashRunsArmedAt) window.__dashRerunStarted = true;
                })));
            });
        }
    };
})();""" % (field, list(whole_run))


def count_script_runs(page) -> None:
    """Before a page's first navigation: it counts the app's finished script runs from the websocket's messages,
    which `rerun_after` then waits on (the DOM alone misses a rerun drawn in one commit)."""
    page.add_init_script(_script_runs_counter())


def rerun_after(page, action: Callable[[], object], timeout_s: float) -> None:
    """Do `action` (a click, a key press, an upload that changes a widget) once the page is idle, and wait until
    the rerun it causes has finished. The action should cause one: a click on what is already chosen does not."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page.wait_for_function(RERUN_DONE, timeout=timeout_s * 1000, polling=50)
    page.evaluate(WATCH_FOR_RERUN)
    action()
    try:
        page.wait_for_function("window.__dashRerunStarted", timeout=min(timeout_s, RERUN_START_S) * 1000, polling=50)
    except PlaywrightTimeout:
        pass  # no trace of a rerun: "idle, nothing stale" below is then what there is to wait for
    page.wait_for_function(RERUN_DONE, timeout=timeout_s * 1000, polling=50)


# Whether Plotly has picked a point under (x, y): it does on hover, and its click selects the point it picked.
PICKED_UNDER = """([x, y]) => {
    const plot = document.elementFromPoint(x, y)?.closest('.js-plotly-plot');
    return Boolean(plot && plot._hoverdata && plot._hoverdata.length);
}"""


def click_chart_point(page, x: float, y: float, timeout_s: float) -> None:
    """A user's click on the chart point drawn at (x, y) (page coordinates): hover until Plotly has picked it,
    click, and wait until the rerun the selection causes has finished."""
    page.mouse.move(x, y)
    page.wait_for_function(PICKED_UNDER, arg=[x, y], timeout=timeout_s * 1000, polling=50)
    rerun_after(page, lambda: page.mouse.click(x, y), timeout_s)


def wait_until_script_idle(page, timeout_s: float) -> None:
    """For timing a freshly opened tab, with no fixed sleep: its title (h1) exists only once its script has run,
    so "title present and script not running" holds only when the first run has finished."""
    page.wait_for_function("document.querySelector('h1') && document.querySelector("
                           "'[data-testid=\"stApp\"][data-test-script-state=\"notRunning\"]')",
                           timeout=timeout_s * 1000, polling=50)


def wait_until_rendered(page, timeout_s: float) -> None:
    """The first script run finished and every chart drawn."""
    wait_until_script_idle(page, timeout_s)
    wait_for_charts(page, timeout_s)


def wait_for_charts(page, timeout_s: float) -> None:
    """Plotly draws after the script has finished: wait until every chart on screen has its SVG. A chart or
    table whose code is still loading (Streamlit's lazy chunks; Plotly's is 4.7 MB) is a skeleton with no chart
    element yet, so "every chart has its SVG" would hold too early: no skeleton may be left either."""
    page.wait_for_function("!document.querySelector('[data-testid=\"stSkeleton\"]') && "
                           "Array.from(document.querySelectorAll('.js-plotly-plot'))"
                           ".every(plot => plot.querySelector('.main-svg'))", timeout=timeout_s * 1000, polling=50)
