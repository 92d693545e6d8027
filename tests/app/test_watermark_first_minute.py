"""The Watermark page on a fresh install: the demo identity is there, each example text loads with one click and gets
its verdicts, and a pasted text gets the table of every method that can judge it without registering anything."""
import pytest

from tests.app.helpers import open_tab, run_page


@pytest.fixture
def fresh(tmp_path, monkeypatch, session_dir):
    """A private secret and an empty store (no identity registered: a fresh install); the page's model is the tiny
    trained writer, whose word-like text tokenises back to the ids it wrote (a random model's bytes may not)."""
    import os

    from tests.watermark.tiny_writer import build_tiny_writer

    writer = build_tiny_writer(session_dir / "models" / "tiny-writer")
    monkeypatch.setenv("DASH_EXTRA_MODELS", f"{os.environ.get('DASH_EXTRA_MODELS', '')};tiny-writer={writer}")
    monkeypatch.setenv("DASH_DEFAULT_MODEL", "tiny-writer")
    monkeypatch.setenv("DASH_WATERMARK_SECRET_FILE", str(tmp_path / "secret.key"))
    monkeypatch.setenv("DASH_STORE", str(tmp_path / "store.duckdb"))
    monkeypatch.setenv("DASH_REFERENCE_DIR", str(tmp_path / "no-reference"))  # the test writes its own examples


def _write_kgw_example():
    """A KGW-marked example under the demo identity's keys, written by the tests' default model, stored as the
    script stores the shipped ones (feature watermark, action example)."""
    from backend.models import default_model_id, load
    from backend.store import ModelRef, cached
    from backend.watermark import demo
    from backend.watermark.generation import make_request, run_generation
    from backend.watermark.sampling import SamplingConfig

    handle = load(default_model_id())
    demo.add_demo()
    request = make_request("Write about the sea.", "kgw", demo.DEMO_MODEL_ADDRESS, 0,
                           SamplingConfig(max_sentences=6, max_sentence_tokens=48, temperature=1.0, seed=1))
    text = run_generation(handle, request).text
    example = demo.Example(name="kgw", title="KGW, the demo model", method="kgw", text=text, prompt="",
                           model_address=demo.DEMO_MODEL_ADDRESS, user_address=0, model_id=handle.id, note="test")
    cached("watermark", demo.EXAMPLE_ACTION, ModelRef.of(handle), {"name": "kgw"}, lambda: example)
    human = demo.Example(name="human", title="Human-written text", method="none", text=TEXT, prompt="",
                         model_address=0, user_address=0, model_id="", note="test")
    cached("watermark", demo.EXAMPLE_ACTION, ModelRef.of(handle), {"name": "human"}, lambda: human)
    return example


TEXT = ("The harbour was quiet in the early morning. Boats rocked gently at their moorings. A gull called from the "
        "pier. The fishermen were already at work on their nets. Later the market opened and the town woke up.")


def verdicts(at) -> dict:
    frame = next((d.value for d in at.dataframe if "what it means" in d.value.columns), None)
    if frame is None:
        return {}
    return {row["method"].split(" (")[0]: row for _, row in frame.iterrows()}


def test_an_example_loads_with_one_click_and_gets_its_verdict(fresh):
    example = _write_kgw_example()
    at = run_page("watermark.py")
    at.button(key="wm-example-kgw").click()
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.text_area(key="wm-text").value == example.text
    rows = verdicts(at)
    assert rows["KGW"]["verdict"] == "watermarked" and "[demo]" in rows["KGW"]["identity"]
    shown_p = rows["KGW"]["p (corrected)"]  # written for reading: "9.3e-10", or "< 1e-300" past double range
    assert (shown_p == "< 1e-300" or float(shown_p) < 1e-4) and "tokens" in rows["KGW"]["scored"]
    assert "IPMark" in rows  # the demo identity is registered: the identity search joins
    assert at.selectbox(key="wm-detect-method").value == "kgw"  # its details and per-token highlight below
    assert any("green tokens" in m.value for m in [*at.info, *at.success])
    at.button(key="wm-example-human").click()
    at.run()
    rows = verdicts(at)
    assert rows["KGW"]["verdict"] != "watermarked"
    assert all("not proof of human writing" in r["what it means"] for r in rows.values()
               if r["verdict"] == "not watermarked")


def test_pasted_text_gets_the_table_on_a_fresh_install_and_the_demo_can_go(fresh):
    at = run_page("watermark.py")
    at.text_area(key="wm-text").set_value(TEXT)
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    rows = verdicts(at)
    assert {"IPMark", "KGW"} <= set(rows)  # the demo identity was created on the empty registry
    open_tab(at, "wm-tab", "Registry")
    at.button(key="wm-demo-remove").click()
    at.run()
    assert not at.exception and not at.error
    open_tab(at, "wm-tab", "Detect")
    assert "IPMark" not in verdicts(at)  # identity-based methods join when identities exist
    assert any("joins when identities exist" in c.value for c in at.caption)
    at.run()  # removed stays removed on the next run
    open_tab(at, "wm-tab", "Registry")
    assert any(b.key == "wm-demo-add" for b in at.button)
