"""The watermark code each verb's result depends on, grouped by what it does: the `reads` of the watermark verbs,
from which their code versions are derived (backend.verbs). A text written with a method depends on the sentence
loop and on every method's sampling hook with what the hook calls; a verdict on every method's detection code.

Imported as modules (`import a.b as c`, never `from backend.watermark import c`): the package's __init__ imports
the verbs, so reading its namespace here would be an import cycle.
"""
from __future__ import annotations

from typing import Any

# First, and in the order backend.features lists them: importing a method module registers its method, and the
# package's __init__ reaches this module before `load_all` does, so this order is the one pages, the CLI and the
# evaluation list the methods in (tests/watermark/test_verbs.py holds it).
import backend.watermark.ipmark.method as ipmark_method
import backend.watermark.kgw.method as kgw_method
import backend.watermark.hf_kgw.method as hf_kgw_method
import backend.watermark.synthid.method as synthid_method

import backend.unicode_text as unicode_text
import backend.watermark.corpus as corpus
import backend.watermark.hf_kgw.config as hf_kgw_config
import backend.watermark.hf_kgw.detect as hf_kgw_detect
import backend.watermark.ipmark.detect as ipmark_detect
import backend.watermark.ipmark.embed as ipmark_embed
import backend.watermark.keys as keys
import backend.watermark.kgw.detect as kgw_detect
import backend.watermark.kgw.greenlist as kgw_greenlist
import backend.watermark.library as library
import backend.watermark.methods as methods
import backend.watermark.retrieval as retrieval
import backend.watermark.sampling as sampling
import backend.watermark.scoring as scoring
import backend.watermark.segment as segment
import backend.watermark.signatures as signatures
import backend.watermark.skeleton as skeleton
import backend.watermark.stats as stats
import backend.watermark.synthid.config as synthid_config
import backend.watermark.synthid.detect as synthid_detect


def code_of(*parts: Any) -> tuple[Any, ...]:
    """The parts without repeats, in order: groups overlap, and each part needs to count once."""
    return tuple(dict.fromkeys(parts))


# The sentence loop every method samples through (candidates, sentence ends, the context rule).
SENTENCE_LOOP = code_of(sampling, segment)
# IPMark's keyed choice among a sentence's candidates: its keys, the sentences' signatures and their keyed bits.
IPMARK_CHOICE = code_of(ipmark_embed, keys, signatures, skeleton, scoring, segment)
# A text written with any registered method: the loop and each method's sampling hook (processors, chooser).
WRITING = code_of(*SENTENCE_LOOP, methods.SamplingHook, ipmark_method, *IPMARK_CHOICE, kgw_method, kgw_detect,
                  kgw_greenlist, hf_kgw_method, hf_kgw_config, synthid_method, synthid_config, library)
# A verdict of any registered method on a text: the common detection (normalisation, the Detection summary) and
# each method's statistic and identity search.
DETECTION = code_of(unicode_text, methods, retrieval, stats, ipmark_method, ipmark_detect, *IPMARK_CHOICE,
                    kgw_method, kgw_detect, kgw_greenlist, hf_kgw_method, hf_kgw_detect, hf_kgw_config,
                    synthid_method, synthid_detect, synthid_config, library)
# The shipped prompts and human-written texts (their loader: the texts themselves are data files).
CORPUS = (corpus,)
