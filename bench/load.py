"""A lab on one server: several headless-Chromium sessions use one app server at once, for a bounded time.

Each browsing session walks the pages as a user does, reaching each by its sidebar link (one Streamlit session
per browser tab): Home, the feature pages' first views (stored, so they should open fast), the Watermark page
(where it pastes a text carrying its own random token), Runs. Meanwhile one session runs long computations on
the default model (Decoding, its own prompt, "Run selected strategies") and, with --other-model, another on a
second model, and `python -m backend decode run` processes write to the same store. Reported:

- errors any session saw: exception boxes, "Something went wrong" messages, page errors, websockets that
  closed under a page, a page whose script did not finish within --step-timeout (target 0);
- isolation: no session's page ever contains another session's token (pasted text, typed prompt) (target 0);
- the latency of stored views to script idle, p50/p95, in the browsing sessions while the long work runs
  (target p95 <= 3 s);
- the server's RSS over time, and its growth between minute 2 and the end (target <= 5 %);
- the CLI processes: all finished (exit 0), and the store holds both the app's and the CLI's run rows;
- the CPU seconds of the server, the browsers and the CLI processes: on this one machine the sessions' Chromium
  competes with the server for the same cores, where a lab's browsers run on the users' own machines.

A browsing session reads each page for --think seconds on average (uniformly 0.5-1.5 times it) before its next
click, as a person does; --think 0 makes every session click on at once, a stress test.

    .venv/bin/python -m bench load                          # 8 sessions x 10 min, JSON in bench/results/load.json
    .venv/bin/python -m bench load --think 0 --out /tmp/load-stress.json   # no reading pauses: a stress test
    .venv/bin/python -m bench load --sessions 2 --seconds 60 --out /tmp/load.json   # the short version
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import secrets
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.server import CHROMIUM, CHROMIUM_FLAGS, CLICKED_PAGE_RAN, RERUN_DONE, running_app  # noqa: E402
from app.views import FEATURES, HOME, TOOLS  # noqa: E402

OUT = ROOT / "bench" / "results" / "load.json"
VIEWPORT = {"width": 1400, "height": 1200}
SCRIPT_IDLE = ("document.querySelector('h1') && document.querySelector("
               "'[data-testid=\"stApp\"][data-test-script-state=\"notRunning\"]')")
BUG_TEXT = "Something went wrong"


@dataclass
class SessionLog:
    name: str
    role: str  # "browse", "long", "long-other"
    token: str
    steps: int = 0
    errors: list[str] = field(default_factory=list)
    latencies: list[tuple[str, float]] = field(default_factory=list)  # (view, seconds to script idle)
    warmup: list[tuple[str, float]] = field(default_factory=list)  # the same, on the session's first walk
    warm_at: float | None = None  # time.monotonic() when its first walk ended
    pages_checked: int = 0
    foreign_tokens_seen: list[str] = field(default_factory=list)
    long_runs: int = 0


@dataclass
class Plan:
    sessions: int
    seconds: float
    step_timeout_s: float
    other_model: str | None
    cli_every_s: float
    model: str
    think_s: float = 0.0  # a browsing session's mean pause on a page before its next step (0: a bot, no pause)
    long_pause_s: float = 0.0  # a long session's pause between runs (0: back to back, the full bench's load)


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


class Session:
    """One browser tab (one Streamlit session) walking the app."""

    def __init__(self, context, url: str, log: SessionLog, all_tokens: list[str], plan: Plan):
        self.context, self.url, self.log, self.plan = context, url, log, plan
        self.others = [t for t in all_tokens if t != log.token]
        self.page = None
        self.closing = False  # set when the bench closes the browser: a socket closing then is no error

    async def start(self) -> None:
        self.page = await self.context.new_page()
        self.page.set_default_timeout(self.plan.step_timeout_s * 1000)
        self.page.on("pageerror", lambda err: self.log.errors.append(f"page error: {err}"))
        self.page.on("websocket", self._watch_socket)
        await self.page.goto(self.url)
        await self.page.wait_for_function(SCRIPT_IDLE, timeout=self.plan.step_timeout_s * 1000, polling=100)
        await self.check("Home")

    def _watch_socket(self, ws) -> None:
        opened = time.monotonic()

        def closed(_):
            if not self.closing:
                self.log.errors.append(f"websocket closed after {time.monotonic() - opened:.0f} s")

        ws.on("close", closed)

    async def check(self, where: str) -> None:
        """Errors on screen and other sessions' tokens in the page."""
        page = self.page
        if await page.locator('[data-testid="stException"]').count():
            self.log.errors.append(f"{where}: exception box")
        for alert in await page.locator('[data-testid="stAlert"]').all_inner_texts():
            if BUG_TEXT in alert:
                self.log.errors.append(f"{where}: {alert.strip()[:120]}")
        html = await page.content()
        self.log.pages_checked += 1
        self.log.foreign_tokens_seen += [f"{where}: {t}" for t in self.others if t in html]

    async def visit(self, view) -> float:
        """Click the view's sidebar link; seconds until its script is idle."""
        page = self.page
        old = await page.evaluate("document.querySelector('h1') ? document.querySelector('h1').textContent : ''")
        link = page.locator(f'[data-testid="stSidebarNav"] a[href$="/{"" if view is HOME else view.url_path}"]')
        start = time.perf_counter()
        await link.first.click()
        if view.title == old:  # same page: a rerun, not a new title
            await asyncio.sleep(0.3)
            await page.wait_for_function(RERUN_DONE, timeout=self.plan.step_timeout_s * 1000, polling=50)
        else:
            await page.wait_for_function(CLICKED_PAGE_RAN, arg=old, timeout=self.plan.step_timeout_s * 1000,
                                         polling=50)
        seconds = time.perf_counter() - start
        await self.check(view.title)
        return seconds

    async def rerun_done(self, timeout_s: float | None = None) -> None:
        await asyncio.sleep(0.5)  # the rerun starts a moment after the input
        await self.page.wait_for_function(RERUN_DONE, timeout=(timeout_s or self.plan.step_timeout_s) * 1000,
                                          polling=100)

    async def paste_watermark_text(self) -> None:
        box = self.page.get_by_label("Paste text to check")
        await box.fill(f"A note written by session {self.log.token}. It rained all day and the streets were "
                       f"quiet; nobody else should ever read {self.log.token}.")
        await box.press("Control+Enter")
        await self.rerun_done()
        await self.check("Watermark (pasted)")
        if self.log.token not in await self.page.content():
            self.log.errors.append("Watermark: the session's own pasted text is not on its page")

    async def long_decoding_run(self, round_: int, deadline: float) -> None:
        """An uncached computation: the Decoding page on a fresh prompt of this session."""
        page = self.page
        await page.get_by_text("Own prompt", exact=True).click()
        await self.rerun_done()
        box = page.get_by_label("Prompt", exact=True).first
        await box.fill(f"Session {self.log.token}, round {round_}: write one sentence about the sea.")
        await box.press("Control+Enter")
        await self.rerun_done()
        await page.get_by_role("button", name="Run selected strategies").click()
        try:  # long work may outlast the bench: it then ends with the session (a stopped run), not an error
            await self.rerun_done(timeout_s=max(deadline - time.monotonic(), 1.0) + 5.0)
        except Exception:  # noqa: BLE001
            if time.monotonic() < deadline:
                raise
            return
        await self.check("Decoding (long run)")
        self.log.long_runs += 1

    async def pick_model(self, model_id: str) -> None:
        page = self.page
        await page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').first.click()
        await page.get_by_role("option").filter(has_text=model_id).first.click()
        await self.rerun_done()
        await self.check(f"model {model_id}")


