"""Arithmetic word problems with exact integer answers and a step-by-step solution.

Used to fine-tune a small model (the solution is the target text) and to benchmark
decoding strategies (the answer is checked exactly). A problem's id is its canonical
parameters (template + numbers); the train/held-out split is a hash of that id, so a
held-out problem can never be generated as a train problem, whatever the seed.
"""
from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from backend.errors import UserError
from backend.jsonlines import json_objects
from backend.tasks.everyday_scenarios import EVERYDAY_SCENARIOS
from backend.tasks.steps import worked_step
from backend.tasks.word_problems import EXTRA_SCENARIOS, SCENARIOS, write_problem
from backend.tasks.worked_arithmetic import SOLUTION_STYLES, format_step

SPLITS = ("train", "heldout")
HELDOUT_PERCENT = 20  # share of the canonical problem space reserved for evaluation
MAX_VALUE = 999  # every intermediate value and answer lies in 0..MAX_VALUE

NAMES = ("Ava", "Ben", "Chloe", "Dan", "Emma", "Finn", "Grace", "Hugo", "Isla", "Jack",
         "Lena", "Maya", "Noah", "Omar", "Priya", "Ravi", "Sara", "Tom", "Uma", "Zoe")
THINGS = ("marbles", "stickers", "shells", "apples", "pencils", "cards", "beads", "stamps")
ITEMS = ("notebooks", "pens", "mugs", "books", "toy cars", "sandwiches", "plants", "hats")
ROWS = (("A garden", "tulips"), ("A hall", "chairs"), ("An orchard", "trees"),
        ("A classroom", "desks"), ("A parking lot", "cars"))
GIFTS = ("a game", "a kite", "a backpack", "a puzzle", "a ball")


@dataclass(frozen=True)
class Problem:
    id: str
    question: str
    answer: int
    solution: str
    split: str
    difficulty: int  # number of arithmetic steps (0 when unknown, e.g. uploads)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class _Calc:
    """Records steps; flags (instead of raising) values that break the rules so callers resample."""

    def __init__(self) -> None:
        self.steps: list[tuple[int, str, int, int]] = []
        self.ok = True

    def __call__(self, a: int, op: str, b: int) -> int:
        c, ok = worked_step(a, op, b, MAX_VALUE)
        self.ok &= ok
        self.steps.append((a, op, b, c))
        return c


# Each template draws numbers and names, runs the arithmetic through calc, and returns
# (numbers, question). The numbers must all appear in the question so that the question
# determines the id, which is what makes the hash split disjoint on question text too.
Template = Callable[[random.Random, _Calc], tuple[tuple[int, ...], str]]


def _collect(r: random.Random, calc: _Calc) -> tuple[tuple[int, ...], str]:
    a, b, n, t = r.randint(2, 99), r.randint(2, 99), r.choice(NAMES), r.choice(THINGS)
    calc(a, "+", b)
    return (a, b), f"{n} has {a} {t}. {n} finds {b} more {t}. How many {t} does {n} have now?"


def _give_away(r: random.Random, calc: _Calc) -> tuple[tuple[int, ...], str]:
    a = r.randint(5, 99)
    b, (n, m), t = r.randint(1, a), r.sample(NAMES, 2), r.choice(THINGS)
    calc(a, "-", b)
    return (a, b), f"{n} had {a} {t} and gave {b} of them to {m}. How many {t} does {n} have left?"


def _rows(r: random.Random, calc: _Calc) -> tuple[tuple[int, ...], str]:
    a, b, (place, obj) = r.randint(2, 25), r.randint(2, 25), r.choice(ROWS)
    calc(a, "*", b)
    return (a, b), f"{place} has {a} rows of {obj} with {b} {obj} in each row. How many {obj} are there in total?"


def _share(r: random.Random, calc: _Calc) -> tuple[tuple[int, ...], str]:
    k, q, n, t = r.randint(2, 12), r.randint(2, 40), r.choice(NAMES), r.choice(THINGS)
    calc(k * q, "/", k)
    return (k * q, k), f"{n} shares {k * q} {t} equally among {k} friends. How many {t} does each friend get?"


def _change(r: random.Random, calc: _Calc) -> tuple[tuple[int, ...], str]:
    a, p, n, item = r.randint(2, 9), r.randint(2, 20), r.choice(NAMES), r.choice(ITEMS)
    bill = r.choice([b for b in (20, 50, 100, 200) if b >= a * p])
    calc(bill, "-", calc(a, "*", p))
    return (a, p, bill), (f"{n} buys {a} {item} for ${p} each and pays with a ${bill} bill. "
                          f"How many dollars of change does {n} get?")


