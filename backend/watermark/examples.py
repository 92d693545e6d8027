"""The shipped example texts as a verb ("watermark example"): a text marked by one registered method with the demo
identity's keys (or, for a method keyed by its settings alone, its default public keys), or the human-written one.

`scripts/watermark_examples.py` runs it with the embedded model in a private store and exports the results as
reference artifacts (data/reference/watermark_examples.jsonl.gz); `demo.examples()` reads them back. A marked
example needs the demo identity in the registry (`demo.add_demo()`): its keys are what the text carries.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass

from backend.models.loading import ModelHandle
from backend.params import Config
from backend.progress import Progress, silent
from backend.verbs import Verb, register
import backend.watermark.demo as demo
from backend.watermark.corpus import human_texts
from backend.watermark.generation import Generation, make_request, run_generation
from backend.watermark.ipmark.config import IPMarkConfig
from backend.watermark.methods import BASELINE, METHODS
from backend.watermark.sampling import SamplingConfig
from backend.watermark.verb_reads import CORPUS, WRITING, code_of

HUMAN_TEXT = 1  # which of the corpus's human-written paragraphs the human example shows


@dataclass(frozen=True)
class ExampleSpec(Config):
    """What an example depends on (its cache key). The baseline method ("none") names the human-written text."""

    name: str = ""
    method: str = ""
    prompt: str = ""
    user_address: int = 0
    sampling: SamplingConfig = SamplingConfig()
    n_candidates: int = 8


def compute_example(handle: ModelHandle, spec: ExampleSpec, progress: Progress = silent) -> demo.Example:
    """The example verb's computation: the marked text the spec describes, or the human-written one."""
    return _human(spec) if spec.method == BASELINE else _marked(handle, spec, progress)


def _human(spec: ExampleSpec) -> demo.Example:
    return demo.Example(name=spec.name, title="Human-written text", method=BASELINE, text=human_texts()[HUMAN_TEXT],
                        prompt="", model_address=0, user_address=0, model_id="",
                        note="from the project's corpus of human-written paragraphs: no watermark")


def _marked(handle: ModelHandle, spec: ExampleSpec, progress: Progress) -> demo.Example:
    method = METHODS.get(spec.method)
    user = spec.user_address if method.identifies_users else 0
    request = make_request(spec.prompt, spec.method, demo.DEMO_MODEL_ADDRESS, user, spec.sampling,
                           IPMarkConfig(n_candidates=spec.n_candidates))
    g = run_generation(handle, request, progress=progress)
    if method.identity_free:  # its keys are its settings (public defaults), not an identity's
        who, keys, address = "default keys", "its default (public) keys", 0
    else:
        who = f"demo user {user}" if user else "the demo model"
        keys, address = f"keys of {who} (public demo secret)", demo.DEMO_MODEL_ADDRESS
    return demo.Example(name=spec.name, title=f"{method.label.split(' (')[0]}, {who}", method=spec.method,
                        text=g.text, prompt=spec.prompt, model_address=address, user_address=user,
                        model_id=handle.id, note=f"written by {handle.display_name} with {method.label}, {keys}, "
                                             f"in {g.seconds:.0f} s")


# Reads this whole module (the spec, the texts and notes it writes), the Example it stores, the generation and
# every method's writing code, and the corpus the human text comes from.
example_verb = register(Verb("watermark", demo.EXAMPLE_ACTION, ExampleSpec, compute_example,
                             "a shipped example text: marked by one method with the demo identity's keys, or "
                             "human-written", reads=code_of(sys.modules[__name__], demo.Example, run_generation,
                                                            Generation, *WRITING, *CORPUS)))
