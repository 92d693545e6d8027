"""Writes the NAG sample corpora of this project: pool.jsonl, targets.jsonl, heldout.jsonl.

Each document is 2-4 sentences drawn from domain-specific sentence templates with random fillers
(seeded), so the three files are disjoint and reproducible. In the pool, 60% of the documents of 3-4
sentences have one replaced by a sentence of another domain (the label stays their majority domain),
so ranking is not trivially separable:

    .venv/bin/python data/nag/build_samples.py

Domains: science, news, narrative, code, maths. Every line is {"id", "domain", "text"} (the pool also
carries a "quality" score in [0, 1], a length-and-variety heuristic, for the optional quality mix).
"""
from __future__ import annotations

import json
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent

FILL = {
    "organism": ["bacteria", "yeast cells", "frogs", "coral polyps", "sunflowers", "honeybees", "mice", "algae",
                 "tardigrades", "earthworms"],
    "process": ["photosynthesis", "cell division", "protein folding", "nitrogen fixation", "respiration",
                "gene expression", "osmosis", "enzyme catalysis", "DNA replication", "fermentation"],
    "particle": ["electrons", "photons", "neutrons", "ions", "water molecules", "protons", "quarks", "atoms"],
    "quantity": ["temperature", "pressure", "acidity", "salinity", "magnetic field strength", "light intensity",
                 "oxygen concentration", "humidity"],
    "instrument": ["a mass spectrometer", "an electron microscope", "a spectrophotometer", "a particle detector",
                   "a radio telescope", "a gas chromatograph", "an X-ray diffractometer"],
    "city": ["Lisbon", "Nairobi", "Osaka", "Toronto", "Krakow", "Lima", "Melbourne", "Bergen", "Accra", "Denver"],
    "body": ["city council", "national parliament", "transport authority", "central bank", "school board",
             "health ministry", "supreme court", "trade union", "port authority"],
    "topic": ["a new tram line", "rent controls", "a fuel tax", "water rationing", "a stadium project",
              "teacher salaries", "a ban on plastic bags", "flood defences", "hospital funding", "bike lanes"],
    "official": ["the mayor", "the finance minister", "a spokesperson", "the opposition leader", "the governor",
                 "the chief executive", "a union representative", "the police commissioner"],
    "name": ["Mara", "Tobias", "Ines", "Oren", "Lucia", "Felix", "Anya", "Bram", "Nadia", "Theo", "Wren", "Elio"],
    "place": ["the old lighthouse", "her grandmother's orchard", "the frozen harbour", "a crooked attic",
              "the edge of the forest", "the abandoned railway station", "a village by the marsh",
              "the castle kitchens", "a small boat at dawn"],
    "object": ["a brass key", "a torn letter", "a wooden flute", "a silver locket", "a map drawn in ink",
               "a lantern", "a music box", "a faded photograph"],
    "feeling": ["afraid", "curious", "homesick", "restless", "hopeful", "ashamed", "delighted", "uneasy"],
    "func": ["parse_row", "merge_sorted", "count_words", "load_config", "normalize", "flatten", "chunked",
             "retry_request", "moving_average", "dedupe", "read_lines", "to_celsius"],
    "var": ["items", "values", "rows", "tokens", "data", "records", "lines", "numbers", "parts", "keys"],
    "typ": ["list", "dict", "set", "tuple", "str", "int"],
    "n": [str(n) for n in (2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 15, 20, 24, 36, 48)],
    "shape": ["triangle", "rectangle", "circle", "square", "trapezoid", "hexagon", "parallelogram"],
    "mathobj": ["the polynomial", "the sequence", "the matrix", "the function", "the series", "the integral",
                "the equation", "the set of primes"],
}