async def _browse(session: Session, deadline: float) -> None:
    views = [*FEATURES, *TOOLS, HOME]  # from Home: each click reaches another page
    watermark = next((v for v in FEATURES if v.url_path == "watermark"), None)
    pauses = random.Random(session.log.name)  # each session its own, reproducible, reading times
    walk = 0
    while time.monotonic() < deadline:
        walk += 1
        if walk == 2:
            session.log.warm_at = time.monotonic()
        for view in views:
            if time.monotonic() >= deadline:
                return
            try:
                seconds = await session.visit(view)
                if walk > 1:  # the first walk warms up (a page that opens on its own model loads it)
                    session.log.latencies.append((view.title, seconds))
                else:
                    session.log.warmup.append((view.title, seconds))
                if view is watermark:
                    await session.paste_watermark_text()
                session.log.steps += 1
                if session.plan.think_s > 0:  # a user reads the page before the next click
                    await asyncio.sleep(min(pauses.uniform(0.5, 1.5) * session.plan.think_s,
                                            max(deadline - time.monotonic(), 0.0)))
            except Exception as err:  # noqa: BLE001 - a step that failed is an error the bench reports
                session.log.errors.append(f"{view.title}: {type(err).__name__}: {str(err).splitlines()[0][:160]}")


async def _long(session: Session, deadline: float, model_id: str | None) -> None:
    decoding = next(v for v in FEATURES if v.url_path == "decoding")
    try:
        if model_id:
            await session.pick_model(model_id)
        await session.visit(decoding)
    except Exception as err:  # noqa: BLE001
        session.log.errors.append(f"long setup: {type(err).__name__}: {str(err).splitlines()[0][:160]}")
        return
    round_ = 0
    while time.monotonic() < deadline:
        round_ += 1
        try:
            await session.long_decoding_run(round_, deadline)
            session.log.steps += 1
            await asyncio.sleep(min(session.plan.long_pause_s, max(deadline - time.monotonic(), 0.0)))
        except Exception as err:  # noqa: BLE001
            session.log.errors.append(f"long run {round_}: {type(err).__name__}: {str(err).splitlines()[0][:160]}")
            await asyncio.sleep(5)