def _ages(r: random.Random, calc: _Calc) -> tuple[tuple[int, ...], str]:
    a, b, c, (n, m) = r.randint(3, 60), r.randint(1, 30), r.randint(2, 20), r.sample(NAMES, 2)
    calc(calc(a, "+", b), "+", c)
    return (a, b, c), f"{n} is {a} years old. {m} is {b} years older than {n}. How old will {m} be in {c} years?"


def _bag_up(r: random.Random, calc: _Calc) -> tuple[tuple[int, ...], str]:
    k, q, n, t = r.randint(2, 9), r.randint(2, 30), r.choice(NAMES), r.choice(THINGS)
    a = r.randint(1, k * q - 1)
    b = k * q - a  # chosen so the division is exact
    calc(calc(a, "+", b), "/", k)
    return (a, b, k), (f"{n} has {a} {t} and gets {b} more. {n} puts all the {t} into {k} bags "
                       f"with the same number in each bag. How many {t} are in each bag?")


def _daily(r: random.Random, calc: _Calc) -> tuple[tuple[int, ...], str]:
    a, d, n, t = r.randint(2, 30), r.randint(2, 9), r.choice(NAMES), r.choice(THINGS)
    c = r.randint(1, a * d)
    calc(calc(a, "*", d), "-", c)
    return (a, d, c), (f"{n} collects {a} {t} every day for {d} days, then loses {c} of them. "
                       f"How many {t} does {n} have now?")


def _shopping(r: random.Random, calc: _Calc) -> tuple[tuple[int, ...], str]:
    a, p, b, q = r.randint(2, 9), r.randint(2, 30), r.randint(2, 9), r.randint(2, 30)
    n, (i1, i2) = r.choice(NAMES), r.sample(ITEMS, 2)
    calc(calc(a, "*", p), "+", calc(b, "*", q))
    return (a, p, b, q), (f"{n} buys {a} {i1} at ${p} each and {b} {i2} at ${q} each. "
                          f"How many dollars does {n} spend in total?")


