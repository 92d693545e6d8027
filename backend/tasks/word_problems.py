"""A broad family of arithmetic word problems: many scenarios and surface forms, the same answer format.

The classic family (`arithmetic.TEMPLATES`) has 12 fixed sentences; a model trained on it learns those
sentences, not arithmetic in words. This family composes each problem from a scenario (a chain of one to
three operations, all four of them) and independent surface choices: names and pronouns, objects and
units, several phrasings per operation, numbers written as words, thousands with commas, distractor
sentences carrying numbers that play no part, and the question first or last.

Problems keep the classic contract: the solution is "Step i: a op b = c" lines (or their worked form,
worked_arithmetic) and "Answer: n"; every
number of the text is part of the id, and the train/held-out split is the same stable hash of the id.
"""
from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from backend.tasks.steps import worked_step

PEOPLE = (("Ava", "she"), ("Ben", "he"), ("Chloe", "she"), ("Dario", "he"), ("Emeka", "he"), ("Fatima", "she"),
          ("Gus", "he"), ("Hiro", "he"), ("Ines", "she"), ("Jonas", "he"), ("Keiko", "she"), ("Luis", "he"),
          ("Mei", "she"), ("Nadia", "she"), ("Oscar", "he"), ("Paula", "she"), ("Quinn", "they"), ("Rahul", "he"),
          ("Sofia", "she"), ("Tariq", "he"), ("Ursula", "she"), ("Victor", "he"), ("Wen", "she"), ("Xavi", "he"),
          ("Yara", "she"), ("Zane", "he"), ("Mrs. Lopez", "she"), ("Mr. Novak", "he"), ("Aunt Rosa", "she"),
          ("Coach Kim", "they"))
OBJECTS = ("marbles", "stickers", "shells", "apples", "pencils", "cards", "beads", "stamps", "cookies", "eggs",
           "books", "coins", "balloons", "crayons", "buttons", "oranges", "cupcakes", "toy cars", "photos", "seeds")
CONTAINERS = ("box", "bag", "pack", "jar", "crate", "basket", "tray", "carton")
GOODS = (("notebook", "notebooks"), ("pen", "pens"), ("mug", "mugs"), ("ticket", "tickets"), ("sandwich", "sandwiches"),
         ("plant", "plants"), ("hat", "hats"), ("shirt", "shirts"), ("comic", "comics"), ("lamp", "lamps"))
MEASURES = (("tank", "litres of water"), ("jug", "litres of juice"), ("sack", "kilograms of rice"),
            ("roll", "metres of ribbon"), ("bottle", "millilitres of oil"), ("bin", "kilograms of sand"))
RATES = (("reads", "pages", "day", "days"), ("walks", "kilometres", "day", "days"), ("bakes", "loaves", "hour", "hours"),
         ("types", "lines", "minute", "minutes"), ("packs", "boxes", "hour", "hours"), ("plants", "trees", "week", "weeks"))
MACHINES = (("A printer", "prints", "pages"), ("A machine", "makes", "bottles"), ("A pump", "moves", "litres"),
            ("A bakery", "bakes", "rolls"), ("A factory line", "fills", "cans"))
ONES = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
        "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen")
TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
MAX_VALUE = 2000  # every intermediate value and answer lies in 0..MAX_VALUE
P_WORDS = 0.15  # a number of at most 100 is written as words
P_DISTRACTOR = 0.3
P_QUESTION_FIRST = 0.15


