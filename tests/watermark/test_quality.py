"""Perplexity on a model whose log-probabilities are set by hand, so the expected value is known exactly."""
import math
from types import SimpleNamespace

import pytest
import torch

from backend.watermark.quality import perplexity

IDS = {"a": 0, "b": 1, "c": 2, "d": 3}


class LetterTokenizer:
    """One token per letter a-d; no chat template (the prompt is encoded as it is)."""

    chat_template = None

    def __call__(self, text, add_special_tokens=True, return_tensors=None):
        ids = [IDS[ch] for ch in text]
        return {"input_ids": torch.tensor([ids]) if return_tensors == "pt" else ids}


class PositionModel(torch.nn.Module):
    """The distribution after position t gives token t mod 4 probability 0.7 and each other token 0.1."""

    config = SimpleNamespace(max_position_embeddings=64)
    device = torch.device("cpu")

    def forward(self, input_ids):
        n = input_ids.shape[1]
        probs = torch.full((n, 4), 0.1)
        probs[torch.arange(n), torch.arange(n) % 4] = 0.7
        return SimpleNamespace(logits=probs.log()[None])


HANDLE = SimpleNamespace(tokenizer=LetterTokenizer(), model=PositionModel())


def test_perplexity_scores_only_the_response_tokens():
    # prompt "ab" fills positions 0-1; the response "bad" sits at 2-4 and is predicted from positions 1-3,
    # which favour tokens 1, 2, 3: "b" is favoured (0.7), "a" is not (0.1), "d" is favoured (0.7)
    expected = (0.7 * 0.1 * 0.7) ** (-1 / 3)
    assert perplexity(HANDLE, "ab", "bad", chat=False) == pytest.approx(expected, rel=1e-5)
    assert expected == pytest.approx(2.7327, abs=1e-4)
    # one token favoured at every step: exp(-ln 0.7)
    assert perplexity(HANDLE, "ab", "bcd", chat=False) == pytest.approx(1 / 0.7, rel=1e-5)
    # none favoured: the perplexity of a 0.1 guess
    assert perplexity(HANDLE, "ab", "aaa", chat=False) == pytest.approx(10.0, rel=1e-5)


def test_empty_response_has_no_perplexity():
    assert math.isnan(perplexity(HANDLE, "ab", "", chat=False))
