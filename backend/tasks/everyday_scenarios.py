"""Scenarios of the "everyday" family: plan shapes the broad family lacks.

A miss analysis of the arithmetic adapter on problems in everyday wording found plans that stop a step
short or pick the wrong operation when the text (a) states several quantities in one sentence, (b) takes a
fraction or percentage "of them", (c) describes a level that rises and falls, or (d) shares something out
and then changes each share. The broad family's scenarios never say things that way, so these add them.
Each scenario writes exactly `n_steps` operations into the draft and returns the question, like the ones
in word_problems.
"""
from __future__ import annotations

from collections.abc import Callable

from backend.tasks.word_problems import OBJECT_PRONOUN, OBJECTS, POSSESSIVE, Draft, pick_person, verb_form

# (past tense, plain form, what is counted): "Ava read 27 pages"
TALLY_ACTIONS = (("read", "read", "pages"), ("ran", "run", "kilometres"), ("picked", "pick", "apples"),
                 ("sold", "sell", "tickets"), ("scored", "score", "points"), ("collected", "collect", "shells"),
                 ("baked", "bake", "muffins"), ("earned", "earn", "dollars"), ("wrote", "write", "emails"),
                 ("planted", "plant", "trees"), ("swam", "swim", "lengths"), ("packed", "pack", "boxes"))
TALLY_PARTS = (("on Monday", "on Tuesday", "on Wednesday"), ("in the morning", "in the afternoon", "in the evening"),
               ("in the first round", "in the second round", "in the final round"),
               ("in March", "in April", "in May"), ("last week", "this week", "next week"))

# (what changes, its unit, the word for going up, for going down, moments in order, start range, largest change)
LEVELS = (("the temperature", "degrees", ("rose", "went up", "climbed"), ("fell", "dropped", "went down"),
           ("at dawn", "by noon", "by the afternoon", "at night"), (2, 30), 15),
          ("the price of a jacket", "dollars", ("went up", "was raised", "rose"), ("was cut", "went down", "dropped"),
           ("in January", "in February", "in March", "in April"), (20, 400), 90),
          ("the team's score", "points", ("went up", "grew", "increased"), ("went down", "fell", "was reduced"),
           ("after the first game", "after the second game", "after the third game", "after the last game"),
           (10, 300), 60),
          ("the water in the tank", "litres", ("went up", "rose", "increased"), ("went down", "dropped", "fell"),
           ("on Sunday", "on Monday", "on Tuesday", "on Wednesday"), (50, 900), 200),
          ("the plant", "centimetres tall", ("grew", "grew", "shot up"), ("was cut back", "was trimmed", "lost"),
           ("in spring", "by summer", "by autumn", "by winter"), (5, 120), 40))

# (fraction words, divisor); percentages are written from the divisor: 100 / k
FRACTIONS = (("half", 2), ("a third", 3), ("a quarter", 4), ("a fifth", 5), ("a tenth", 10))
PERCENTS = ((50, 2), (25, 4), (20, 5), (10, 10))

# (who receives, one of them, what they do with their share: taking away, adding)
SHARERS = (("children", "child", "eats", "is given"), ("friends", "friend", "gives away", "finds"),
           ("teams", "team", "loses", "wins"), ("classes", "class", "uses", "gets"))


def _tally(d: Draft, n_steps: int) -> str:
    """Two or three amounts in one sentence, summed; then perhaps a loss or the same again for k weeks."""
    name, pron = pick_person(d.r)
    past, plain, unit = d.r.choice(TALLY_ACTIONS)
    parts = d.r.choice(TALLY_PARTS)
    v = {"n": name, "p": pron, "past": past, "plain": plain, "u": unit}
    n_parts = 3 if n_steps >= 2 and d.r.random() < 0.4 else 2
    amounts = [d.r.randint(3, 120) for _ in range(n_parts)]
    shown = [d.num(a) for a in amounts]
    if n_parts == 2:
        d.say("{n} {past} {a} {u} {p1} and {b} {p2}.", "{n} {past} {a} {u} {p1} and {b} more {p2}.",
              "{p1}, {n} {past} {a} {u}, and {p2} {pron} {past} {b}.", a=shown[0], b=shown[1], p1=parts[0],
              p2=parts[1], pron=pron, **v)
    else:
        d.say("{n} {past} {a} {u} {p1}, {b} {p2} and {c} {p3}.", a=shown[0], b=shown[1], c=shown[2],
              p1=parts[0], p2=parts[1], p3=parts[2], **v)
    total = d.calc(amounts[0], "+", amounts[1])
    if n_parts == 3:
        total = d.calc(total, "+", amounts[2])
    if len(d.steps) == n_steps:
        return d.ask("how many {u} did {n} {plain} in total?", "how many {u} is that altogether?",
                     "what is the total number of {u}?", **v)
    if d.r.random() < 0.5 and unit != "dollars":
        k = d.r.randint(2, 8)
        d.step(total, "*", k, "{p} did the same every week for {k} weeks.", shown_as="k", **v)
        return d.ask("how many {u} did {n} {plain} in those {k} weeks?", k=str(k), **v)
    c = d.r.randint(1, total)
    d.step(total, "-", c, "{c} of the {u} did not count.", "later, {c} of them were taken off the total.",
           shown_as="c", **v)
    return d.ask("how many {u} are left?", "how many {u} count in the end?", **v)


