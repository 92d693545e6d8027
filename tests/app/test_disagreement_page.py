"""The Disagreement page on tiny models: the trace on first render, then each button's figures."""
from tests.app.helpers import error_texts, plotly_charts, run_page


def _button(at, key):
    return next(b for b in at.button if b.key == key)


def test_first_render_traces_both_rollouts():
    at = run_page("disagreement.py")
    assert not at.error, [e.value for e in at.error]
    keys = [c.proto.id for c in plotly_charts(at)]
    assert len(keys) >= 2, "trace and EOPD figures are missing"
    assert at.selectbox(key="dis-base").value == "tiny-llama"
    assert at.selectbox(key="dis-reason-tiny-llama").value != "tiny-llama"  # a partner sharing the tokenizer
    assert any("Base rollout" in m.value for m in at.markdown)


def test_batch_sweep_and_eopd_buttons():
    at = run_page("disagreement.py")
    at.slider(key="dis-max-new").set_value(16)
    at.number_input(key="dis-batch-n").set_value(2)
    at.number_input(key="dis-sweep-n").set_value(2)
    at.number_input(key="dis-cal-n").set_value(2)
    at.multiselect(key="dis-sweep-rates").set_value([0.1])
    at.number_input(key="dis-eopd-n").set_value(2)
    at.run()
    before = len(plotly_charts(at))
    for key in ("dis-batch-run", "dis-intervene-run", "dis-sweep-run", "dis-eopd-run"):
        _button(at, key).click()
        at.run()
        assert not at.exception and not at.error, (key, [e.value for e in at.error])
    assert len(plotly_charts(at)) >= before + 6  # Lorenz, positions, categories, ROC, sweep, EOPD summary
    assert any(m.label == "Gini" for m in at.metric)
    assert any(m.label == "Gated tokens" for m in at.metric)
    again = run_page("disagreement.py")  # a new session shows the stored sweep before any button
    assert any("Latest stored sweep of this pair" in c.value for c in again.caption)


def test_mismatched_pair_shows_a_message(tmp_path, monkeypatch):
    import os

    import torch
    from transformers import AutoModelForCausalLM

    from tests.support.tiny import byte_tokenizer, tiny_config

    tok = byte_tokenizer()
    tok.add_tokens(["<other>"])
    torch.manual_seed(1)
    AutoModelForCausalLM.from_config(tiny_config("llama", len(tok))).save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    monkeypatch.setenv("DASH_EXTRA_MODELS", os.environ["DASH_EXTRA_MODELS"] + f";tiny-page-other={tmp_path}")
    at = run_page("disagreement.py")
    at.selectbox(key="dis-reason-tiny-llama").set_value("tiny-page-other").run()
    assert not at.exception
    assert at.error and "tokenizer" in error_texts(at)[0]


def test_a_typed_problem_without_an_answer_is_shown_but_not_scored():
    at = run_page("disagreement.py")
    at.radio(key="dis-mode").set_value("Typed").run()
    at.text_input(key="dis-answer").set_value("").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("has no checker" in c.value for c in at.caption)
    assert not any("correct]" in m.value or "wrong]" in m.value for m in at.markdown)
