"""`python -m backend decode list|run|particle|compare ... --json`: the decoding strategies, headless."""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys

from backend.cli.params import add_flags, flag_values
from backend.decoding.config import DecodeConfig
from backend.decoding.convexity import cli as convexity_cli
from backend.decoding.particle import ParticleConfig, particle
from backend.decoding.registry import STRATEGIES
from backend.decoding.run import run_one, run_batch, run_key, settings_for
from backend.errors import UserError
from backend.models import default_model_id, load, skipped_line
from backend.tasks.problem_sets import PROBLEM_SETS, problem_set, steps_of
from backend.tasks.uploads import problems_from_file

STRATEGIES_DEFAULT = "greedy,best_of_n,asmc"
FIELDS = tuple(f.name for f in dataclasses.fields(DecodeConfig) if f.name not in ("strategy", "extra"))


def _progress(fraction: float, message: str) -> None:
    print(f"[{fraction:4.0%}] {message}", file=sys.stderr)


def _add_problem_flags(parser: argparse.ArgumentParser) -> None:
    """The problems: generated arithmetic ones (how many, which split, seed), or a JSON-lines file."""
    parser.add_argument("--problems", type=int, default=5, help="number of generated arithmetic problems")
    parser.add_argument("--set", dest="problem_set", choices=tuple(PROBLEM_SETS), default="classic",
                        help="problem set, as the page's picker (long: 4-8-step chains, RC's setting)")
    parser.add_argument("--steps", type=int, default=None, help="only problems of this many steps (the page's Steps)")
    parser.add_argument("--split", choices=("heldout", "train"), default="heldout")
    parser.add_argument("--problem-seed", type=int, default=0)
    parser.add_argument("--jsonl", help="JSON-lines file of {question|prompt, answer} instead")


def _add_config_flags(parser: argparse.ArgumentParser) -> None:
    """One flag per DecodeConfig field (default, range and help from the dataclass), plus --option key=value."""
    add_flags(parser, DecodeConfig, FIELDS)
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="strategy-specific option (JSON value), repeatable")
    parser.add_argument("--model", help="registry id (default: the configured default model)")
    parser.add_argument("--no-chat", action="store_true", help="do not apply the chat template")


def _config(args: argparse.Namespace, strategy: str) -> DecodeConfig:
    values = flag_values(args, DecodeConfig, FIELDS)
    extra = {}
    for item in args.option:
        key, sep, raw = item.partition("=")
        if not sep:
            raise UserError(f"--option expects KEY=VALUE, got {item!r}.")
        try:
            extra[key] = json.loads(raw)
        except json.JSONDecodeError:
            extra[key] = raw
        except (ValueError, RecursionError):  # an integer of > 4,300 digits, or thousands of nested arrays
            raise UserError(f"--option {key}: the value is too large or too deeply nested to read.") from None
    return DecodeConfig(strategy=strategy, extra=extra, **values)


def _problems(args: argparse.Namespace) -> list:
    if args.jsonl:
        return problems_from_file(args.jsonl)  # capped as a page upload is, before it is read
    if not 1 <= args.problems <= 1000:
        raise UserError(f"--problems must be between 1 and 1000, got {args.problems}.")
    if args.steps is not None and args.steps not in steps_of(args.problem_set):
        raise UserError(f"--steps must be one of {', '.join(map(str, steps_of(args.problem_set)))} for the "
                        f"{args.problem_set} set, got {args.steps}.")
    return problem_set(args.problem_set, args.problems, args.steps, split=args.split, seed=args.problem_seed)


def cmd_list(args: argparse.Namespace) -> list[dict]:
    return [{"name": s.name, "label": s.label, "params": ", ".join(s.params), "summary": s.help}
            for s in STRATEGIES]


def _task(args: argparse.Namespace):
    if args.prompt is not None:
        return args.prompt
    problems = _problems(args)
    if not 0 <= args.index < len(problems):
        raise UserError(f"--index must be between 0 and {len(problems) - 1}.")
    return problems[args.index]