TEMPLATES = {
    "science": [
        "In the laboratory, researchers measured how {quantity} affects {process} in {organism}.",
        "The experiment used {instrument} to track {particle} during {process}.",
        "{process} in {organism} slows down sharply when the {quantity} drops below a critical value.",
        "A control group of {organism} was kept at constant {quantity} to isolate the effect.",
        "The data suggest that {particle} carry energy between the membranes during {process}.",
        "Peer reviewers asked whether the measurements from {instrument} were calibrated correctly.",
        "The hypothesis predicts that raising the {quantity} will double the rate of {process}.",
        "Samples of {organism} were stained and examined with {instrument} after {n} hours.",
        "Repeated trials showed a statistically significant change in {quantity}, with p below 0.01.",
        "These results refine the current model of {process} and its dependence on {particle}.",
    ],
    "news": [
        "The {body} of {city} voted on Tuesday to approve {topic}, after weeks of debate.",
        "Speaking to reporters, {official} said the decision on {topic} would take effect next month.",
        "Protesters gathered outside the {body} in {city} to oppose {topic}.",
        "Critics argue that {topic} will cost taxpayers in {city} millions over the next {n} years.",
        "{official} of {city} resigned on Friday amid questions about {topic}.",
        "A poll published this week found that most residents of {city} support {topic}.",
        "The {body} will hold a second hearing on {topic} before the end of the year.",
        "Officials in {city} confirmed that {n} people were affected by the delays.",
        "Opposition parties called the plan for {topic} rushed and poorly explained.",
        "Markets reacted calmly after {official} announced new measures on {topic}.",
    ],
    "narrative": [
        "{name} found {object} hidden beneath the floorboards of {place}.",
        "When the storm came, {name} felt {feeling} and ran towards {place}.",
        "Nobody in the village knew why {name} kept {object} wrapped in cloth.",
        "Years later, {name} would return to {place}, still {feeling} about that night.",
        "\"Don't open it,\" whispered {name}, holding {object} close to her chest.",
        "The wind carried the smell of rain across {place} as {name} waited.",
        "{name} had never been so {feeling}; the door at {place} was already open.",
        "Once upon a time, {name} lived near {place} with nothing but {object}.",
        "At midnight {name} heard footsteps, and the candle flickered out.",
        "She smiled at last, because {object} had finally led her home.",
    ],
    "code": [
        "def {func}({var}):\n    result = []\n    for item in {var}:\n        result.append(item)\n    return result",
        "def {func}({var}: {typ}, size: int = {n}) -> {typ}:\n    return {var}[:size]",
        "for i in range(len({var})):\n    if {var}[i] is None:\n        continue\n    total += {var}[i]",
        "import json\n\nwith open(path) as handle:\n    {var} = json.load(handle)",
        "class {func}_cache:\n    def __init__(self):\n        self.{var} = {{}}\n\n    def get(self, key):\n"
        "        return self.{var}.get(key)",
        "assert {func}([]) == []\nassert len({func}(range({n}))) == {n}",
        "{var} = sorted({var}, key=lambda x: x[1], reverse=True)\nprint({var}[:{n}])",
        "try:\n    value = int(text)\nexcept ValueError:\n    raise SystemExit('not a number')",
        "if __name__ == '__main__':\n    {func}(sys.argv[1:])",
        "counts = {{}}\nfor word in {var}:\n    counts[word] = counts.get(word, 0) + 1",
    ],
    "maths": [
        "Let x be a real number such that {n}x + 3 = 2x + {n}. Solve for x.",
        "The area of a {shape} with side length {n} can be computed from its height and base.",
        "Prove that {mathobj} converges when every term is bounded by 1/n^2.",
        "If a {shape} has perimeter {n} centimetres, find the length of each side.",
        "Consider {mathobj} defined by a_1 = 1 and a_(n+1) = a_n + {n}.",
        "By induction on n, the sum 1 + 2 + ... + n equals n(n+1)/2.",
        "The derivative of x^{n} is {n}x^({n}-1), so the slope at x = 1 is {n}.",
        "Suppose {mathobj} is continuous on [0, {n}]; then it attains a maximum.",
        "The probability of rolling a total of {n} with two fair dice is a rational number.",
        "Therefore the determinant of {mathobj} is zero and the system has no unique solution.",
    ],
}


def quality(text: str) -> float:
    """A toy quality score in [0, 1]: longer and lexically more varied documents score higher."""
    words = text.split()
    return round(min(1.0, len(words) / 60) * 0.5 + 0.5 * len(set(words)) / max(len(words), 1), 3)


def document(domain: str, rng: random.Random, mixed: float = 0.0) -> str:
    """2-4 sentences of `domain`; with probability `mixed` one of them comes from another domain (harder pools)."""
    templates = rng.sample(TEMPLATES[domain], rng.randint(2, 4))
    if len(templates) >= 3 and rng.random() < mixed:  # the label stays the majority domain
        other = rng.choice([d for d in TEMPLATES if d != domain])
        templates[rng.randrange(len(templates))] = rng.choice(TEMPLATES[other])
    sentences = [t.format(**{k: rng.choice(v) for k, v in FILL.items()}) for t in templates]
    return ("\n\n" if domain == "code" else " ").join(sentences)


def build(per_domain: int, seed: int, prefix: str, seen: set[str], with_quality: bool = False,
          mixed: float = 0.0) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for domain in TEMPLATES:
        count = 0
        while count < per_domain:
            text = document(domain, rng, mixed)
            if text in seen:
                continue
            seen.add(text)
            count += 1
            row = {"id": f"{prefix}-{domain}-{count:03d}", "domain": domain, "text": text}
            if with_quality:
                row["quality"] = quality(text)
            rows.append(row)
    return rows


def write(name: str, rows: list[dict]) -> None:
    with open(HERE / name, "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def main() -> None:
    seen: set[str] = set()
    pool = build(50, seed=7, prefix="pool", seen=seen, with_quality=True, mixed=0.6)
    random.Random(11).shuffle(pool)  # interleave domains, so no ranking can profit from file order
    write("pool.jsonl", pool)
    write("targets.jsonl", build(8, seed=23, prefix="target", seen=seen))
    write("heldout.jsonl", build(6, seed=42, prefix="heldout", seen=seen))


if __name__ == "__main__":
    main()
