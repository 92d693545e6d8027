"""Translation quality: chrF++ (sacrebleu) and the target-language rate (py3langid, offline; ships its model).

The identifier is restricted to a candidate set (the languages of the data plus common European
ones), which makes short sentences far more reliable than open-set identification.
"""
from __future__ import annotations

from functools import lru_cache

import sacrebleu
from py3langid.langid import MODEL_FILE, LanguageIdentifier

DEFAULT_CANDIDATES = ("en", "fr", "de", "es", "it", "pt", "nl")


@lru_cache(maxsize=8)
def _identifier(candidates: tuple[str, ...]) -> LanguageIdentifier:
    ident = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    ident.set_languages([c for c in candidates if c in supported_languages()])
    return ident


@lru_cache(maxsize=1)
def supported_languages() -> frozenset[str]:
    return frozenset(LanguageIdentifier.from_model_file(MODEL_FILE).nb_classes)


def candidates_for(languages: tuple[str, ...]) -> tuple[str, ...]:
    """The default candidates plus any identifiable language of the data set."""
    return tuple(sorted(set(DEFAULT_CANDIDATES) | (set(languages) & supported_languages())))


def identify(text: str, candidates: tuple[str, ...] = DEFAULT_CANDIDATES) -> str:
    """ISO code of the most likely language among the candidates; '' for text without letters ("12:30")."""
    if sum(ch.isalpha() for ch in text) < 2:
        return ""
    return str(_identifier(tuple(sorted(candidates))).classify(text)[0])


def chrf_pp(hypotheses: list[str], references: list[str]) -> float:
    """Corpus chrF++ (character n-grams + word bigrams), 0-100."""
    if not hypotheses:
        return float("nan")
    return float(sacrebleu.CHRF(word_order=2).corpus_score(hypotheses, [references]).score)


def sentence_chrf_pp(hypothesis: str, reference: str) -> float:
    return float(sacrebleu.CHRF(word_order=2).sentence_score(hypothesis, [reference]).score)


def repeated_ngram_share(text: str, n: int = 2) -> float:
    """Degeneration of one output: the share of its word n-grams that repeat an earlier one, 0-1
    ("Le Joue Le Joue" -> 1/3 for bigrams; a sentence without repeats -> 0; fewer than 2 n-grams -> 0)."""
    words = text.split()
    grams = [tuple(words[i:i + n]) for i in range(len(words) - n + 1)]
    if len(grams) < 2:
        return 0.0
    return 1.0 - len(set(grams)) / len(grams)


def degeneration(outputs: list[str] | tuple[str, ...], n: int = 2) -> float:
    """Mean repeated word n-gram share over outputs (0 = no repetition); nan for no outputs."""
    return float(sum(repeated_ngram_share(o, n) for o in outputs) / len(outputs)) if outputs else float("nan")


def gap_recovered(value: float, floor: float, ceiling: float) -> float:
    """(value - floor) / (ceiling - floor): the share of the chrF++ gap between the instruction-free prompt (floor)
    and a prompt that translates (ceiling) that a condition recovers; nan when there is no gap to recover."""
    gap = ceiling - floor
    return float("nan") if not gap > 0 else float((value - floor) / gap)
