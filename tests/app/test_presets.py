"""AppTest: a page opens on the setting measured to work on the loaded model, says so, and keeps the paper's
setting one click away (MT steering, the Disagreement gate). The embedded models' presets are pointed at the
tiny test models here; which presets the embedded models get is checked on the backend tables."""
from backend.disagreement import presets as gate
from backend.mt import presets as mt
from tests.app.helpers import open_tab, run_page


def test_mt_page_opens_on_the_measured_design_and_the_paper_is_one_click_away(monkeypatch):
    measured = mt.MEASURED["gemma-3-270m"]
    monkeypatch.setitem(mt.MEASURED, "tiny-llama", measured)
    at = run_page("mt_heads.py", timeout=300)
    assert at.radio(key="mt-preset").value == measured.label
    assert at.slider(key="mt-percent").value == measured.percent
    assert at.slider(key="mt-strength").value == measured.strength
    assert at.selectbox(key="mt-steer-positions").value == measured.steer_positions
    assert at.selectbox(key="mt-steer-layers").value == measured.steer_layers
    assert any("85% of the chrF++ gap" in c.value for c in at.caption), "the evidence for the preset is shown"
    at.radio(key="mt-preset").set_value(mt.PAPER.label).run()
    assert not at.exception
    assert at.slider(key="mt-percent").value == mt.PAPER.percent
    assert at.selectbox(key="mt-steer-positions").value == mt.PAPER.steer_positions
    assert at.selectbox(key="mt-steer-layers").value == mt.PAPER.steer_layers


def test_an_unmeasured_model_opens_on_the_papers_setting():
    at = run_page("mt_heads.py", timeout=300)
    assert at.radio(key="mt-preset").value == mt.PAPER.label
    assert at.slider(key="mt-percent").value == mt.PAPER.percent


def test_disagreement_gate_opens_on_the_decisive_threshold_for_the_measured_pair(monkeypatch):
    at = open_tab(run_page("disagreement.py"), "dis-tab", "Intervention")
    pair = (at.selectbox(key="dis-base").value, at.selectbox(key="dis-reason-tiny-llama").value)
    assert at.radio(key="dis-gate-preset").value == gate.PAPER.label  # not measured: the paper's rule
    assert at.number_input(key="dis-window").value == 8
    monkeypatch.setattr(gate, "EMBEDDED_PAIR", pair)
    at = open_tab(run_page("disagreement.py"), "dis-tab", "Intervention")
    assert at.radio(key="dis-gate-preset").value == gate.DECISIVE.label
    assert at.number_input(key="dis-window").value == 0 and at.checkbox(key="dis-decisive").value
    at.radio(key="dis-gate-preset").set_value(gate.PAPER.label).run()
    assert not at.exception and at.number_input(key="dis-window").value == 8
    assert not at.checkbox(key="dis-decisive").value


def test_the_embedded_models_open_on_their_measured_presets():
    assert mt.steering_presets("gemma-3-270m")[0].steer_layers == "first-half"
    assert mt.steering_presets("smollm2-135m-instruct")[0].percent == 5.0
    assert mt.steering_presets("some/other-model") == [mt.PAPER]
    assert gate.gate_presets(*gate.EMBEDDED_PAIR)[0] == gate.DECISIVE and gate.DECISIVE.window == 0
    assert gate.gate_presets(*gate.EVERYDAY_PAIR)[0] == gate.DECISIVE_EVERYDAY
    assert gate.DECISIVE_EVERYDAY.window == 0 and gate.DECISIVE_EVERYDAY.decisive
    assert "31.4%" in gate.DECISIVE_EVERYDAY.evidence, "its own pair's measurement, not the arithmetic adapter's"
    assert gate.gate_presets("a", "b")[0] is gate.PAPER