def number_words(n: int) -> str:
    if n < 20:
        return ONES[n]
    if n < 100:
        return TENS[n // 10] + ("" if n % 10 == 0 else "-" + ONES[n % 10])
    if n == 100:
        return "one hundred"
    raise ValueError(f"no words for {n}")


OBJECT_PRONOUN = {"she": "her", "he": "him", "they": "them"}
POSSESSIVE = {"she": "her", "he": "his", "they": "their"}


@dataclass
class Draft:
    """One problem being written: its sentences, its steps and every number the text shows."""
    r: random.Random
    sentences: list[str] = field(default_factory=list)
    steps: list[tuple[int, str, int, int]] = field(default_factory=list)
    shown: list[int] = field(default_factory=list)
    ok: bool = True

    def num(self, n: int) -> str:
        """n as the text shows it (digits, words, or digits with a thousands comma), recorded for the id."""
        self.shown.append(n)
        if n <= 100 and self.r.random() < P_WORDS:
            return number_words(n)
        return f"{n:,}" if n >= 1000 and self.r.random() < 0.5 else str(n)

    def calc(self, a: int, op: str, b: int) -> int:
        c, ok = worked_step(a, op, b, MAX_VALUE)
        self.ok &= ok and (op != "/" or b > 1)  # dividing by one is not a step
        self.steps.append((a, op, b, c))
        return c

    def divisor(self, value: int, lo: int, hi: int) -> int:
        """A divisor of value in lo..hi (the problem is redrawn when there is none)."""
        options = [k for k in range(lo, hi + 1) if value % k == 0]
        self.ok &= bool(options)
        return self.r.choice(options) if options else lo

    def step(self, a: int, op: str, b: int, /, *templates: str, shown_as: str = "b", **fields: str) -> int:
        """`a op b` as one worked step, told by one of the templates, where the field `shown_as` shows b."""
        c = self.calc(a, op, b)
        self.say(*templates, **{shown_as: self.num(b)}, **fields)
        return c

    def say(self, *templates: str, **fields: str) -> None:
        """One of the templates, filled in: numbers are rendered once, before the choice, so every
        option shows the same text for them."""
        sentence = self.r.choice(templates).format(**fields)
        self.sentences.append(sentence[0].upper() + sentence[1:])

    def ask(self, *templates: str, **fields: str) -> str:
        return self.r.choice(templates).format(**fields)


def pick_person(r: random.Random, *exclude: str) -> tuple[str, str]:
    return r.choice([p for p in PEOPLE if p[0] not in exclude])


def verb_form(pron: str, verb: str) -> str:
    """'finds' for he/she, 'find' for they."""
    if pron != "they":
        return verb
    return verb[:-2] if verb.endswith("es") and verb[-3] in "sxh" else verb[:-1]


# ---------------------------------------------------------------- scenarios
# Each writes sentences and exactly `n_steps` operations into the draft and returns the question.

def _collection(d: Draft, n_steps: int) -> str:
    """A person's count of things changed by finding, giving, multiplying, sharing."""
    (name, pron), t = pick_person(d.r), d.r.choice(OBJECTS)
    other = pick_person(d.r, name)[0]
    v = {"n": name, "p": pron, "t": t, "o": other, "obj": OBJECT_PRONOUN[pron]}
    v.update({w: verb_form(pron, w) for w in ("finds", "buys", "gives", "loses", "uses", "ends", "shares", "puts")})
    rest = n_steps
    if d.r.random() < 0.35:  # the start is itself a product: k containers of x
        k, x, box = d.r.randint(2, 12), d.r.randint(2, 25), d.r.choice(CONTAINERS)
        value = d.calc(k, "*", x)
        d.say("{n} has {k} {boxes} of {t} with {x} in each {box}.",
              "each {box} holds {x} {t}, and {n} has {k} such {boxes}.",
              k=d.num(k), x=d.num(x), box=box, boxes=box + ("es" if box.endswith("x") else "s"), **v)
        rest -= 1
    else:
        value = d.r.randint(5, 150)
        d.say("{n} has {a} {t}.", "{n} had {a} {t}.", "there are {a} {t} in {n}'s room.",
              "{n} starts with {a} {t}.", a=d.num(value), **v)
    ops = [d.r.choice("+-*") for _ in range(rest)]
    if ops and d.r.random() < 0.3:
        ops[-1] = "/"
    for op in ops:
        if op == "+":
            b = d.r.randint(2, 99)
            value = d.step(value, "+", b, "{p} {finds} {b} more.", "{o} gives {obj} {b} more {t}.",
                           "then {p} {buys} another {b}.", "later, {b} more {t} are added.", **v)
        elif op == "-":
            b = d.r.randint(1, max(1, value))
            value = d.step(value, "-", b, "{p} {gives} {b} of them to {o}.", "{p} {loses} {b} {t}.",
                           "then {b} of the {t} are sold.", "{p} {uses} up {b} of them.", **v)
        elif op == "*":
            k = d.r.choice((2, 2, 3, d.r.randint(4, 6)))
            value = d.calc(value, "*", k)
            if k in (2, 3) and d.r.random() < 0.6:  # "doubles" shows no digit; the 2 is still in the id
                d.shown.append(k)
                d.say("then the number of {t} {w}.", w={2: "doubles", 3: "triples"}[k], **v)
            else:
                d.say("then {p} {ends} up with {k} times as many.",
                      "after a trade {n} has {k} times as many {t} as before.", k=d.num(k), **v)
        else:
            k = d.divisor(value, 2, 12)
            value = d.calc(value, "/", k)
            if d.r.random() < 0.5:
                d.say("{p} {shares} them equally among {k} friends.", k=d.num(k), **v)
                return d.ask("how many {t} does each friend get?", **v)
            d.say("{p} {puts} them into {k} bags with the same number in each.", k=d.num(k), **v)
            return d.ask("how many {t} are in each bag?", **v)
    return d.ask("how many {t} does {n} have now?", "how many {t} does {n} have at the end?",
                 "what is the number of {t} {n} has now?", **v)


def _shopping(d: Draft, n_steps: int) -> str:
    """Prices times quantities, a second item, then change from a bill, money left, or a split bill."""
    name, pron = pick_person(d.r)
    (one, many), (one2, many2) = d.r.sample(GOODS, 2)
    v = {"n": name, "p": pron, "one": one, "many": many, "one2": one2, "many2": many2}
    v.update({w: verb_form(pron, w) for w in ("buys", "adds", "pays", "hands")})
    q, p = d.r.randint(2, 9), d.r.randint(2, 40)
    total = d.calc(q, "*", p)
    d.say("{n} buys {q} {many} at ${price} each.", "{n} buys {q} {many} for {price} dollars each.",
          "each {one} costs ${price}, and {n} buys {q} of them.", "{n} orders {q} {many} that cost {price} dollars apiece.",
          q=d.num(q), price=d.num(p), **v)
    second = n_steps == 3 and d.r.random() < 0.5 or n_steps == 2 and d.r.random() < 0.4
    if second:  # one more step: a fixed-price item
        c = d.r.randint(3, 60)
        total = d.step(total, "+", c, "{p} also {buys} a {one2} for ${c}.", "delivery costs {c} dollars more.",
                       shown_as="c", **v)
    elif n_steps == 3 and d.r.random() < 0.5:  # two more steps: another quantity at a price, then the sum
        q2, p2 = d.r.randint(2, 9), d.r.randint(2, 40)
        total = d.calc(total, "+", d.calc(q2, "*", p2))
        d.say("{p} also {buys} {q2} {many2} at ${p2} each.", "then {p} {adds} {q2} {many2} for {p2} dollars each.",
              q2=d.num(q2), p2=d.num(p2), **v)
    if len(d.steps) == n_steps:
        return d.ask("how many dollars does {n} spend in total?", "what is the total cost, in dollars?",
                     "how much does {n} pay altogether, in dollars?", **v)
    kind = d.r.choice(("change", "budget", "split"))
    if kind == "split":
        k = d.divisor(total, 2, 6)
        d.calc(total, "/", k)
        d.shown.append(k)
        d.say("{n} and {f} friends split the cost equally.", f=d.num(k - 1), **v)
        return d.ask("how many dollars does each person pay?", "how much does each of them pay, in dollars?", **v)
    bill = d.r.choice([b for b in (20, 50, 100, 200, 500) if b >= total] or [total])
    d.calc(bill, "-", total)
    if kind == "change":
        d.say("{p} {pays} with a ${b} bill.", "{p} {hands} over {b} dollars.", b=d.num(bill), **v)
        return d.ask("how much change does {n} get, in dollars?", "how many dollars of change does {n} get back?", **v)
    d.say("{n} had {b} dollars before shopping.", b=d.num(bill), **v)
    d.sentences.insert(0, d.sentences.pop())
    return d.ask("how many dollars does {n} have left?", "how much money is left, in dollars?", **v)


def _rate(d: Draft, n_steps: int) -> str:
    """A rate times a time, then something thrown away or added, then packed into equal groups."""
    if d.r.random() < 0.5:
        (name, pron), (verb, unit, per, pers) = pick_person(d.r), d.r.choice(RATES)
        subject, verb = name, verb_form(pron, verb)
    else:
        subject, verb, unit = d.r.choice(MACHINES)
        subject = subject[0].lower() + subject[1:]  # say() capitalises a sentence's first letter
        per, pers = d.r.choice((("hour", "hours"), ("minute", "minutes")))
    v = {"s": subject, "verb": verb, "u": unit, "per": per, "pers": pers, "a": "an" if per == "hour" else "a"}
    rate, hours = d.r.randint(2, 60), d.r.randint(2, 12)
    whole_first = n_steps == 2 and d.r.random() < 0.35  # "T to do; r a day for d days; how many left?"
    if whole_first:
        whole = d.r.randint(100, 999)
        d.say("there are {w} {u} to get through.", w=d.num(whole), **v)
    done = d.calc(rate, "*", hours)
    d.say("{s} {verb} {r} {u} every {per} for {h} {pers}.", "{s} {verb} {r} {u} {a} {per}, for {h} {pers} in a row.",
          "for {h} {pers}, {s} {verb} {r} {u} each {per}.", r=d.num(rate), h=d.num(hours), **v)
    if whole_first:
        d.calc(whole, "-", done)
        return d.ask("how many {u} are still left?", "how many {u} remain?", **v)
    ask_total = ("how many {u} is that in total?", "what is the total number of {u}?")
    if n_steps >= 2:
        if d.r.random() < 0.5:
            ask_total = ("how many {u} are left?", "how many {u} count in the end?")
            b = d.r.randint(1, done)
            done = d.step(done, "-", b, "then {b} of the {u} are thrown away.",
                          "{b} {u} turn out to be faulty and do not count.", **v)
        else:
            b = d.r.randint(2, 99)
            done = d.step(done, "+", b, "after that, {b} more {u} are done.",
                          "in a final burst, {b} extra {u} are added.", **v)
    if n_steps == 3:
        k = d.divisor(done, 2, 10)
        d.step(done, "/", k, "they are split equally into {k} groups.", shown_as="k")
        return d.ask("how many {u} are in each group?", **v)
    return d.ask(*ask_total, **v)


def _comparison(d: Draft, n_steps: int) -> str:
    """One person's count given relative to another's, their total, and what they give away."""
    (name, pron), t = pick_person(d.r), d.r.choice(OBJECTS)
    other, _ = pick_person(d.r, name)  # the other's pronoun is not needed
    v = {"n": name, "o": other, "t": t}
    a = d.r.randint(4, 120)
    d.say("{n} has {a} {t}.", a=d.num(a), **v)
    how = d.r.choice(("more", "fewer", "times", "half"))
    if how == "half" and a % 2 == 0:
        b = d.calc(a, "/", 2)
        d.shown.append(2)
        d.say("{o} has half as many {t} as {n}.", **v)
    elif how in ("times", "half"):
        k = d.r.randint(2, 5)
        b = d.step(a, "*", k, "{o} has {k} times as many {t} as {n}.", "{o} has {k} times as many.", shown_as="k", **v)
    else:
        k = d.r.randint(1, 40 if how == "more" else a)
        b = d.calc(a, "+" if how == "more" else "-", k)
        d.say("{o} has {k} {how} {t} than {n}.", k=d.num(k), how=how, **v)
    if n_steps == 1:
        return d.ask("how many {t} does {o} have?", "what is the number of {t} {o} has?", **v)
    total = d.calc(a, "+", b)
    if n_steps == 2:
        return d.ask("how many {t} do they have together?", "how many {t} do {n} and {o} have in all?", **v)
    c = d.r.randint(1, total)
    d.step(total, "-", c, "together they give {c} {t} to a school.", shown_as="c", **v)
    return d.ask("how many {t} do they have left between them?", **v)


def _measure(d: Draft, n_steps: int) -> str:
    """An amount of liquid, rice or ribbon: used, refilled, then cut or poured into equal parts."""
    box, unit = d.r.choice(MEASURES)
    short = unit.split(" ")[0]
    v = {"box": box, "unit": unit, "short": short}
    amount = d.r.randint(50, 1500)
    d.say("a {box} holds {a} {unit}.", "there are {a} {unit} in a {box}.", a=d.num(amount), **v)
    ops = [d.r.choice("+--") for _ in range(n_steps)]
    if d.r.random() < 0.4:
        ops[-1] = "/"
    for op, day in zip(ops, ("on Monday", "on Tuesday", "on Wednesday")):
        if op == "-":
            b = d.r.randint(1, max(1, amount // 2))
            amount = d.step(amount, "-", b, "{day}, {b} {short} are used.", "{b} {short} are taken out {day}.",
                            day=day, **v)
        elif op == "+":
            b = d.r.randint(5, 300)
            amount = d.step(amount, "+", b, "{day}, {b} {short} are added.",
                            "{day} the {box} is topped up with {b} {short}.", day=day, **v)
        else:
            k = d.divisor(amount, 2, 12)
            amount = d.step(amount, "/", k, "what is left is divided equally into {k} parts.", shown_as="k")
            return d.ask("how many {short} are in each part?", **v)
    return d.ask("how many {short} are left?", "how many {short} does the {box} hold now?", **v)


def _ages(d: Draft, n_steps: int) -> str:
    """Ages given relative to each other, some years from now or ago."""
    (name, _), (other, _), (third, _) = d.r.sample(PEOPLE, 3)
    v = {"n": name, "o": other, "x": third}
    a = d.r.randint(3, 50)
    d.say("{n} is {a} years old.", a=d.num(a), **v)
    if d.r.random() < 0.4:
        k = d.r.randint(2, 4)
        b = d.step(a, "*", k, "{o} is {k} times as old as {n}.", shown_as="k", **v)
    else:
        k = d.r.randint(1, 30)
        older = d.r.random() < 0.6 or k >= a
        b = d.calc(a, "+" if older else "-", k)
        d.say("{o} is {k} years {rel} than {n}.", k=d.num(k), rel="older" if older else "younger", **v)
    if n_steps == 1:
        return d.ask("how old is {o}?", **v)
    if n_steps == 3:
        m = d.r.randint(1, max(1, b - 1))
        b = d.step(b, "-", m, "{x} is {m} years younger than {o}.", shown_as="m", **v)
        v["o"] = third
    c = d.r.randint(1, 20)
    later = d.r.random() < 0.6 or c > b
    d.calc(b, "+" if later else "-", c)
    if later:
        return d.ask("how old will {o} be in {c} years?", c=d.num(c), **v)
    return d.ask("how old was {o} {c} years ago?", c=d.num(c), **v)


# (larger unit, smaller unit, how many smaller in one larger): the factor is known, not shown
CONVERSIONS = (("weeks", "days", 7), ("hours", "minutes", 60), ("days", "hours", 24), ("dollars", "cents", 100),
               ("dozens", "eggs", 12), ("kilograms", "grams", 1000), ("metres", "centimetres", 100),
               ("years", "months", 12), ("minutes", "seconds", 60))


def _convert(d: Draft, n_steps: int) -> str:
    """A unit conversion whose factor the text never states (days in a week), alone or after a sum."""
    big, small, factor = d.r.choice(CONVERSIONS)
    name = pick_person(d.r)[0]
    v = {"n": name, "big": big, "small": small}
    d.shown.append(factor)  # not in the text, but it tells two unit pairs apart in the id
    if d.r.random() < 0.5:  # larger to smaller: multiply, then perhaps add the leftover smaller units
        a = d.r.randint(2, max(2, min(30, 1999 // factor)))
        value = d.calc(a, "*", factor)
        if n_steps == 1:
            d.say("{n} has {a} {big}.", "the amount is {a} {big}.", "it comes to {a} {big}.", a=d.num(a), **v)
            return d.ask("how many {small} is that?", "what is that in {small}?", **v)
        extra = d.r.randint(1, factor - 1)
        d.calc(value, "+", extra)
        d.say("it comes to {a} {big} and {e} {small}.", "{n} has {a} {big} and another {e} {small}.",
              a=d.num(a), e=d.num(extra), **v)
        return d.ask("how many {small} is that altogether?", "what is the total in {small}?", **v)
    # smaller to larger: divide, perhaps after adding two amounts
    whole = d.r.randint(2, max(2, min(30, 1999 // factor)))
    if n_steps == 1:
        d.calc(whole * factor, "/", factor)
        return d.ask("how many {big} are there in {x} {small}?", "{x} {small} make how many {big}?",
                     x=d.num(whole * factor), **v)
    first = d.r.randint(1, whole * factor - 1)
    d.calc(d.calc(first, "+", whole * factor - first), "/", factor)
    d.say("{n} has {x} {small}, and then {y} more {small}.", "first there are {x} {small}, then {y} more.",
          x=d.num(first), y=d.num(whole * factor - first), **v)
    return d.ask("how many {big} is that in all?", "what is the total, in {big}?", **v)


SCENARIOS: dict[str, Callable[[Draft, int], str]] = {
    "collection": _collection, "shopping": _shopping, "rate": _rate, "comparison": _comparison,
    "measure": _measure, "ages": _ages,
}
# Scenarios added after the benchmarks were drawn: only the families listed in arithmetic.COMPOSED_SCENARIOS
# ("extended", "everyday") use them, so "broad" (and every stored held-out set drawn from it) stays as it was.
EXTRA_SCENARIOS: dict[str, Callable[[Draft, int], str]] = {"convert": _convert}


def _distractor(d: Draft) -> str:
    """A sentence whose number plays no part in the answer."""
    name, x = pick_person(d.r)[0], d.r.randint(2, 60)
    template = d.r.choice(("{n} is {x} years old.", "the shop opens at {h} o'clock.", "it is a {x}-minute walk from home.",
                           "{n} also owns {x} {t}."))
    fields = {"n": name, "t": d.r.choice(OBJECTS)}
    fields["h" if "{h}" in template else "x"] = d.num(x % 12 + 1 if "{h}" in template else x)
    sentence = template.format(**fields)
    return sentence[0].upper() + sentence[1:]


@dataclass(frozen=True)
class Written:
    scenario: str
    question: str
    steps: tuple[tuple[int, str, int, int], ...]
    shown: tuple[int, ...]  # every number of the text, in the order they were drawn


def write_problem(r: random.Random, n_steps: int,
                  scenarios: Mapping[str, Callable[[Draft, int], str]] = SCENARIOS) -> Written | None:
    """One problem of n_steps operations from one of `scenarios`, or None when the drawn numbers break a rule
    (the caller redraws)."""
    name = r.choice(sorted(scenarios))
    d = Draft(r)
    ask = scenarios[name](d, n_steps)
    if not d.ok or len(d.steps) != n_steps:
        return None
    ask = ask[0].upper() + ask[1:]
    if r.random() < P_DISTRACTOR:
        d.sentences.insert(r.randint(min(1, len(d.sentences)), len(d.sentences)), _distractor(d))
    story = " ".join(d.sentences)
    question = (f"{ask} {story}" if r.random() < P_QUESTION_FIRST else f"{story} {ask}").strip()
    return Written(name, question, tuple(d.steps), tuple(d.shown))
