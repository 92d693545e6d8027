"""docs/RESULTS.md from the benchmark outputs: `python -m bench report`.

Every figure is read from a JSON a benchmark wrote (bench/results/*.json, and the adapters' eval.json under
data/models/), never typed by hand; every section ends with the command(s) that reproduce it, taken from the
result's own recorded command or rebuilt from the arguments it recorded. A section whose files are absent is
left out and listed at the end, so the report always renders from what is present. The README's headline figures
(the block between its two markers) are written from the same files.

    .venv/bin/python -m bench report            # writes docs/RESULTS.md and the README's headline figures
    .venv/bin/python -m bench report --check    # exit 1 if either is not what the JSONs give
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "RESULTS.md"
PY = ".venv/bin/python"


@dataclass(frozen=True)
class Body:
    """What a section renders: markdown lines and the commands that reproduce them."""
    lines: list[str]
    commands: list[str]


@dataclass(frozen=True)
class Section:
    title: str
    files: tuple[str, ...]  # patterns for find(); the section renders if any matches
    render: Callable[[Ctx], Body]
    also: tuple[str, ...] = ()  # patterns of files it reads when present (not needed to render)


def find(root: Path, pattern: str) -> list[Path]:
    """Result files matching `pattern`: a path glob relative to the root when it has a '/', else a file name
    glob looked up in bench/results/ and then anywhere under data/ (where stored results the product reads live)."""
    if "/" in pattern:
        return sorted(root.glob(pattern))
    found: dict[str, Path] = {}
    shipped = [p for p in sorted((root / "data").rglob(pattern))
               if not {"cache", "secrets"} & set(p.relative_to(root / "data").parts)]
    for path in [*sorted((root / "bench" / "results").glob(pattern)), *shipped]:
        found.setdefault(path.name, path)
    return sorted(found.values(), key=lambda p: p.name)


@dataclass
class Ctx:
    root: Path
    paths: list[Path] = field(default_factory=list)

    def load(self, pattern: str) -> dict | None:
        """The first result JSON matching `pattern` (see find); None if there is none."""
        paths = find(self.root, pattern)
        if not paths:
            return None
        if paths[0] not in self.paths:
            self.paths.append(paths[0])
        return json.loads(paths[0].read_text())

    def glob(self, pattern: str) -> list[Path]:
        return find(self.root, pattern)


# ---- formatting ---------------------------------------------------------------------------------------

def table(header: list[str], rows: list[list]) -> list[str]:
    out = ["| " + " | ".join(map(str, header)) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join("–" if c is None else str(c) for c in row) + " |" for row in rows]
    return out + [""]


def pct(x: float | None, nd: int = 1) -> str | None:
    return None if x is None else f"{100 * x:.{nd}f}%"


def sec(x: float | None, nd: int = 1) -> str | None:
    return None if x is None else f"{x:.{nd}f} s"


def times(x: float | None, nd: int = 2) -> str | None:
    return None if x is None else f"{x:.{nd}f}×"


def num(x: float | None, nd: int = 2) -> str | None:
    return None if x is None else f"{x:.{nd}f}"


def clean_command(cmd: str, root: Path = ROOT) -> str:
    """A recorded command as one reproduces it here: no `cd`, `nohup`, log redirection or `&`; a script that
    moved (scripts/ -> training/, bench/) is named where it is now."""
    cmd = re.sub(r"^cd \S+ && ", "", cmd.strip())
    cmd = re.sub(r"^nohup ", "", cmd)
    cmd = re.sub(r"\s*>\s*\S+(\s+2>&1)?\s*&?\s*$", "", cmd)
    cmd = re.sub(r"\s*&\s*$", "", cmd)
    cmd = re.sub(r"(--[\w-]+)  (?=--)", r'\1 "" ', cmd)  # an empty argument the recording lost
    for script in re.findall(r"(?<![\w/.-])((?:scripts|bench|training)/[\w/]+\.py)", cmd):
        if not (root / script).exists():
            name = Path(script).name
            moved = [p for d in ("training", "bench", "scripts") for p in (root / d).rglob(name)]
            if moved:
                cmd = cmd.replace(script, moved[0].relative_to(root).as_posix())
    return cmd


def measured_at(root: Path, path: Path) -> str:
    """'<commit> (<date>)' of the last commit that wrote `path`, or 'not committed yet'."""
    try:
        out = subprocess.run(["git", "log", "-1", "--format=%h (%cs)", "--", str(path.relative_to(root))],
                             cwd=root, capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError, ValueError):
        out = ""
    return out or "not committed yet"


# ---- assembling ---------------------------------------------------------------------------------------

HEADER = """# Measured results

