"""Settings survive navigation: a value set on one page (or tab) is still there after a visit elsewhere, and the
result shown for it comes from the store again, not from a recomputation."""
from tests.app.helpers import ROOT, open_tab, run_page


def _visit(at, script: str):
    at.switch_page(str(ROOT / "pages" / script))
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_decoding_input_choice_and_prompt_survive_a_visit_to_another_page():
    at = run_page("decoding.py", state={"dec-max-new": 4})
    at.radio(key="dec-source").set_value("Own prompt").run()
    at.text_area(key="dec-prompt").set_value("Count to three.").run()
    _visit(at, "fp8_bounds.py")
    _visit(at, "decoding.py")
    assert at.radio(key="dec-source").value == "Own prompt"
    assert at.text_area(key="dec-prompt").value == "Count to three."


def test_a_watermark_key_setting_survives_other_tabs_and_pages():
    at = run_page("watermark.py")
    key = "wm-detect-hf_kgw-hashing_key"
    at.number_input(key=key).set_value(12345).run()
    open_tab(at, "wm-tab", "Generate")
    _visit(at, "home.py")
    _visit(at, "watermark.py")
    open_tab(at, "wm-tab", "Detect")
    assert at.number_input(key=key).value == 12345, "the hashing key reverted to its default"


def test_fp8_settings_survive_a_visit_to_another_page():
    at = run_page("fp8_bounds.py")
    at.radio(key="fp8-view").set_value(at.radio(key="fp8-view").options[-1]).run()
    chosen = at.radio(key="fp8-view").value
    _visit(at, "home.py")
    _visit(at, "fp8_bounds.py")
    assert at.radio(key="fp8-view").value == chosen