def _rss_sampler(pid: int, samples: list[tuple[float, float]], stop: threading.Event, start: float) -> None:
    import psutil

    proc = psutil.Process(pid)
    while not stop.wait(5.0):
        try:
            rss = proc.memory_info().rss + sum(c.memory_info().rss for c in proc.children(recursive=True))
        except psutil.Error:
            return
        samples.append((round(time.monotonic() - start, 1), round(rss / 2**20, 1)))  # (s since start, MB)


def _process_group(cmdline: list[str], server_pid: int, pid: int) -> str | None:
    text = " ".join(cmdline)
    if pid == server_pid:
        return "server"  # Streamlit and every computation it runs (in-process threads)
    if "chrom" in text:
        return "browsers"  # the sessions' Chromium: on a real lab server these run on the users' own machines
    if "-m backend" in text or "backend/__main__" in text:
        return "cli"
    return None


def _cpu_sampler(server_pid: int, totals: dict[str, float], stop: threading.Event) -> None:
    """CPU seconds used by the server, the browsers and the CLI processes while the bench runs: what the
    latencies compete for on this machine."""
    import psutil

    first: dict[int, float] = {}
    last: dict[int, tuple[str, float]] = {}
    start_pids = {p.pid for p in psutil.process_iter()}
    while True:
        for proc in psutil.process_iter(["cmdline", "cpu_times"]):
            try:
                group = _process_group(proc.info["cmdline"] or [], server_pid, proc.pid)
                times = proc.info["cpu_times"]
            except psutil.Error:
                continue
            if group is None or times is None:
                continue
            used = times.user + times.system
            if proc.pid in start_pids and proc.pid != server_pid:
                first.setdefault(proc.pid, used)
            last[proc.pid] = (group, used)
        totals.clear()
        for pid, (group, used) in last.items():
            totals[group] = round(totals.get(group, 0.0) + used - first.get(pid, 0.0), 1)
        if stop.wait(1.0):
            return


def _cli_runner(env: dict, plan: Plan, done: threading.Event, results: list[dict], token: str) -> None:
    n = 0
    while not done.is_set():
        n += 1
        started = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "backend", "decode", "run", "--model", plan.model,
                               "--strategy", "greedy", "--prompt", f"CLI {token} probe {n}: name a colour.",
                               "--max-new-tokens", "8", "--json"], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=max(60.0, plan.step_timeout_s))
        results.append({"rc": proc.returncode, "seconds": round(time.perf_counter() - started, 1),
                        "stderr": proc.stderr.strip().splitlines()[-1:] if proc.returncode else []})
        done.wait(plan.cli_every_s)


