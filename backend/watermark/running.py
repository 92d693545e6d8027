"""The detector's running verdict on a generation's text so far, shown beside each streamed sentence.

It is the method's own detection on the partial text, so the last running verdict is the finished text's verdict.
None of the methods runs the language model to detect: IPMark reads the text alone (sentence embedder and keyed
bits), KGW, transformers' KGW and SynthID read its tokenizer and keyed hashes. So the cost per sentence is a
detection of a short text, small beside sampling the sentence.
"""
from __future__ import annotations

from dataclasses import dataclass

from backend.errors import UserError
from backend.models.loading import ModelHandle
from backend.watermark.generation import GenerateRequest, PartialGeneration
from backend.watermark.methods import METHODS, DetectRequest, detect


@dataclass(frozen=True)
class RunningVerdict:
    """The method's verdict on the first `sentences` sentences of a generation."""

    method: str
    sentences: int
    verdict: str  # the method's verdict, or "" when it could not judge the text yet (`evidence` says why)
    z: float | None
    p_value: float | None  # the p the verdict is taken on (corrected for the keys compared)
    evidence: str  # what was scored, in words ("12/20 green tokens"), or why there is no verdict yet

    def line(self) -> str:
        """One line for the page: 'after 3 sentences: watermarked · z = 4.10 · p = 2e-05 · <evidence>'."""
        plural = "s" if self.sentences != 1 else ""
        head = f"after {self.sentences} sentence{plural}: {self.verdict or 'no verdict yet'}"
        numbers = "" if "z = " in self.evidence else "".join(part for part in (  # KGW's evidence states them
            "" if self.z is None else f" · z = {self.z:.2f}",
            "" if self.p_value is None else f" · p = {self.p_value:.2g}"))
        return f"{head}{numbers} · {self.evidence}"

    def to_json(self) -> dict:
        return dict(self.__dict__)


def detect_request(request: GenerateRequest, handle: ModelHandle, key_holder: bool = True) -> DetectRequest:
    """The detection that judges a text written for `request`: its method, settings and identity."""
    method = METHODS.get(request.method)
    return DetectRequest(method=method.name, model_address=request.model_address,
                         user_address=request.user_address if method.identifies_users else 0,
                         config=method.config_in(request), handle=handle if method.needs_model_to_detect else None,
                         key_holder=key_holder)


def running_verdict(partial: PartialGeneration, request: GenerateRequest, handle: ModelHandle,
                    key_holder: bool = True) -> RunningVerdict | None:
    """The method's verdict on the text so far (None for the unwatermarked baseline, which has no detector)."""
    method = METHODS.get(request.method)
    if method.is_baseline:
        return None
    n = len(partial.sentences)
    try:
        found = detect(partial.text, detect_request(request, handle, key_holder))
    except UserError as err:  # e.g. SynthID on a text shorter than its n-gram: no verdict yet, said so
        return RunningVerdict(method.name, n, "", None, None, str(err))
    return RunningVerdict(method.name, n, found.verdict, found.z, found.p_family, found.evidence)
