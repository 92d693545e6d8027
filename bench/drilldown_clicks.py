"""Every drill-down of every page, clicked in a real browser on a fresh install (issue 54 §1): the time from the
click to the drill-down drawn, for the first, a middle and the last object of its chart, first click then again.

What `make run` does: a new empty store, `python -m backend models prepare` (which imports the reference
artifacts), the server on the embedded models; headless Debian Chromium (never a downloaded browser) drives it.
For each row of bench/drilldown_targets.py the page is opened (its tab, its setup step), the map drawn, then its
objects clicked A, B, C, then A, B, C again (consecutive clicks differ, so each is a new selection and a rerun).
A click is a user's: the mouse hovers the point's pixel (from the drawn chart's own axes) until Plotly's hover picks
a point naming that object (it, or another trace's drawing of it: Disagreement's curves share positions), then
clicks; a pixel whose hover picks another object is a failed row (a user could not click that object there).
Timed from the click to:
- idle_s: the script has finished its rerun and the texts only that object's drill-down writes are on screen;
- drawn_s: ... and every chart on the page has its SVG (what the table reports).
served: "computed" when a result on the page says "computed in" after the click (every rerun re-asks each verb,
and the map itself is a store hit by then), else "stored".

The 300 s waits of an earlier run were the bench's mouse, not the app: a click within Plotly's doubleClickDelay
(500 ms) of the chart's last mousedown is a double click, which Streamlit reads as "clear the selection" (the new
point is selected, then cleared, and the rerun sees no pick). The bench waits that delay out before every click
(untimed: a user's next click comes later than that anyway). A click the app still did not receive (no rerun
started and the page text unchanged UNDELIVERED_S after it, or the rerun ended with the object not selected) is
re-hovered and clicked again, at most CLICK_TRIES times, and timed from the click that registered (`lost_clicks` on
the row counts the others, `lost` says why each was lost).
A click whose drill-down is not drawn within CLICK_CAP_S is a miss (a row with its reason), as is one that fails
otherwise (an exception on the page); nothing waits longer, so every target is reached in one run (an overall
deadline is optional). Records the load average at start and end (of the run and of each target) and the server's
torch threads. Writes bench/results/drilldown_clicks.json (`--view computed`: drilldown_clicks_computed.json);
`--merge` replaces only the rerun targets' rows in that file, each row keeping its own load.

    .venv/bin/python bench/drilldown_clicks.py [--only PAGE ...] [--view first|computed|all] [--merge]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.server import (CHROMIUM, CHROMIUM_FLAGS, RERUN_DONE, WATCH_FOR_RERUN, rerun_after,  # noqa: E402
                        running_app, wait_for_charts, wait_until_rendered)
from bench.drilldown_targets import TARGETS, Target, in_bench_order  # noqa: E402

RESULTS = ROOT / "bench" / "results"
OUT = {"first": RESULTS / "drilldown_clicks.json", "all": RESULTS / "drilldown_clicks.json",
       "computed": RESULTS / "drilldown_clicks_computed.json"}
TARGET_S = 2.0  # issue 54: a first-view click, to script idle
COMPUTED_TARGET_S = 5.0  # ... a computed view's, where its drill-down data are too large to store
CLICK_TIMEOUT_S = 300.0  # a page or a setup step (a computed view's map) to be shown
CLICK_CAP_S = 60.0  # a click's drill-down not drawn by then is a miss
UNDELIVERED_S = 5.0  # no rerun started and the page's text unchanged this long after a click: it was not received
CLICK_TRIES = 3
HOVER_S = 10.0  # the mouse on a point's pixel until Plotly's hover picks that point
VIEWPORT = {"width": 1400, "height": 1600}

# Every clickable point of kind `kind` in the chart with Streamlit key `key`: its trace, index and customdata (a
# bar of height 0, e.g. a sentence too short to count, has no area a user could click).
POINTS = """([key, kind]) => {
  const gd = document.querySelector(`.st-key-${key} .js-plotly-plot`);
  if (!gd || !gd._fullData) return null;
  const out = [];
  gd._fullData.forEach((d, t) => {
    if (d.visible !== true || !d.customdata) return;
    for (let i = 0; i < d.customdata.length; i++) {
      const cd = d.customdata[i];
      const flat = d.type === 'bar' && !(gd.calcdata[t][i] || {}).s;  // a bar of height 0: nothing to click on
      if (Array.isArray(cd) && cd[0] === kind && !flat) out.push({trace: t, index: i, customdata: cd});
    }
  });
  return out;
}"""
# Page coordinates of a point (a marker's centre, a bar's middle), from the drawn chart's axes.
PIXEL = """([key, trace, index]) => {
  const gd = document.querySelector(`.st-key-${key} .js-plotly-plot`);
  const d = gd._fullData[trace], full = gd._fullLayout;
  const xa = full[d.xaxis.replace('x', 'xaxis')], ya = full[d.yaxis.replace('y', 'yaxis')];
  const p = gd.calcdata[trace].find(c => c.i === index) || gd.calcdata[trace][index];
  const box = gd.getBoundingClientRect();
  let x, y;
  if (d.type === 'bar') {
    const mid = p.b + p.s / 2;
    [x, y] = d.orientation === 'h' ? [xa.c2p(mid), ya.c2p(p.p)] : [xa.c2p(p.p), ya.c2p(mid)];
  } else { [x, y] = [xa.c2p(p.x), ya.c2p(p.y)]; }
  return [box.left + xa._offset + x, box.top + ya._offset + y];
}"""
# Whether a point is selected now: a click on it would deselect it (a chart of several subplots keeps one selected
# point in each, so a point clicked before on another subplot still is).
SELECTED = """([key, trace, index]) => {
  const d = document.querySelector(`.st-key-${key} .js-plotly-plot`)._fullData[trace];
  return Array.isArray(d.selectedpoints) && d.selectedpoints.includes(index);
}"""
# Whether a point naming `object` (customdata's kind and fields) is selected on any of the chart's traces (several
# traces may draw one object, e.g. Disagreement's curves at one position).
OBJECT_SELECTED = """([key, object]) => {
  const gd = document.querySelector(`.st-key-${key} .js-plotly-plot`);
  const name = JSON.stringify(object);
  return Boolean(gd && gd._fullData.some(d => Array.isArray(d.selectedpoints) && d.selectedpoints.some(
    i => Array.isArray(d.customdata?.[i]) && JSON.stringify(d.customdata[i].slice(0, object.length)) === name)));
}"""
# What Plotly's hover picks under (x, y), as [trace, index] pairs: its click selects that point (a hover that still
# names the point the mouse was on before would select that one).
HOVERED = """([x, y]) => {
  const plot = document.elementFromPoint(x, y)?.closest('.js-plotly-plot');
  return (plot && plot._hoverdata || []).map(p => [p.curveNumber, p.pointNumber, p.customdata ?? null]);
}"""
# Whether a click now would be a single click: Plotly counts a mousedown within doubleClickDelay of the chart's
# last single one as a double click, and Streamlit clears the chart's selection on a double click.
SINGLE_CLICK = """([key]) => {
  const gd = document.querySelector(`.st-key-${key} .js-plotly-plot`);
  const delay = (gd._context && gd._context.doubleClickDelay) || 500;
  return !gd._mouseDownTime || Date.now() - gd._mouseDownTime > delay + 50;
}"""
# Armed just before the click: the page's text then (a rerun that reads from the store can start and end between
# two of React's commits, leaving no trace for the rerun watch; the page's text changing is the trace then).
ARM = "() => { window.__ddBefore = document.body.innerText; window.__ddClickAt = performance.now(); }"
# What became of a click, polled: "opened" once the rerun it caused has ended (seen starting, or the page's text
# changed) and the clicked object's texts are shown (in the page's text or a chart's title); "lost: ..." when the
# rerun ended with the clicked point no longer selected (its selection was cleared: nothing to open), or when no
# rerun started and the text is unchanged `undelivered` ms after the click; else false (still waiting).
OUTCOME = """([texts, key, object, undelivered]) => {
  const done = %s;
  const body = document.body.innerText;
  const changed = window.__dashRerunStarted || body !== window.__ddBefore;
  if (!changed) return performance.now() - window.__ddClickAt > undelivered ? 'lost: no rerun started' : false;
  if (!done) return false;
  const titles = [...document.querySelectorAll('.js-plotly-plot .gtitle')].map(e => e.textContent).join('\\n');
  if (texts.every(t => t.split(' || ').some(a => body.includes(a) || titles.includes(a)))) return 'opened';
  if (key === null) return false;
  return (%s)([key, object]) ? false : 'lost: the rerun ended with the object not selected';
}""" % (RERUN_DONE, OBJECT_SELECTED)
# The results' provenance lines under what the page shows (app/ui/guarded.py show_provenance).
PROVENANCE = """() => [...document.querySelectorAll('[data-testid="stCaptionContainer"]')].map(e => e.innerText)
  .filter(t => /^(cached|computed in [0-9.]+ s)/.test(t))"""


class Deadline:
    """An optional overall limit (None: none); `left(cap)` is what one wait may take."""

    def __init__(self, seconds: float | None):
        self.end = None if seconds is None else time.monotonic() + seconds

    def left(self, cap: float = CLICK_TIMEOUT_S) -> float:
        if self.end is None:
            return cap
        left = self.end - time.monotonic()
        if left <= 0:
            raise TimeoutError("the bench's overall deadline passed")
        return min(cap, left)


def _open_tab(page, name: str, deadline: Deadline) -> None:
    tab = page.get_by_role("tab", name=name)
    tab.wait_for(timeout=deadline.left() * 1000)
    if tab.get_attribute("aria-selected") != "true":
        rerun_after(page, tab.click, deadline.left())


def _setup_kgw(page, deadline: Deadline) -> None:
    """Watermark: details of KGW, a token-level method (its text's tokens open)."""
    box = page.locator('[data-testid="stSelectbox"]').filter(has_text="Details of")
    box.click()
    option = page.get_by_role("option", name=re.compile(r"^KGW \(token level"))
    rerun_after(page, option.click, deadline.left())


def _setup_new_prompt(page, deadline: Deadline) -> None:
    """Inspect: a prompt no shipped artifact has (its maps are computed on this store)."""
    area = page.get_by_role("textbox", name="Prompt")
    area.fill(f"The bench typed this prompt at {time.time():.0f}, so nothing stored has it, and the")
    rerun_after(page, lambda: area.press("Control+Enter"), deadline.left(600))


def _setup_fewest_tokens(page, deadline: Deadline) -> None:
    """Disagreement: the fewest new tokens (a rollout no shipped artifact has)."""
    slider = page.locator('[data-testid="stSlider"]').filter(has_text="Max new tokens").get_by_role("slider")
    slider.focus()
    rerun_after(page, lambda: page.keyboard.press("Home"), deadline.left(600))


def _setup_new_text(page, deadline: Deadline) -> None:
    """Watermark: the shown text with a sentence added (judged on this store, not the shipped example's)."""
    area = page.get_by_role("textbox", name="Paste text to check")
    area.fill(area.input_value() + " The bench added this sentence so that nothing stored has judged the text.")
    rerun_after(page, lambda: area.press("Control+Enter"), deadline.left(600))


SETUPS = {"kgw": _setup_kgw, "new prompt": _setup_new_prompt, "fewest new tokens": _setup_fewest_tokens,
          "new text": _setup_new_text}


def _choose(points: list) -> list:
    """First, middle and last of the chart's objects (fewer when it has fewer)."""
    picks = [points[0], points[len(points) // 2], points[-1]] if points else []
    return list({json.dumps(p["customdata"][:4]): p for p in picks}.values())


def _chart_points(page, target: Target, deadline: Deadline) -> list:
    if target.text:
        count = page.locator(target.chart).count()
        return [{"index": i, "customdata": [target.kind, i]} for i in range(count)]
    page.locator(f".st-key-{target.chart} .js-plotly-plot .main-svg").first.wait_for(timeout=deadline.left() * 1000)
    wait_for_charts(page, deadline.left())
    return page.evaluate(POINTS, [target.chart, target.kind]) or []


class LostClick(Exception):
    """A click the app did not receive (see the module docstring): the bench clicks again."""


def _hover(page, key: str, point: dict, nfields: int, deadline: Deadline) -> tuple[float, float, list]:
    """The mouse on the point's pixel until Plotly's hover picks a point naming the same object (this point, or
    another trace's drawing of that object); the page coordinates and the [trace, index] it picked."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    x, y = page.evaluate(PIXEL, [key, point["trace"], point["index"]])
    page.mouse.move(x, y)
    name = point["customdata"][:1 + nfields]
    picks = (f"([x, y, name]) => ({HOVERED})([x, y]).find(p => Array.isArray(p[2]) && "
             "JSON.stringify(p[2].slice(0, name.length)) === JSON.stringify(name))")
    try:
        picked = page.wait_for_function(picks, arg=[x, y, name], timeout=deadline.left(HOVER_S) * 1000,
                                        polling=50).json_value()
    except PlaywrightTimeout:
        hovered = [p[2] for p in page.evaluate(HOVERED, [x, y])]
        raise LostClick(f"hover at its pixel picks {hovered or 'nothing'}, not {name}") from None
    return x, y, picked[:2]


def _chart_click(page, target: Target, point: dict, row: dict, deadline: Deadline) -> float:
    """Hover the point and click it as a single click (deselecting it first if a subplot keeps it selected); the
    click's time."""
    key, nfields = target.chart, len(target.object_of(point["customdata"]))
    plot = page.locator(f".st-key-{key} .js-plotly-plot")
    plot.evaluate("e => e.scrollIntoView({block: 'center'})")
    single = lambda: page.wait_for_function(SINGLE_CLICK, arg=[key], timeout=deadline.left(30) * 1000, polling=50)
    x, y, picked = _hover(page, key, point, nfields, deadline)
    if page.evaluate(SELECTED, [key, *picked]):
        single()
        rerun_after(page, lambda: page.mouse.click(x, y), deadline.left())  # deselect it first (untimed)
        row["deselected_first"] = True
        x, y, picked = _hover(page, key, point, nfields, deadline)
    single()
    page.evaluate(WATCH_FOR_RERUN)
    page.evaluate(ARM)
    start = time.perf_counter()
    page.mouse.click(x, y)
    return start


def _text_click(page, target: Target, point: dict, deadline: Deadline) -> float:
    piece = page.locator(target.chart).nth(point["index"])
    piece.scroll_into_view_if_needed(timeout=deadline.left() * 1000)
    page.evaluate(WATCH_FOR_RERUN)
    page.evaluate(ARM)
    start = time.perf_counter()
    piece.click(timeout=deadline.left() * 1000)
    return start


def _click(page, target: Target, point: dict, deadline: Deadline) -> dict:
    """Click one object until a click registers (at most CLICK_TRIES); its timing row (or why it missed)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    cd = point["customdata"]
    texts = list(target.says(cd))
    row: dict = {"object": target.object_of(cd) if not target.text else f"piece {point['index']}"}
    watched = [None, None] if target.text else [target.chart, cd[:1 + len(target.object_of(cd))]]
    lost: list[str] = []
    try:
        for _ in range(CLICK_TRIES):
            page.wait_for_function(RERUN_DONE, timeout=deadline.left() * 1000, polling=50)
            try:
                start = (_text_click(page, target, point, deadline) if target.text
                         else _chart_click(page, target, point, row, deadline))
            except LostClick as exc:
                lost.append(str(exc))
                continue
            outcome = page.wait_for_function(OUTCOME, arg=[texts, *watched, UNDELIVERED_S * 1000],
                                             timeout=deadline.left(CLICK_CAP_S) * 1000, polling=50).json_value()
            if outcome == "opened":
                break
            lost.append(outcome)
        else:
            reasons = "; ".join(f"{why} (x{lost.count(why)})" if lost.count(why) > 1 else why
                                for why in dict.fromkeys(lost))
            row["failed"] = f"no click registered in {CLICK_TRIES} tries: {reasons}"
            return row
        row["idle_s"] = round(time.perf_counter() - start, 2)
        wait_for_charts(page, deadline.left(CLICK_CAP_S))
        row["drawn_s"] = round(time.perf_counter() - start, 2)
    except (PlaywrightTimeout, TimeoutError) as exc:
        row["failed"] = (f"miss: not drawn within {CLICK_CAP_S:g} s of the click, waited for {texts} "
                         f"({str(exc).splitlines()[0][:160]})")
        return row
    finally:
        if lost:
            row["lost_clicks"], row["lost"] = len(lost), lost
    errors = page.locator('[data-testid="stException"]')
    if errors.count():
        row["failed"] = "exception on the page: " + errors.first.inner_text()[:300]
        return row
    provenance = page.evaluate(PROVENANCE)
    row["served"] = "computed" if any(p.startswith("computed in") for p in provenance) else "stored"
    row["provenance"] = provenance
    return row


def measure(page, url: str, target: Target, deadline: Deadline) -> dict:
    """Open the target's page and view, then click its objects: first clicks, then again."""
    from playwright.sync_api import Error as PlaywrightError

    result: dict = {"label": target.label, "page": target.page, "tab": target.tab, "drilldown": target.drilldown,
                    "chart": target.chart, "kind": target.kind, "view": target.view, "setup": target.setup,
                    "load_average": _load(), "clicks": []}
    try:
        page.goto(f"{url}/{target.page}")
        wait_until_rendered(page, deadline.left(600))
        if target.tab:
            _open_tab(page, target.tab, deadline)
        if target.setup:
            start = time.perf_counter()
            SETUPS[target.setup](page, deadline)
            result["setup_s"] = round(time.perf_counter() - start, 1)
        points = _chart_points(page, target, deadline)
    except (PlaywrightError, TimeoutError) as exc:
        result["failed"] = f"map not shown: {str(exc).splitlines()[0][:200]}"
        return result
    result["objects"] = len(points)
    chosen = _choose(points)
    if not chosen:
        result["failed"] = f"no clickable {target.kind} on {target.chart}"
        return result
    if target.view == "computed":
        chosen = chosen[:2]  # the first click after the map is shown (and a second object)
    for attempt in ("first", "again"):
        if attempt == "again" and len(chosen) < 2:
            break  # a lone object's second click would deselect it: nothing new to time
        for point in chosen:
            try:
                row = _click(page, target, point, deadline)
            except TimeoutError as exc:
                row = {"object": target.object_of(point["customdata"]), "failed": str(exc)}
            except PlaywrightError as exc:
                row = {"object": target.object_of(point["customdata"]), "failed": str(exc).splitlines()[0][:200]}
            row["click"] = attempt
            result["clicks"].append(row)
            print(json.dumps({"target": target.label, **row}), file=sys.stderr)
    result["load_average_end"] = _load()
    return result


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def server_threads(env: dict) -> int:
    """The torch threads the server's process uses (it starts as this one does, with the same environment)."""
    code = "import torch; print(torch.get_num_threads())"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return int(out.stdout.strip())


def main(pages: list[str], view: str, deadline_s: float | None, out: Path, merge: bool = False) -> dict:
    store = Path(tempfile.mkdtemp(prefix="drilldown-clicks-")) / "store.duckdb"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "DASH_STORE": str(store)}
    targets = [t for t in in_bench_order(TARGETS) if (not pages or t.page in pages) and view in ("all", t.view)]
    command = ("python bench/drilldown_clicks.py" + "".join(f" --only {p}" for p in pages) + f" --view {view}"
               + (" --merge" if merge else ""))
    result: dict = {"command": command, "store": "fresh (models prepare: reference artifacts imported)",
                    "cpus": os.cpu_count(), "load_average_start": _load(),
                    "torch_threads": server_threads(env), "viewport": VIEWPORT, "target_s": TARGET_S,
                    "computed_target_s": COMPUTED_TARGET_S, "click_cap_s": CLICK_CAP_S,
                    "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "backend", "models", "prepare"], cwd=ROOT, env=env, check=True,
                   stdout=subprocess.DEVNULL)
    result["prepare_s"] = round(time.perf_counter() - start, 1)
    deadline = Deadline(deadline_s)
    rows = []
    log = open(Path(tempfile.gettempdir()) / "drilldown-clicks-server.log", "w")
    with log, running_app(env=env, log=log, start_timeout_s=180) as (url, _):
        from playwright.sync_api import sync_playwright

        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS, headless=True)
            result["chromium"] = browser.version
            page = browser.new_page(viewport=VIEWPORT)
            for target in targets:
                try:
                    deadline.left()
                except TimeoutError:
                    rows.append({"label": target.label, "page": target.page, "drilldown": target.drilldown,
                                 "view": target.view, "clicks": [], "failed": "not reached: overall deadline"})
                    continue
                rows.append(measure(page, url, target, deadline))
                _write(out, merged(out, result, rows) if merge else {**result, "targets": rows, "complete": False})
            browser.close()
    result["load_average_end"] = _load()
    final = merged(out, result, rows) if merge else {**result, "targets": rows, "complete": True}
    _write(out, final)
    return final


def merged(out: Path, run: dict, rows: list[dict]) -> dict:
    """The result in `out` with `rows` in place of its rows of the same targets (labels), and the run that measured
    them listed under "merged" (its command, start and loads); every other row and the header stay as they were."""
    base = json.loads(out.read_text())
    mine = {r["label"] for r in rows}
    targets = [next((r for r in rows if r["label"] == t["label"]), t) if t["label"] in mine else t
               for t in base["targets"]]
    targets += [r for r in rows if r["label"] not in {t["label"] for t in base["targets"]}]
    runs = [m for m in base.get("merged", []) if m["command"] != run["command"] or m["started"] != run["started"]]
    runs.append({"command": run["command"], "started": run["started"], "targets": sorted(mine),
                 "load_average_start": run["load_average_start"], "load_average_end": _load()})
    return {**base, "targets": targets, "merged": runs}


def _write(out: Path, result: dict) -> None:
    out.write_text(json.dumps({"load_average_end": _load(), **result}, indent=1) + "\n")


def _interrupt(*_signal) -> None:
    raise KeyboardInterrupt  # `timeout`'s SIGTERM: close the browser and stop the server on the way out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", default=[], help="a page's url path (repeatable)")
    parser.add_argument("--view", choices=("first", "computed", "all"), default="all")
    parser.add_argument("--deadline-s", type=float, default=None,
                        help="an overall limit (none by default: each click is capped instead)")
    parser.add_argument("--merge", action="store_true",
                        help="replace only these targets' rows in the existing result")
    parser.add_argument("--out", default=None, help="default: bench/results/drilldown_clicks[_computed].json")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, _interrupt)
    main(args.only, args.view, args.deadline_s, Path(args.out) if args.out else OUT[args.view], args.merge)
