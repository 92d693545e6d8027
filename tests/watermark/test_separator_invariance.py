"""Issue 55 §1: whitespace, separators, controls and look-alikes do not change a verdict. For a watermarked text of
every method, any of the transformations below, alone or combined, leaves the verdict as it was and p within a factor
of 10 (the largest change is printed: `pytest -s`). A short CJK tail (which switched look-alike folding off for the
whole text) is content, not a disguise: when drawn, it ends the untouched text too."""
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from backend.watermark.generation import make_request, run_generation
from backend.watermark.methods import METHODS, DetectRequest, detect, watermark_names
from backend.watermark.sampling import SamplingConfig
from tests.watermark.test_detection import balanced_text

SAMPLING = SamplingConfig(max_sentences=6, max_sentence_tokens=48, temperature=1.0, seed=3)
GREEK = str.maketrans({"A": "Α", "B": "Β", "E": "Ε", "H": "Η", "I": "Ι", "K": "Κ", "M": "Μ", "N": "Ν", "O": "Ο",
                       "P": "Ρ", "T": "Τ", "X": "Χ", "Y": "Υ", "Z": "Ζ", "o": "ο", "v": "ν", "i": "ι", "u": "υ"})
CYRILLIC = str.maketrans({"a": "а", "c": "с", "e": "е", "o": "о", "p": "р", "x": "х", "y": "у", "i": "і", "s": "ѕ"})


TAIL = " 日本語の文。"


def _cyrillic_words(text: str) -> str:
    """Every word whose letters all have a Cyrillic twin written in Cyrillic."""
    return " ".join(w.translate(CYRILLIC) if w.strip(".,;:!?") and all(c in "acepxyois" for c in w.strip(".,;:!?"))
                    else w for w in text.split(" "))


TRANSFORMATIONS = {
    "spaces -> U+3164": lambda t: t.replace(" ", "\u3164"),
    "spaces -> U+FFA0": lambda t: t.replace(" ", "\uffa0"),
    "spaces -> U+180E": lambda t: t.replace(" ", "\u180e"),
    "U+2028 between sentences": lambda t: t.replace(". ", ".\u2028"),
    "U+2029 between sentences": lambda t: t.replace(". ", ".\u2029"),
    "tabs": lambda t: t.replace(" ", "\t"),
    "newlines": lambda t: t.replace(" ", "\n"),
    "double spaces": lambda t: t.replace(" ", "  "),
    "U+0001 inside words": lambda t: "".join(c + "\x01" if c.isalpha() and i % 2 else c for i, c in enumerate(t)),
    "Greek look-alikes": lambda t: t.translate(GREEK),
    "Cyrillic look-alike words": _cyrillic_words,
    "lunate sigma": lambda t: t.replace("c", "\u03f2").replace("C", "\u03f9"),
}
LARGEST: dict[str, tuple[float, tuple]] = {}


def _marked(name: str, model: int, user: int, handle) -> str:
    if name == "ipmark":  # sentences from the corpus at both levels: flagged without a model (and fast)
        return balanced_text(model, user)[0]
    return run_generation(handle, make_request("Write about the harbour town.", name, model, user, SAMPLING)).text


@pytest.mark.parametrize("name", watermark_names())
def test_no_transformation_changes_the_verdict_or_p_by_more_than_ten_times(name, fixed_secret, writer_handle,
                                                                            identity):
    method = METHODS.get(name)
    model, users = identity
    request = DetectRequest(name, model_address=model, user_address=users[0] if method.identifies_users else 0,
                            handle=writer_handle if method.needs_model_to_detect else None)
    text = _marked(name, model, users[0], writer_handle)
    clean = {tail: detect(text + tail, request) for tail in ("", TAIL)}
    assert clean[""].p_family is not None and clean[""].p_family < 0.05, clean[""].evidence  # it carries its mark

    @settings(max_examples=12)
    @given(st.lists(st.sampled_from(sorted(TRANSFORMATIONS)), min_size=1, max_size=3, unique=True),
           st.sampled_from(("", TAIL)))
    def transformed(chosen, tail):
        attacked = text
        for what in chosen:
            attacked = TRANSFORMATIONS[what](attacked)
        assert attacked != text
        found, before = detect(attacked + tail, request), clean[tail]
        change = abs(math.log10(max(found.p_family, 1e-300)) - math.log10(max(before.p_family, 1e-300)))
        LARGEST[name] = max(LARGEST.get(name, (0.0, ())), (change, (*chosen, *(["CJK tail"] if tail else []))))
        assert found.verdict == before.verdict, (chosen, tail, found.evidence, before.evidence)
        assert change <= 1, (chosen, tail, found.p_family, before.p_family)

    for what in TRANSFORMATIONS:  # each alone, with and without the tail, then hypothesis's combinations
        for tail in ("", TAIL):
            transformed.hypothesis.inner_test([what], tail)
    transformed()
    print(f"\n{name}: p {clean[''].p_family:.3g}; largest change x{10 ** LARGEST[name][0]:.3g} "
          f"under {', '.join(LARGEST[name][1])}")
