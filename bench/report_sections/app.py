"""The app as a user meets it: memory, first open, hostile uploads."""
from __future__ import annotations

from bench.report import PY, Body, Ctx, Section, sec, table


def app_rss(ctx: Ctx) -> Body:
    r = ctx.load("app_rss.json")
    children = " and its children" if r.get("children") else ""
    lines = [f"The server's resident memory (RSS, the Streamlit process{children}) while one headless Chromium tab "
             f"opens Home and then every page by its sidebar link, in the order below, each until its script is idle "
             f"(store: {r['store']}; default model `{r['default_model']}`; a page that opens on its own model loads "
             f"it). Code at `{r.get('code', 'unknown')}`, {r['cpus']} CPU cores, load average "
             f"{r['load_average_start']} at the start, Chromium {r['chromium']}.", ""]
    rows, previous = [["after startup (no page open)", f"{r['startup_rss_mb']:.0f} MB", None, None, None]], \
        r["startup_rss_mb"]
    for p in r["pages"]:
        rows.append([f"after {p['page']}", f"{p['rss_mb']:.0f} MB", f"{p['rss_mb'] - previous:+.0f} MB",
                     sec(p["seconds"]), p["exception_shown"] and f"error shown: {p['exception_shown'][:80]}"])
        previous = p["rss_mb"]
    rows += [[f"at the end ({r['settle_s']:.0f} s later)", f"{r['end_rss_mb']:.0f} MB", None, None, None],
             ["peak (sampled every 0.5 s)", f"**{r['peak_rss_mb']:.0f} MB**", None, None, None]]
    lines += table(["when", "RSS", "change", "page open to script idle", "note"], rows)
    return Body(lines, [r["command"]])


def first_open(ctx: Ctx) -> Body:
    r = ctx.load("first_open.json")
    u = ctx.load("first_open_unprepared.json") or {"pages": {}}
    lines = [f"A fresh store, `python -m backend models prepare` ({r['prepare_seconds']} s), then one headless "
             f"Chromium {r['chromium']}: each page in a new tab of one context, timed until its script is idle and "
             f"until every chart is drawn; cached reopens are medians of {r['reopen_rounds']} rounds. The last column"
             " is the same walk with no reference artifacts (every first view computed). Load average "
             f"{r['load_average_start']} at the start, {r['load_average_end']} at the end.", ""]
    rows = [[page, sec(p["first_open_s"]), sec(p["first_open_script_idle_s"]), sec(p["cached_reopen_s"]),
             sec(p["cached_reopen_script_idle_s"]), sec(p["cached_reopen_new_context_s"]),
             sec(p["cached_click_through_s"]), sec(u["pages"].get(page, {}).get("first_open_s"))]
            for page, p in r["pages"].items()]
    lines += table(["page", "first open, charts drawn", "first open, script idle", "cached reopen, charts drawn",
                    "cached reopen, script idle", "cached reopen, new browser context", "cached, sidebar click",
                    "first open without reference artifacts"], rows)
    cmds = [f"{PY} bench/first_open.py"]
    if u["pages"]:
        cmds.append(f"{PY} bench/first_open.py --export-reference   # last column; also regenerates data/reference/")
    return Body(lines, cmds)


def crafted_uploads(ctx: Ctx) -> Body:
    r = ctx.load("crafted_uploads.json")
    load = f" Load average {r['load_average']:.1f} at the start" if "load_average" in r else ""
    cpus = f" on {r['cpus']} CPU cores." if "cpus" in r else ("." if load else "")
    lines = ["Each crafted file read in a fresh process (peak RSS is the reader's own), beside a normal upload." + load
             + cpus, ""]
    lines += table(["file", "size", "time", "peak RSS", "outcome"],
                   [[x["file"], f"{x['size_kb']:.0f} KB", sec(x["seconds"], 2), f"{x['peak_rss_mb']:.0f} MB",
                     x["outcome"]] for x in r["rows"]])
    return Body(lines, [f"{PY} bench/crafted_uploads.py"])


def _load_rows(r: dict) -> list[list]:
    lat, growth = r["stored_view_latency_s"], r["rss_growth_after_warmup"]
    rss = [mb for _, mb in r["rss_mb"]]
    cpu = r.get("cpu_seconds") or {}
    rows = [["errors seen by any session", str(len(r["errors"])), "0"],
            ["isolation: another session's text on a page", str(len(r["isolation_violations"])), "0"],
            [f"stored views to script idle, p50 / p95 (n = {lat['n']})", f"{sec(lat['p50'])} / **{sec(lat['p95'])}**",
             "p95 <= 3 s"],
            ["server RSS growth after warm-up", "n/a" if growth is None else f"{100 * growth:+.1f}% "
             f"({min(rss):.0f}-{max(rss):.0f} MB)" if rss else "n/a", "<= 5%"],
            ["CLI runs beside the app (failed)", f"{r['cli']['runs']} ({len(r['cli']['failures'])})", "0 failed"],
            ["run rows in the store: app / CLI / stopped",
             f"{r['store']['app_runs']} / {r['store']['cli_runs']} / {r['store']['stopped_runs']}", "both present"]]
    if cpu:
        total = sum(cpu.values())
        rows.append(["CPU seconds: server (with its computations) / browsers / CLI",
                     " / ".join(f"{cpu.get(k, 0):.0f} ({100 * cpu.get(k, 0) / total:.0f}%)"
                                for k in ("server", "browsers", "cli")), ""])
    return rows


def load(ctx: Ctx) -> Body:
    r = ctx.load("load.json")
    plan = r["plan"]
    roles = {}
    for s in r["sessions"]:
        roles[s["role"]] = roles.get(s["role"], 0) + 1
    think = plan.get("think_s", 0.0)
    lines = [f"{plan['sessions']} headless-Chromium sessions on one server for {r['sessions_ran_s']:.0f} s after they "
             f"had all opened ({', '.join(f'{n} {role}' for role, n in roles.items())}; a `long` session runs "
             "Decoding computations on a fresh prompt, one after another, the others walk every page by its sidebar "
             f"link and paste their own token on Watermark), and `python -m backend decode run` every "
             f"{plan['cli_every_s']:.0f} s on the same store. {r['machine']['cpu_count']} CPU cores, load average "
             f"{[round(x, 1) for x in r['machine']['load_average_end']]} at the end. "
             + (f"A browsing session reads each page {think:g} s on average (uniformly {think / 2:g}-"
                f"{1.5 * think:g} s) before its next click, as a person does." if think
                else "Sessions click on without pausing."), ""]
    lines += table(["measure", "value", "target"], _load_rows(r))
    lat = r["stored_view_latency_s"]
    if lat.get("per_view_p95"):
        lines += ["", "p95 per view: " + ", ".join(f"{v} {sec(s)}" for v, s in lat["per_view_p95"].items()) + "."]
    lines += ["", "The browsers run on the server's own cores here (in a lab they run on the users' machines), and the "
              "CPU row shows their share: with the long computations taking whatever is left, the two cores stay "
              "saturated, so each view waits for the others' server and browser work."]
    if r["errors"]:
        lines += ["", "Errors (first 5): " + "; ".join(f"`{e[:100]}`" for e in r["errors"][:5])]
    return Body(lines, [r["command"].replace(".venv/bin/python", PY)])


SECTIONS = [
    Section("App memory (RSS)", ("app_rss.json",), app_rss),
    Section("First open of every page", ("first_open.json",), first_open, also=("first_open_unprepared.json",)),
    Section("Crafted uploads", ("crafted_uploads.json",), crafted_uploads),
    Section("A lab on one server (load)", ("load.json",), load),
]
