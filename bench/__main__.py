"""`python -m bench <command>`: tools over the benchmarks' outputs (the benchmarks themselves are scripts).

    .venv/bin/python -m bench report [--check]   # regenerate docs/RESULTS.md from bench/results/*.json
    .venv/bin/python -m bench load [--sessions 8] [--seconds 600]   # a lab on one server (bench/load.py)
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

COMMANDS = {"report": "bench.report", "load": "bench.load"}


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in COMMANDS:
        print(__doc__.strip(), file=sys.stderr)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    from importlib import import_module

    return import_module(COMMANDS[argv[0]]).main(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
