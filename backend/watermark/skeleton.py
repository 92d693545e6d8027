"""The syntactic signature: a function-word / shape skeleton of a sentence.

Every word is mapped to its closed-class category (determiner, pronoun, preposition, conjunction,
auxiliary, modal, negation, wh-word, a few structural adverbs) or, if it is an open-class (content)
word, to `W`; runs of content words collapse into one `W`; numbers become `#`; structural punctuation
is kept. "The old dog slept under a tree." and "The elderly hound rested beneath a tree." share the
skeleton `DET W PREP DET W .` only if the swapped words are content words, which is exactly what a
synonym swap does; changing clause structure (adding "which", "not", a comma) changes it.

Why not a parser: the spaCy/NLTK models are not installable offline from PyPI in this project (NLTK
taggers need a separate data download; spaCy English models are only on PyPI as third-party
mirrors). The skeleton needs no model, is fast, and is identical at generation and detection.
"""
from __future__ import annotations

import re

_CLASSES = {
    "DET": "the a an this that these those some any each every all both either neither another such",
    "PRON": "i you he she it we they me him her us them my your his its our their mine yours hers ours "
            "theirs myself yourself himself herself itself ourselves themselves one someone anyone everyone "
            "something anything everything nothing nobody",
    "PREP": "of in on at by for with about against between into through during before after above below to "
            "from up down over under off out around among across behind beyond along upon onto toward towards "
            "via per since until near without within like than as beneath underneath inside outside throughout "
            "despite except besides past amid",
    "CONJ": "and or but nor so yet because although though while whereas if unless whether once",
    "AUX": "is are was were be been being am have has had having do does did",
    "MOD": "can could will would shall should may might must",
    "NEG": "not never no",
    "WH": "who whom whose which what when where why how",
    "ADV": "there then also very too just only even still already more most less least much many few here",
}
CATEGORY = {word: cls for cls, words in _CLASSES.items() for word in words.split()}
_TOKEN = re.compile(r"[^\W\d_]+(?:['\u2019][^\W\d_]+)*|\d+(?:[.,]\d+)*|[,;:()\"?!.\u2026-]", re.UNICODE)
_KEEP_PUNCT = {",": ",", ";": ";", ":": ":", "(": "(", ")": ")", '"': '"', "?": "?", "!": "!",
               ".": ".", "\u2026": ".", "-": "-"}


def _word_class(word: str) -> list[str]:
    lower = word.lower().replace("\u2019", "'")
    if lower.endswith("n't"):  # don't, can't, won't: auxiliary/modal + negation
        return ["AUX", "NEG"]
    if "'" in lower:
        base = lower.split("'")[0]
        return [CATEGORY.get(base, "W")]
    return [CATEGORY.get(lower, "W")]


def skeleton_tokens(sentence: str) -> list[str]:
    out: list[str] = []
    for token in _TOKEN.findall(sentence):
        if token[0].isdigit():
            classes = ["#"]
        elif token in _KEEP_PUNCT:
            classes = [_KEEP_PUNCT[token]]
        else:
            classes = _word_class(token)
        for cls in classes:
            if cls == "W" and out and out[-1] == "W":
                continue  # a run of content words is one slot
            if cls == "." and out and out[-1] == ".":
                continue
            out.append(cls)
    return out


def skeleton(sentence: str) -> str:
    """The syntactic signature string, e.g. `DET W PREP DET W .`."""
    return " ".join(skeleton_tokens(sentence))