def _bakery(r: random.Random, calc: _Calc) -> tuple[tuple[int, ...], str]:
    a, b, k, n = r.randint(2, 9), r.randint(4, 24), r.randint(2, 9), r.choice(NAMES)
    # eat at most half, and leave a multiple of k so the division is exact
    c = r.choice([x for x in range(1, a * b // 2 + 1) if (a * b - x) % k == 0] or [1])
    calc(calc(calc(a, "*", b), "-", c), "/", k)
    return (a, b, c, k), (f"A baker makes {a} trays with {b} cookies on each tray. {n} eats {c} of the cookies. "
                          f"The rest are packed equally into {k} boxes. How many cookies go in each box?")


def _older(r: random.Random, calc: _Calc) -> tuple[tuple[int, ...], str]:
    a, f, c, (n, m, o) = r.randint(2, 20), r.randint(2, 4), r.randint(2, 20), r.sample(NAMES, 3)
    b = r.randint(1, a * f - 1)
    calc(calc(calc(a, "*", f), "-", b), "+", c)
    return (a, f, b, c), (f"{n} is {a} years old. {m} is {f} times as old as {n}. {o} is {b} years younger "
                          f"than {m}. How old will {o} be in {c} years?")


def _savings(r: random.Random, calc: _Calc) -> tuple[tuple[int, ...], str]:
    a, w, s, n, g = r.randint(0, 99), r.randint(2, 9), r.randint(2, 25), r.choice(NAMES), r.choice(GIFTS)
    c = r.randint(1, a + w * s)
    calc(calc(a, "+", calc(w, "*", s)), "-", c)
    return (a, w, s, c), (f"{n} has ${a}. Each week for {w} weeks, {n} saves ${s} more. Then {n} spends "
                          f"${c} on {g}. How many dollars does {n} have now?")


# difficulty (number of steps) -> templates; the step count is checked at generation time.
TEMPLATES: dict[int, dict[str, Template]] = {
    1: {"collect": _collect, "give_away": _give_away, "rows": _rows, "share": _share},
    2: {"change": _change, "ages": _ages, "bag_up": _bag_up, "daily": _daily},
    3: {"shopping": _shopping, "bakery": _bakery, "older": _older, "savings": _savings},
}


def split_of(problem_id: str) -> str:
    """The split a canonical id belongs to: a stable hash (not Python's salted hash())."""
    h = int.from_bytes(hashlib.sha256(problem_id.encode()).digest()[:8], "big")
    return "heldout" if h % 100 < HELDOUT_PERCENT else "train"


def format_solution(steps: list[tuple[int, str, int, int]], style: str = "plain") -> str:
    """'Step i: ...' lines (style: worked_arithmetic.SOLUTION_STYLES) and 'Answer: n'."""
    lines = [format_step(i, *step, style=style) for i, step in enumerate(steps, 1)]
    return "\n".join(lines + [f"Answer: {steps[-1][3]}"])


# Which word_problems scenarios each composed family draws from. A family's set never changes once a benchmark
# or an adapter's recipe uses it (the draws would move): new scenarios come in a new family.
COMPOSED_SCENARIOS = {
    "broad": SCENARIOS,
    "mixed": SCENARIOS,
    "extended": {**SCENARIOS, **EXTRA_SCENARIOS},
    "everyday": {**SCENARIOS, **EXTRA_SCENARIOS, **EVERYDAY_SCENARIOS},
}
# the 12 templates, word_problems' scenarios alone ("broad"), or half of each (the others)
FAMILIES = ("classic", *COMPOSED_SCENARIOS)


def generate_problems(n: int, split: str = "train", seed: int = 0, difficulty: int | None = None,
                      family: str = "classic", style: str = "plain") -> list[Problem]:
    """n distinct problems of one split; the same arguments always give the same list. `style` only changes
    how each solution is written (the problems, answers and split stay the same)."""
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {FAMILIES}, got {family!r}")
    if style not in SOLUTION_STYLES:
        raise ValueError(f"style must be one of {SOLUTION_STYLES}, got {style!r}")
    if family == "broad":
        return _generate_broad(n, split, seed, difficulty, style)
    if family != "classic":  # interleaved so any prefix is half of each
        broad = _generate_broad(n - n // 2, split, seed, difficulty, style, COMPOSED_SCENARIOS[family])
        classic = generate_problems(n // 2, split, seed, difficulty, style=style)
        return [p for i, b in enumerate(broad) for p in (b, *classic[i:i + 1])]
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    if difficulty is not None and difficulty not in TEMPLATES:
        raise ValueError(f"difficulty must be one of {sorted(TEMPLATES)} or None, got {difficulty!r}")
    if n < 0:
        raise ValueError("n must be >= 0")
    rng = random.Random(seed)
    levels = [difficulty] if difficulty is not None else sorted(TEMPLATES)
    out: list[Problem] = []
    seen: set[str] = set()
    for _ in range(2000 + 200 * n):  # bounded: a small problem space must fail, not hang
        if len(out) >= n:
            return out
        level = rng.choice(levels)
        name, template = rng.choice(sorted(TEMPLATES[level].items()))
        calc = _Calc()
        nums, question = template(rng, calc)
        pid = "-".join([name, *map(str, nums)])
        if not calc.ok or len(calc.steps) != level or pid in seen or split_of(pid) != split:
            continue
        seen.add(pid)
        out.append(Problem(pid, question, calc.steps[-1][3], format_solution(calc.steps, style), split, level))
    if len(out) < n:
        raise ValueError(f"could only generate {len(out)} of {n} distinct {split} problems")
    return out


def _generate_broad(n: int, split: str, seed: int, difficulty: int | None, style: str,
                    scenarios: Mapping[str, Callable] = SCENARIOS) -> list[Problem]:
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    if difficulty is not None and difficulty not in (1, 2, 3):
        raise ValueError(f"difficulty must be 1, 2, 3 or None, got {difficulty!r}")
    return written_problems(random.Random(seed), n, split, style, family="broad",
                            levels=(difficulty,) if difficulty else (1, 2, 3), scenarios=scenarios)


def written_problems(rng: random.Random, n: int, split: str, style: str, *, family: str, levels: tuple[int, ...],
                     scenarios: Mapping[str, Callable]) -> list[Problem]:
    """n distinct problems of `split` written by `word_problems.write_problem` from `scenarios`, each with a level
    drawn from `levels` (the broad family, and the long chains of `long_chains`). Ids are the canonical parameters:
    family, scenario, operations and every number shown, so wordings of one problem share a split."""
    out: list[Problem] = []
    seen: set[str] = set()
    for _ in range(2000 + 200 * n):  # bounded: a split may hold fewer distinct problems than asked
        if len(out) >= n:
            break
        level = levels[0] if len(levels) == 1 else rng.choice(levels)  # one level: no draw (same lists as before)
        written = write_problem(rng, level, scenarios)
        if written is None:
            continue
        pid = "-".join([family, written.scenario, "".join(s[1] for s in written.steps), *map(str, written.shown)])
        if pid in seen or split_of(pid) != split:
            continue
        seen.add(pid)
        out.append(Problem(id=pid, question=written.question, answer=written.steps[-1][3],
                           solution=format_solution(list(written.steps), style), split=split, difficulty=level))
    if len(out) < n:
        raise ValueError(f"could only generate {len(out)} of {n} distinct {family} {split} problems")
    return out


def format_prompt(problem: Problem) -> str:
    return f"Solve the problem step by step. End with a line 'Answer: <number>'.\n\n{problem.question}"


_NUM = r"(?<![\d.])(-)?\$?(\d(?:[\d,]*\d)?(?:\.\d+)?)"  # sign, digits (commas, decimals allowed)
_ANSWER_RE = re.compile(r"answer\s*[:=]\s*[*$\s]*" + _NUM, re.IGNORECASE)
_NUM_RE = re.compile(_NUM)


def _to_int(sign: str | None, digits: str) -> int | None:
    whole, _, frac = digits.replace(",", "").partition(".")
    if frac.strip("0"):  # 3.5 is not an integer answer; 57.0 is 57
        return None
    return -int(whole) if sign else int(whole)


def extract_answer(text: str) -> int | None:
    """The last 'Answer: <int>' in text, else the last integer anywhere; None if there is none."""
    marked = _ANSWER_RE.findall(text)
    if marked:
        return _to_int(*marked[-1])
    values = [v for v in (_to_int(*m) for m in _NUM_RE.findall(text)) if v is not None]
    return values[-1] if values else None


def check_answer(problem: Problem, text: str) -> bool:
    return extract_answer(text) == problem.answer


MAX_ANSWER_DIGITS = 40  # an answer string longer than this is refused as "not an integer"


def _parse_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"\s*-?\d[\d,]*\s*", value):
        digits = value.replace(",", "").strip()
        # Python refuses int() of more than 4,300 digits with a ValueError; no answer here needs 40
        return int(digits) if len(digits) <= MAX_ANSWER_DIGITS else None
    return None


def _preview(value: Any) -> str:
    """A short repr of a user's value for an error (repr of a huge int raises, a long text floods the line)."""
    text = repr(value) if not isinstance(value, int) or value.bit_length() < 4000 else "a huge integer"
    return text if len(text) <= 60 else text[:57] + "..."


UPLOAD_ID = "upload-{line}"  # an uploaded problem without an "id" is named by its line


def where(problem: Problem) -> str:
    """How a message names a problem: its line for an upload without its own id, else its id."""
    prefix = UPLOAD_ID.split("{")[0]
    rest = problem.id[len(prefix):]
    return f"Line {rest}" if problem.id.startswith(prefix) and rest.isdigit() else f"Problem {problem.id!r}"


def load_jsonl_problems(text: str) -> list[Problem]:
    """Problems from uploaded JSON lines: {"question" or "prompt": str, "answer": int}; each question once."""
    out: list[Problem] = []
    seen: dict[str, int] = {}
    for no, row in json_objects(text.splitlines(), "The upload", '{"question": "...", "answer": 42}'):
        question = row.get("question", row.get("prompt"))
        if not isinstance(question, str) or not question.strip():
            raise UserError(f"Line {no}: needs a non-empty \"question\" (or \"prompt\") text field.")
        if question.strip() in seen:
            raise UserError(f"Line {no}: the same question as line {seen[question.strip()]}; keep each problem once "
                            "(a repeat would count twice in the accuracy).")
        seen[question.strip()] = no
        if "answer" not in row:
            raise UserError(f"Line {no}: needs an \"answer\" field.")
        answer = _parse_int(row["answer"])
        if answer is None:
            raise UserError(f"Line {no}: \"answer\" must be an integer of at most {MAX_ANSWER_DIGITS} digits, "
                            f"got {_preview(row['answer'])}.")
        out.append(Problem(id=str(row.get("id", UPLOAD_ID.format(line=no))), question=question.strip(), answer=answer,
                           solution=str(row.get("solution", "")), split="upload",
                           difficulty=_parse_int(row.get("difficulty", row.get("steps", 0))) or 0))
    if not out:
        raise UserError("The file has no problems: expected one JSON object per line.")
    return out
