"""The Disagreement page on tiny models: the trace on first render, then each button's figures."""
from tests.app.helpers import error_texts, open_tab, plotly_charts, run_page

# the default question's prompt is 174 tokens on the tiny byte-level models (256 positions): 96 new tokens would not
# fit, and the context rule refuses such a request before any forward
FITS = {"dis-max-new": 64}


def _button(at, key):
    return next(b for b in at.button if b.key == key)


def test_first_render_traces_both_rollouts():
    at = run_page("disagreement.py", state=FITS)
    assert not at.error, [e.value for e in at.error]
    assert [c.key for c in plotly_charts(at)] == ["dis-trace-fig"]  # the other tabs' figures are not sent
    assert at.selectbox(key="dis-base").value == "tiny-llama"
    assert at.selectbox(key="dis-reason-tiny-llama").value != "tiny-llama"  # a partner sharing the tokenizer
    assert any("Base rollout" in m.value for m in at.markdown)
    assert not at.dataframe  # the per-token table is sent once its expander is opened
    at.session_state["dis-trace-table"] = True
    at.run()
    assert len(at.dataframe) == 1
    open_tab(at, "dis-tab", "Entropy-aware distillation")
    assert not at.error, [e.value for e in at.error]
    assert "dis-eopd-trace" in [c.key for c in plotly_charts(at)]  # the same trace, served from the store


def test_batch_sweep_and_eopd_buttons():
    at = run_page("disagreement.py", state=FITS)
    at.slider(key="dis-max-new").set_value(16).run()

    def click(key):
        _button(at, key).click()
        at.run()
        assert not at.exception and not at.error, (key, [e.value for e in at.error])
        return {c.key for c in plotly_charts(at)}

    open_tab(at, "dis-tab", "Concentration & failure").number_input(key="dis-batch-n").set_value(2)
    assert {"dis-lorenz", "dis-positions", "dis-categories", "dis-roc"} <= click("dis-batch-run")
    assert any(m.label == "Gini" for m in at.metric)
    open_tab(at, "dis-tab", "Intervention")
    at.number_input(key="dis-sweep-n").set_value(2)
    at.number_input(key="dis-cal-n").set_value(2)
    at.multiselect(key="dis-sweep-rates").set_value([0.1])
    click("dis-intervene-run")
    assert "dis-sweep-fig" in click("dis-sweep-run")
    assert {"95% CI", "McNemar p"} <= set(at.dataframe[-1].value.columns)  # intervals and the paired test
    at.checkbox(key="dis-decisive").check()  # the decisive gate: calibrated on the steps where the tokens differ
    click("dis-intervene-run")
    assert any("tokens taken over" in m.value for m in at.markdown)
    open_tab(at, "dis-tab", "Entropy-aware distillation").number_input(key="dis-eopd-n").set_value(2)
    assert "dis-eopd-summary" in click("dis-eopd-run")
    assert any(m.label == "Gated tokens" for m in at.metric)
    open_tab(at, "dis-tab", "Intervention")  # the values typed there were kept while another tab was open
    assert at.number_input(key="dis-sweep-n").value == 2 and at.multiselect(key="dis-sweep-rates").value == [0.1]
    again = open_tab(run_page("disagreement.py", state=FITS), "dis-tab", "Intervention")  # a new session: the stored sweep
    assert any("Latest stored sweep of this pair" in c.value for c in again.caption)


def test_mismatched_pair_shows_a_message(tmp_path, monkeypatch):
    from tests.support.tiny import allow_model, byte_tokenizer, save_for_tokenizer

    tok = byte_tokenizer()
    tok.add_tokens(["<other>"])
    allow_model(monkeypatch, "tiny-page-other", save_for_tokenizer(tmp_path, tok, seed=1))
    at = run_page("disagreement.py", state=FITS)
    at.selectbox(key="dis-reason-tiny-llama").set_value("tiny-page-other").run()
    assert not at.exception
    assert at.error and "tokenizer" in error_texts(at)[0]


def test_a_typed_problem_without_an_answer_is_shown_but_not_scored():
    at = run_page("disagreement.py", state=FITS)
    at.radio(key="dis-mode").set_value("Typed").run()
    at.text_input(key="dis-answer").set_value("").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("has no checker" in c.value for c in at.caption)
    assert not any("correct]" in m.value or "wrong]" in m.value for m in at.markdown)


def test_learnability_waits_for_its_button_then_shows_the_clustered_heatmap():
    at = run_page("disagreement.py", state={"dis-max-new": 16, "dis-learn-n": 3})
    open_tab(at, "dis-tab", "Learnability")
    assert not at.error, [e.value for e in at.error]
    assert "dis-learn-heatmap" not in [c.key for c in plotly_charts(at)]  # minutes of work: asked for, not started
    _button(at, "dis-learn-run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert {"dis-learn-heatmap", "dis-learn-strip"} <= {c.key for c in plotly_charts(at)}
    assert any(m.label == "AUROC of low similarity" for m in at.metric)
    assert any("too few unlearnable or learned examples" in c.value for c in at.caption)  # 3 examples: no test
    assert len(at.dataframe[-1].value) == 3
    at.text_input(key="dis-learn-layers").set_value("last").run()
    assert any("layers" in text for text in error_texts(at))


def test_the_sweep_curve_grows_problem_by_problem_and_a_stop_keeps_it_marked_partial(monkeypatch):
    from tests.app.helpers import so_far_captions, stop_after_first_partial

    at = open_tab(run_page("disagreement.py", state=FITS), "dis-tab", "Intervention")
    at.slider(key="dis-max-new").set_value(16).run()
    at.number_input(key="dis-sweep-n").set_value(3)
    at.number_input(key="dis-cal-n").set_value(2)
    at.multiselect(key="dis-sweep-rates").set_value([0.02])  # a budget no other test sweeps: computed here
    stop_after_first_partial(monkeypatch)
    _button(at, "dis-sweep-run").click()
    at.run()
    assert so_far_captions(at) == ["So far: 1 of 3 problems (partial; updated as the work runs)"], \
        [c.value for c in at.caption]
    assert "dis-sweep-fig-1" in [c.key for c in plotly_charts(at)] and "dis-sweep-fig" not in [
        c.key for c in plotly_charts(at)]
    points = at.dataframe[-1].value
    assert set(points["right"].str.split("/").str[1]) == {"1"}, "each cell scored on the one problem done"
    _button(at, "stop-Budget sweep").click()
    at.run()
    assert not at.exception
    kept = [w.value for w in at.warning if w.value.startswith("Partial result: ")]
    assert kept == ["Partial result: 1 of 3 problems finished before it was stopped, shown as it was; nothing was "
                    "stored as the result. Run it again for the whole."]
    assert any(df.value.equals(points) for df in at.dataframe) and "dis-sweep-fig-1" in [
        c.key for c in plotly_charts(at)]
