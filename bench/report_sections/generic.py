"""Result files no section claims (a new benchmark's output): a plain table of their figures and their command,
so a benchmark shows up in docs/RESULTS.md the day it writes a JSON, before it has a section of its own."""
from __future__ import annotations

import json
from pathlib import Path

from bench.report import PY, Body, Ctx, Section, clean_command, find, table

# Files in bench/results/ deliberately left out of the report, and why.
IGNORED = {
    "app_memory.json": "superseded by app_rss.json (the RSS after every page, not after Home alone)",
}
MAX_ROWS = 60


def _leaves(value, prefix: str = ""):
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _leaves(inner, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, list):
        if all(not isinstance(v, (dict, list)) for v in value) and len(value) <= 8:
            yield prefix, ", ".join(map(str, value))
        else:
            for i, inner in enumerate(value[:20]):
                yield from _leaves(inner, f"{prefix}[{i}]")
    elif isinstance(value, float):
        yield prefix, f"{value:.4g}"
    elif prefix not in ("command", "commands"):
        yield prefix, str(value)


def _script(root: Path, stem: str) -> str | None:
    """bench/<stem>.py, or the bench script whose name the result's name starts with (kernel_gpu -> kernel)."""
    scripts = sorted((p.stem for p in (root / "bench").glob("*.py") if not p.stem.startswith("_")),
                     key=len, reverse=True)
    return next((f"bench/{s}.py" for s in scripts if stem == s or stem.startswith(s + "_")), None)


def _commands(root: Path, path: Path, data: dict) -> list[str]:
    recorded = data.get("commands") or ([data["command"]] if isinstance(data.get("command"), str) else [])
    if recorded:
        return [clean_command(c, root) for c in recorded]
    script = _script(root, path.stem)
    return [f"{PY} {script}"] if script else []


def unclaimed(root: Path, sections: list[Section]) -> tuple[list[Section], list[str]]:
    """(a generic section per unclaimed result file that names its command, the files left out with why)."""
    claimed = {p for s in sections for pattern in (*s.files, *s.also) for p in find(root, pattern)}
    extra, left_out = [], []
    for path in sorted((root / "bench" / "results").glob("*.json")):
        if path in claimed:
            continue
        if path.name in IGNORED:
            left_out.append(f"`{path.name}`: {IGNORED[path.name]}")
            continue
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            left_out.append(f"`{path.name}`: not readable JSON")
            continue
        if not isinstance(data, dict) or not _commands(root, path, data):
            left_out.append(f"`{path.name}`: no recorded command and no bench script of that name")
            continue
        extra.append(Section(f"{path.stem} (all figures)", (path.name,), _render(path.name)))
    return extra, left_out


def _render(name: str):
    def render(ctx: Ctx) -> Body:
        data = ctx.load(name)
        rows = [[f"`{k}`", v] for k, v in _leaves(data)]
        lines = ["No section of its own yet: every figure of the file, as recorded.", ""]
        if len(rows) > MAX_ROWS:
            lines = [f"No section of its own yet: the first {MAX_ROWS} of its {len(rows)} figures.", ""]
        return Body(lines + table(["field", "value"], rows[:MAX_ROWS]), _commands(ctx.root, ctx.paths[0], data))
    return render
