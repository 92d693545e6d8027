"""An invisible character or a look-alike letter cannot hide a watermark: every method reads the text as
backend.watermark.methods.detect normalises it, and the Detection counts what was removed and folded."""
import pytest

from backend.watermark.corpus import human_texts
from backend.watermark.generation import make_request, run_generation
from backend.watermark.methods import METHODS, WATERMARKED, DetectRequest, detect, watermark_names
from backend.watermark.sampling import SamplingConfig
from tests.watermark.test_detection import balanced_text

ZWSP = "\u200b"
# the attacker's table: Latin letters replaced by Cyrillic and Greek twins, and fullwidth capitals
LOOK_ALIKES = str.maketrans({"a": "а", "e": "е", "o": "о", "c": "с", "p": "р", "x": "х", "y": "у", "i": "і",
                             "A": "Α", "T": "Т", "H": "Н", "M": "Μ", "I": "Ｉ", "S": "Ｓ"})


def zero_width(text: str) -> str:
    """A zero-width space between every two characters: looks identical, tokenises into nothing alike."""
    return ZWSP.join(text)


def look_alike(text: str) -> str:
    return text.translate(LOOK_ALIKES)


# Issue 46 §3: the classes a list of format characters missed, each alone (every one defeated one to four methods)
ROMAN = str.maketrans({"i": "\u2170", "v": "\u2174", "x": "\u2179", "l": "\u217c", "c": "\u217d", "d": "\u217e",
                       "m": "\u217f", "I": "\u2160", "V": "\u2164", "X": "\u2169", "L": "\u216c", "C": "\u216d"})
ARMENIAN = str.maketrans({"o": "\u0585", "u": "\u057d", "h": "\u0570", "n": "\u0578", "g": "\u0581", "q": "\u0566",
                          "O": "\u0555", "S": "\u054f", "U": "\u054d"})


def _inside_words(mark: str):
    return lambda text: "".join(c + mark if c.isalpha() and i % 3 == 1 else c for i, c in enumerate(text))


def _math_bold(text: str) -> str:
    return "".join(chr(0x1D400 + ord(c) - 65) if "A" <= c <= "Z" else chr(0x1D41A + ord(c) - 97) if "a" <= c <= "z"
                   else c for c in text)


CLASSES = {
    "U+FE0F variation selector inside words": _inside_words("\ufe0f"),
    "U+034F combining grapheme joiner": _inside_words("\u034f"),
    "U+3164 Hangul filler": _inside_words("\u3164"),
    "NBSP for every space": lambda text: text.replace(" ", "\u00a0"),
    "U+2009 thin space for every space": lambda text: text.replace(" ", "\u2009"),
    "mathematical bold letters": _math_bold,
    "Roman-numeral letters": lambda text: text.translate(ROMAN),
    "Armenian look-alikes": lambda text: text.translate(ARMENIAN),
}


def _request(name: str, model: int, user: int, handle) -> DetectRequest:
    method = METHODS.get(name)
    return DetectRequest(name, model_address=model, user_address=user if method.identifies_users else 0,
                         handle=handle if method.needs_model_to_detect else None)


def _same(a, b) -> None:
    assert (a.verdict, a.model_address, a.user_address, a.score, a.z, a.p_value) == \
        (b.verdict, b.model_address, b.user_address, b.score, b.z, b.p_value)


def test_ipmark_marked_text_keeps_its_verdict_through_zero_width_spaces_and_look_alikes(fixed_secret, identity):
    model, users = identity
    text, _ = balanced_text(model, users[1])
    clean = detect(text, DetectRequest("ipmark"))
    assert clean.verdict == WATERMARKED and clean.removed_characters == clean.folded_characters == 0
    hidden = detect(zero_width(text), DetectRequest("ipmark"))
    _same(hidden, clean)
    assert hidden.removed_characters == len(text) - 1 and hidden.folded_characters == 0
    assert hidden.normalisation == f"{len(text) - 1:,} invisible characters removed"
    disguised = look_alike(text)
    assert disguised != text
    folded = detect(disguised, DetectRequest("ipmark"))
    _same(folded, clean)
    assert folded.folded_characters == sum(a != b for a, b in zip(text, disguised)) > 0
    both = detect(zero_width(disguised), DetectRequest("ipmark"))
    _same(both, clean)
    assert both.to_json()["removed_characters"] == len(text) - 1


def test_kgw_marked_text_keeps_its_verdict_through_zero_width_spaces_and_look_alikes(fixed_secret, writer_handle,
                                                                                     identity):
    model, users = identity
    sampling = SamplingConfig(max_sentences=10, max_sentence_tokens=48, temperature=1.0, seed=3)
    marked = run_generation(writer_handle, make_request("Write about the harbour town.", "kgw", model, users[0],
                                                        sampling)).text
    request = _request("kgw", model, users[0], writer_handle)
    clean = detect(marked, request)
    assert clean.verdict == WATERMARKED, clean.evidence
    for attacked in (zero_width(marked), look_alike(marked), zero_width(look_alike(marked)),
                     *(attack(marked) for attack in CLASSES.values())):
        found = detect(attacked, request)
        _same(found, clean)
        assert found.removed_characters + found.folded_characters > 0


@pytest.mark.parametrize("name", watermark_names())
def test_every_method_reads_the_normalised_text(name, writer_handle, identity):
    """Whatever the method, an attacked text scores exactly as its clean original (one normalisation for all)."""
    model, users = identity
    text = human_texts()[1]
    request = _request(name, model, users[0], writer_handle)
    clean = detect(text, request)
    for attacked in (zero_width(text), look_alike(text)):
        _same(detect(attacked, request), clean)
    for what, attack in CLASSES.items():
        attacked = attack(text)
        assert attacked != text, what
        found = detect(attacked, request)
        _same(found, clean)
        assert found.normalisation, what  # the page says what was changed


def test_the_prompt_is_normalised_like_the_text(fixed_secret, identity):
    model, users = identity
    text, _ = balanced_text(model, users[0])
    prompt = "Tell me about the harbour."
    plain = detect(f"{prompt} {text}", DetectRequest("ipmark", prompt=prompt))
    disguised = detect(zero_width(f"{prompt} {text}"), DetectRequest("ipmark", prompt=look_alike(prompt)))
    _same(disguised, plain)