async def _drive(url: str, plan: Plan, logs: list[SessionLog]) -> float:
    """Open every session, then run them for `plan.seconds` (the opening, a cold start, is not counted);
    returns the seconds they ran."""
    from playwright.async_api import async_playwright

    tokens = [log.token for log in logs]
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS, headless=True)
        sessions = []
        for log in logs:
            context = await browser.new_context(viewport=VIEWPORT)
            sessions.append(Session(context, url, log, tokens, plan))
        for s in sessions:  # opened one after another: a lab's users do not all arrive in the same second
            try:
                await s.start()
            except Exception as err:  # noqa: BLE001
                s.log.errors.append(f"open: {type(err).__name__}: {str(err).splitlines()[0][:160]}")
        started = time.monotonic()
        deadline = started + plan.seconds
        tasks = []
        for s in sessions:
            if s.log.role == "browse":
                tasks.append(_browse(s, deadline))
            else:
                tasks.append(_long(s, deadline, plan.other_model if s.log.role == "long-other" else None))
        await asyncio.gather(*tasks)
        ran = time.monotonic() - started
        for s in sessions:
            s.closing = True
        await browser.close()
    return ran


def _in_own_thread(call):
    """Run `call` in a thread of its own: asyncio.run needs a thread without a running event loop, and a caller
    may have one (the browser tests' sync Playwright runs its loop in the main thread)."""
    outcome: dict = {}

    def target():
        try:
            outcome["value"] = call()
        except BaseException as err:  # noqa: BLE001 - re-raised in the caller's thread
            outcome["error"] = err

    thread = threading.Thread(target=target, name="load-bench-driver")
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _store_rows(store: Path, token: str) -> dict:
    import duckdb

    with duckdb.connect(str(store), read_only=True) as con:
        app_runs = con.execute("SELECT count(*) FROM runs WHERE session <> ''").fetchone()[0]
        cli_runs = con.execute("SELECT count(*) FROM runs WHERE session = '' AND params LIKE ?",
                               [f"%{token}%"]).fetchone()[0]
        stopped = con.execute("SELECT count(*) FROM runs WHERE status = 'stopped'").fetchone()[0]
    return {"app_runs": app_runs, "cli_runs": cli_runs, "stopped_runs": stopped}


def run(plan: Plan, store_dir: Path | None = None) -> dict:
    """Serve the app on a fresh store, drive the sessions and the CLI for `plan.seconds`, and report."""
    with tempfile.TemporaryDirectory() as tmp:
        store = (store_dir or Path(tmp)) / "store.duckdb"
        env = {**os.environ, "DASH_STORE": str(store), "HF_HUB_OFFLINE": "1"}
        long = (["long"] + (["long-other"] if plan.other_model else []))[:plan.sessions - 1]  # >= 1 browsing
        roles = long + ["browse"] * (plan.sessions - len(long))
        logs = [SessionLog(name=f"s{i}", role=role, token=f"tok{secrets.token_hex(6)}") for i, role in
                enumerate(roles)]
        cli_token = f"cli{secrets.token_hex(6)}"
        with open(Path(tmp) / "server.log", "w") as server_log, \
                running_app(log=server_log, env=env, start_timeout_s=180) as (url, proc):
            start = time.monotonic()
            rss: list[tuple[float, float]] = []
            stop = threading.Event()
            sampler = threading.Thread(target=_rss_sampler, args=(proc.pid, rss, stop, start), daemon=True)
            sampler.start()
            cpu: dict[str, float] = {}
            cpu_thread = threading.Thread(target=_cpu_sampler, args=(proc.pid, cpu, stop), daemon=True)
            cpu_thread.start()
            cli: list[dict] = []
            cli_done = threading.Event()
            cli_thread = threading.Thread(target=_cli_runner, args=(env, plan, cli_done, cli, cli_token),
                                          daemon=True)
            cli_thread.start()
            ran = _in_own_thread(lambda: asyncio.run(_drive(url, plan, logs)))
            cli_done.set()
            cli_thread.join(timeout=plan.step_timeout_s)
            stop.set()
            sampler.join(timeout=10)
            cpu_thread.join(timeout=10)
            elapsed = time.monotonic() - start
        rows = _store_rows(store, cli_token)
    warm = [log.warm_at - start for log in logs if log.warm_at is not None]
    return _report(plan, logs, rss, cli, rows, elapsed, ran, max(warm) if warm else None, cpu)