Generated by `.venv/bin/python -m bench report` from the benchmark outputs (`bench/results/*.json`, the
adapters' `data/models/*/eval.json`); do not edit by hand. Each section names the files it reads, the commit
that last wrote them, and the command that reproduces its figures. Unless a section says otherwise the
machine is the project's reference one: 2 CPU cores shared with other jobs, no GPU. Absolute times are
therefore pessimistic; ratios were measured side by side in one run.
"""


def slug(title: str) -> str:
    return re.sub(r"[^a-z0-9 -]", "", title.lower()).strip().replace(" ", "-")


def render(root: Path = ROOT) -> str:
    from bench.report_sections import SECTIONS
    from bench.report_sections.generic import unclaimed

    extra, left_out = unclaimed(root, SECTIONS)
    parts, contents, missing = [], [], []
    for section in [*SECTIONS, *extra]:
        if not any(find(root, pattern) for pattern in section.files):
            missing.append(section)
            continue
        ctx = Ctx(root)
        body = section.render(ctx)
        if not body.commands:
            raise ValueError(f"section {section.title!r} lists no command")
        sources = ", ".join(f"`{p.relative_to(root).as_posix()}` at {measured_at(root, p)}" for p in ctx.paths)
        contents.append(f"- [{section.title}](#{slug(section.title)})")
        parts += [f"## {section.title}", "", *body.lines, f"Source: {sources}.", "", "Reproduce:", "", "```bash",
                  *body.commands, "```", ""]
    tail = []
    if missing:
        tail = ["## Not measured in this tree", "",
                *[f"- {s.title}: no `{'`, `'.join(s.files)}`" for s in missing], ""]
    if left_out:
        tail += ["## Result files not reported", "", *[f"- {line}" for line in left_out], ""]
    return "\n".join([HEADER, *contents, "", *parts, *tail]).rstrip() + "\n"


README = ROOT / "README.md"
BEGIN, END = "<!-- headline figures: generated by python -m bench report -->", "<!-- end of headline figures -->"


def readme_with_headline(readme: str, root: Path = ROOT) -> str:
    """`readme` with the block between BEGIN and END replaced by the headline figures (unchanged without them)."""
    if BEGIN not in readme or END not in readme:
        return readme
    from bench.report_sections.headline import LINES

    ctx = Ctx(root)
    lines = [line for line in (f(ctx) for f in LINES) if line]
    head, rest = readme.split(BEGIN, 1)
    return head + BEGIN + "\n" + "\n".join(lines) + "\n" + END + rest.split(END, 1)[1]


PROVENANCE = re.compile(r" at (?:[0-9a-f]{7,} \(\d{4}-\d\d-\d\d\)|not committed yet)")


def same_figures(a: str, b: str) -> bool:
    """Equal apart from the commits named as sources (committing a result changes them, not its figures)."""
    return PROVENANCE.sub(" at -", a) == PROVENANCE.sub(" at -", b)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench report", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT, help="where to write (default docs/RESULTS.md)")
    parser.add_argument("--check", action="store_true", help="compare with --out instead of writing it")
    args = parser.parse_args(argv)
    text = render(ROOT)
    readme = README.read_text() if README.is_file() else ""
    headline = readme_with_headline(readme)
    if args.check:
        same = args.out.is_file() and same_figures(args.out.read_text(), text) and headline == readme
        print(f"{args.out}, README headline: {'up to date' if same else 'out of date: run python -m bench report'}")
        return 0 if same else 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    if headline != readme:
        README.write_text(headline)
    print(f"wrote {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out} "
          f"({text.count(chr(10))} lines)")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