def cmd_particle(args: argparse.Namespace) -> dict:
    """One particle of an ASMC run (stored, or decoded now and stored) at one step."""
    config = ParticleConfig(run_key(_task(args), _config(args, args.strategy), chat=not args.no_chat),
                            args.round, args.step, args.row)
    handle = load(args.model or default_model_id(), progress=_progress)
    done = particle(handle, config, progress=_progress)
    return {"model": handle.display_name, "provenance": done.provenance, **done.value.to_json()}


def cmd_run(args: argparse.Namespace) -> dict:
    handle = load(args.model or default_model_id(), progress=_progress)
    if args.expected is not None and args.prompt is None:
        raise UserError("--expected goes with --prompt (a problem of a set carries its own answer).")
    task = _task(args)
    done = run_one(handle, task, _config(args, args.strategy), progress=_progress, chat=not args.no_chat,
                  expected=args.expected)
    r = done.value
    return {"model": handle.display_name, "provenance": done.provenance, "run_id": done.run_id, **r.summary(),
            "ess": [p.ess.round(3).tolist() for p in r.particles],
            "resample_steps": [p.resampled.nonzero()[0].tolist() for p in r.particles],
            "candidates": [dataclasses.asdict(c) for c in r.candidates]}


def cmd_compare(args: argparse.Namespace) -> dict:
    if args.task == convexity_cli.TASK:
        return convexity_cli.compare(args, STRATEGIES_DEFAULT)
    names = [s.strip() for s in args.strategies.split(",") if s.strip()]
    try:
        budgets = [int(b) for b in args.budgets.split(",") if b.strip()] if args.budgets else []
    except ValueError:
        raise UserError(f"--budgets expects comma-separated integers, got {args.budgets!r}.") from None
    settings = settings_for([_config(args, name) for name in names], budgets)  # refused before a model loads
    problems = _problems(args)
    handle = load(args.model or default_model_id(), progress=_progress)
    done = run_batch(handle, problems, settings, progress=_progress, chat=not args.no_chat)
    if done.value.skipped:  # the context rule for batches: skipped and counted, said on stderr
        print(skipped_line(done.value.skipped), file=sys.stderr)
    return {"model": handle.display_name, "provenance": done.provenance, "run_id": done.run_id,
            "summary": done.value.summary(), "rows": [dataclasses.asdict(r) for r in done.value.rows],
            "skipped": list(done.value.skipped)}


def add_commands(subparsers) -> None:
    parser = subparsers.add_parser("decode", help="decoding strategies side by side (ASMC, MH, best-of-n, ...)")
    actions = parser.add_subparsers(dest="action", required=True)
    actions.add_parser("list", help="registered strategies").set_defaults(handler=cmd_list)
    run = actions.add_parser("run", help="one strategy on one prompt or problem")
    add_flags(run, DecodeConfig, {"strategy": "--strategy"})
    run.add_argument("--prompt", help="free prompt; otherwise a task problem")
    run.add_argument("--expected", type=int, default=None,
                     help="with --prompt: the expected integer answer, read from the output as on the problem sets "
                          "('Answer: N', else the last integer), so correctness is judged")
    run.add_argument("--index", type=int, default=0, help="which problem of the set")
    run.set_defaults(handler=cmd_run)
    drill = actions.add_parser("particle", help="one particle of an ASMC run at one step: its text, weight history "
                                               "and the particles it replaced (the run is decoded if not stored)")
    add_flags(drill, DecodeConfig, {"strategy": "--strategy"})
    drill.add_argument("--prompt", help="free prompt (no checker); otherwise a task problem")
    drill.add_argument("--index", type=int, default=0, help="which problem of the set")
    add_flags(drill, ParticleConfig, {"round": "--round", "step": "--step", "row": "--particle"})
    drill.set_defaults(handler=cmd_particle)
    compare = actions.add_parser("compare", help="several strategies on many problems")
    compare.add_argument("--strategies", default=STRATEGIES_DEFAULT, help="comma-separated names")
    compare.add_argument("--budgets", default="",
                         help="comma-separated budget multipliers (accuracy vs budget), e.g. 2,4,8")
    convexity_cli.add_flags(compare)
    compare.set_defaults(handler=cmd_compare)
    for sub in (run, drill, compare):
        _add_problem_flags(sub)
        _add_config_flags(sub)