def _level(d: Draft, n_steps: int) -> str:
    """A level given at one moment that rises, falls, doubles or halves by the next ones."""
    thing, unit, ups, downs, moments, (lo, hi), most = d.r.choice(LEVELS)
    short = unit.split(" ")[0]  # "centimetres tall" -> "centimetres" after a number of them
    value = d.r.randint(lo, hi)
    d.say("{t} was {a} {u} {m}.", t=thing, a=d.num(value), u=unit, m=moments[0])
    for i in range(n_steps):
        op = d.r.choice("++--*/" if i else "++--")
        moment = moments[i + 1]
        if op == "+":
            b = d.r.randint(1, most)
            value = d.step(value, "+", b, "{m} it {up} by {b} {u}.", "then, {m}, it {up} by {b}.", m=moment,
                           up=d.r.choice(ups), u=short)
        elif op == "-":
            b = d.r.randint(1, max(1, min(most, value - 1)))
            value = d.step(value, "-", b, "{m} it {down} by {b} {u}.", "then, {m}, it {down} by {b}.", m=moment,
                           down=d.r.choice(downs), u=short)
        elif op == "*":
            value = d.calc(value, "*", 2)
            d.shown.append(2)
            d.say("{m} it had doubled.", "{m} it was twice as high.", m=moment)
        else:
            d.ok &= value % 2 == 0
            value = d.calc(value, "/", 2)
            d.shown.append(2)
            d.say("{m} it was only half as much.", "{m} it had halved.", m=moment)
    last = moments[n_steps]
    return d.ask("what was {t} {m}?", "how many {u} was {t} {m}?", t=thing, m=last, u=short)


def _share(d: Draft, n_steps: int) -> str:
    """Things shared out equally, then every share changes; or each of k brings x and some are used."""
    t = d.r.choice(OBJECTS)
    who, one, take, add = d.r.choice(SHARERS)
    v = {"t": t, "who": who, "one": one, "take": take, "add": add}
    if d.r.random() < 0.5:  # divide, then each share changes
        k = d.r.randint(2, 9)
        each = d.r.randint(3, 40)
        value = d.calc(k * each, "/", k)
        d.say("{a} {t} are shared equally among {k} {who}.", "{k} {who} split {a} {t} equally between them.",
              a=d.num(k * each), k=d.num(k), **v)
        for _ in range(n_steps - 1):
            if d.r.random() < 0.5:
                m = d.r.randint(1, max(1, value - 1))
                value = d.step(value, "-", m, "each {one} then {take} {m} of them.",
                               "after that every {one} {take} {m}.", shown_as="m", **v)
            else:
                m = d.r.randint(1, 30)
                value = d.step(value, "+", m, "each {one} then {add} {m} more.",
                               "after that every {one} {add} another {m}.", shown_as="m", **v)
        return d.ask("how many {t} does each {one} have now?", "how many {t} does each {one} end up with?", **v)
    k, each = d.r.randint(2, 12), d.r.randint(2, 30)
    value = d.calc(k, "*", each)
    d.say("each of the {k} {who} brings {x} {t}.", "there are {k} {who}, and each one brings {x} {t}.",
          k=d.num(k), x=d.num(each), **v)
    if n_steps == 1:
        return d.ask("how many {t} are there in all?", "how many {t} are brought altogether?", **v)
    m = d.r.randint(1, value - 1)
    value = d.step(value, "-", m, "{m} of them are used on the first day.", "then {m} of the {t} are lost.",
                   shown_as="m", **v)
    if n_steps == 3:
        j = d.divisor(value, 2, 9)
        d.step(value, "/", j, "the rest are put into {j} equal piles.", shown_as="j", **v)
        return d.ask("how many {t} are in each pile?", **v)
    return d.ask("how many {t} are left?", **v)


def _portion(d: Draft, n_steps: int) -> str:
    """A fraction or percentage "of them" taken away or counted, after perhaps adding some first."""
    (name, pron), t = pick_person(d.r), d.r.choice(OBJECTS)
    other = pick_person(d.r, name)[0]
    v = {"n": name, "p": pron, "o": other, "t": t, "obj": OBJECT_PRONOUN[pron],
         "gives": verb_form(pron, "gives")}
    if d.r.random() < 0.5:
        words, k = d.r.choice(FRACTIONS)
        d.shown.append(k)
        portion = d.r.choice(("{w} of them", "{w} of the {t}", "{w} of {pos} {t}")).format(
            w=words, t=t, pos=POSSESSIVE[pron])
    else:
        percent, k = d.r.choice(PERCENTS)
        d.shown.append(percent)
        portion = d.r.choice(("{q}% of them", "{q}% of the {t}", "{q} percent of them")).format(q=percent, t=t)
    value = k * d.r.randint(2, 600 // k)  # the portion is whole: drawn as a multiple of k
    if n_steps == 3:  # first a gift that keeps it whole
        start = d.r.randint(2, max(2, value // 2))
        d.say("{n} has {a} {t}.", "{n} owns {a} {t}.", a=d.num(start), **v)
        b = value - start
        value = d.step(start, "+", b, "{o} gives {obj} {b} more.", "{p} {buys} {b} more.",
                       buys=verb_form(pron, "buys"), **v)
    else:
        d.say("{n} has {a} {t}.", "{n} owns {a} {t}.", a=d.num(value), **v)
    part = d.calc(value, "/", k)
    if n_steps == 1:
        d.say("{p} {gives} {portion} to {o}.", portion=portion, **v)
        return d.ask("how many {t} does {o} get?", **v)
    d.calc(value, "-", part)
    d.say("{p} {gives} {portion} to {o}.", "{portion} get lost.", portion=portion, **v)
    return d.ask("how many {t} does {n} have left?", "how many {t} are left?", **v)


EVERYDAY_SCENARIOS: dict[str, Callable[[Draft, int], str]] = {
    "tally": _tally, "level": _level, "share": _share, "portion": _portion,
}
