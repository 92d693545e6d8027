"""The context rule in watermarking (tiny-llama: 256 positions): a generation whose first sentence cannot fit is
refused with the rule's message; one that fills the context ends early and says so in its result, on the CLI and
(tests/app) on the page; the evaluation, a batch, skips and counts the texts whose paraphrase would not fit."""
import json

import pytest

from backend.__main__ import main
from backend.errors import UserError
from backend.models import load
from backend.models.generate import encode_prompt
from backend.watermark.generation import make_request, run_generation
from backend.watermark.sampling import SamplingConfig

PROMPT = "Write about the harbour town."


def test_a_first_sentence_over_the_context_is_refused_before_any_forward():
    handle = load("tiny-llama")
    room = 256 - encode_prompt(handle, PROMPT).shape[1]
    calls = []
    hook = handle.model.register_forward_pre_hook(lambda *a: calls.append(1))
    try:
        with pytest.raises(UserError, match="over the model's context of 256 tokens"):
            run_generation(handle, make_request(PROMPT, "none", sampling=SamplingConfig(max_sentence_tokens=room + 1)))
    finally:
        hook.remove()
    assert calls == []


def test_a_text_that_fills_the_context_ends_early_and_says_so():
    handle = load("tiny-llama")
    room = 256 - encode_prompt(handle, PROMPT).shape[1]  # the first sentence fits exactly; no second one can
    sampling = SamplingConfig(max_sentences=4, max_sentence_tokens=room, seed=1)
    gen = run_generation(handle, make_request(PROMPT, "none", sampling=sampling))
    assert gen.context_full and len(gen.sentences) == 1 and gen.text
    assert gen.context_note().startswith("The text ends after 1 sentences: one more would not fit the model's context")
    roomy = run_generation(handle, make_request(PROMPT, "none", sampling=SamplingConfig(max_sentences=1, seed=1)))
    assert not roomy.context_full and roomy.context_note() == ""  # ended by max_sentences: nothing to say


def test_the_cli_says_when_the_context_ended_the_text(capsys):
    code = main(["watermark", "generate", PROMPT, "--method", "none", "--model-id", "tiny-llama", "--sentences", "6",
                 "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    out = json.loads(captured.out)
    assert out["context_full"] is True and len(out["sentences"]) < 6
    assert "one more would not fit the model's context" in captured.err


def test_the_evaluation_skips_and_counts_texts_whose_paraphrase_would_not_fit(writer_handle, monkeypatch):
    """The writer's context made small enough that its texts are written but their paraphrase requests do not fit:
    the lm_paraphrase rows count every text as skipped (none scored); the other attack skips none."""
    from backend.watermark.evaluation import EvalConfig, evaluate
    from backend.watermark.paraphrase import ParaphraseRequest, paraphrase_fits, sizes

    monkeypatch.setattr(writer_handle.model.config, "max_position_embeddings", 160)
    text = "The old city was quiet. People walked along the street."
    assert not paraphrase_fits(writer_handle, text) and sum(sizes(writer_handle, ParaphraseRequest(text))) > 160
    cfg = EvalConfig(n_prompts=2, n_users=2, sampling=SamplingConfig(max_sentences=2, max_sentence_tokens=24),
                     methods=("kgw",), attacks=(("copy_paste", 0.5), ("lm_paraphrase", 1.0)))
    rows = {d.condition: d for d in evaluate(writer_handle, cfg).value.detection}
    assert rows["lm_paraphrase 1"].skipped == 2 and rows["lm_paraphrase 1"].n_pos == 0
    assert rows["copy_paste 0.5"].skipped == 0 and rows["copy_paste 0.5"].n_pos == 2
    assert rows["clean"].skipped == 0 and rows["clean"].n_pos == 2