def _report(plan: Plan, logs: list[SessionLog], rss: list, cli: list[dict], rows: dict, elapsed: float,
            ran: float, warm_s: float | None, cpu: dict[str, float]) -> dict:
    browse = [lat for log in logs if log.role == "browse" for lat in log.latencies]
    seconds = [s for _, s in browse]
    per_view: dict[str, list[float]] = {}
    for view, s in browse:
        per_view.setdefault(view, []).append(s)
    # warm once every browsing session has walked every page once (each page's model loaded), and at least 2 min in
    warm_from = max(120.0, warm_s) if warm_s is not None else None
    after = [mb for t, mb in rss if warm_from is not None and t >= warm_from]
    growth = (after[-1] - after[0]) / after[0] if len(after) >= 2 else None
    errors = [f"{log.name} ({log.role}): {e}" for log in logs for e in log.errors]
    isolation = [f"{log.name}: {seen}" for log in logs for seen in log.foreign_tokens_seen]
    return {
        "bench": "load",
        "command": ".venv/bin/python -m bench load " + f"--sessions {plan.sessions} --seconds {plan.seconds:.0f}"
                   + (f" --other-model {plan.other_model}" if plan.other_model else "") + f" --think {plan.think_s:g}",
        "plan": asdict(plan),
        "machine": {"cpu_count": os.cpu_count(), "load_average_end": list(os.getloadavg())},
        "cpu_seconds": dict(sorted(cpu.items())),  # server (with its computations), browsers, CLI
        "elapsed_s": round(elapsed, 1),  # server start to stop
        "sessions_ran_s": round(ran, 1),  # after every session had opened
        "sessions": [{"name": log.name, "role": log.role, "steps": log.steps, "errors": len(log.errors),
                      "pages_checked": log.pages_checked, "long_runs": log.long_runs} for log in logs],
        "errors": errors,
        "isolation_violations": isolation,
        "warmup_walk_s": {log.name: log.warmup for log in logs if log.warmup},
        "stored_view_latency_s": {
            "n": len(seconds),
            "p50": round(statistics.median(seconds), 2) if seconds else None,
            "p95": round(_percentile(seconds, 0.95), 2) if seconds else None,
            "per_view_p95": {v: round(_percentile(s, 0.95), 2) for v, s in per_view.items()},
        },
        "rss_mb": rss,
        "rss_growth_after_warmup": None if growth is None else round(growth, 4),
        "warm_from_s": warm_from,
        "cli": {"runs": len(cli), "failures": [c for c in cli if c["rc"] != 0],
                "median_s": statistics.median([c["seconds"] for c in cli]) if cli else None},
        "store": rows,
        "targets": {"errors": 0, "isolation_violations": 0, "stored_view_p95_s": 3.0,
                    "rss_growth_after_warmup": 0.05},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench load", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--step-timeout", type=float, default=300.0, help="seconds a page may take to finish")
    parser.add_argument("--other-model", default=None, help="a second model for one long-running session")
    parser.add_argument("--model", default="smollm2-135m-instruct", help="the model the CLI processes use")
    parser.add_argument("--cli-every", type=float, default=30.0, help="seconds between CLI runs")
    parser.add_argument("--think", type=float, default=5.0,
                        help="mean seconds a browsing session reads a page before its next step (uniform, 0.5-1.5x); "
                             "0: sessions click on at once, a stress test rather than a lab")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    if args.sessions < 1 or args.seconds <= 0:
        print("error: --sessions must be >= 1 and --seconds > 0", file=sys.stderr)
        return 2
    plan = Plan(sessions=args.sessions, seconds=args.seconds, step_timeout_s=args.step_timeout,
                other_model=args.other_model, cli_every_s=args.cli_every, model=args.model,
                think_s=args.think)
    result = run(plan)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    summary = {k: result[k] for k in ("elapsed_s", "stored_view_latency_s", "rss_growth_after_warmup", "store")}
    print(json.dumps({**summary, "errors": len(result["errors"]),
                      "isolation_violations": len(result["isolation_violations"]),
                      "cli_failures": len(result["cli"]["failures"])}, indent=1))
    for line in result["errors"][:20]:
        print("error:", line, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
