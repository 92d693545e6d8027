"""The context rule on the pages (tiny-llama, 256 positions): a decoding batch shows the line counting the problems it
skipped; a watermark generation that filled the context says so under its text."""
import html

from tests.app.helpers import open_tab, run_page


def test_a_decoding_batch_says_which_problems_the_context_rule_skipped():
    from backend.models import load
    from backend.models.generate import encode_prompt
    from backend.tasks import PROBLEM_SETS, format_prompt, problem_set

    handle = load("tiny-llama")
    problems = problem_set(list(PROBLEM_SETS)[0], 3)  # the page's batch: first problem set, mixed steps
    lengths = {p.id: encode_prompt(handle, format_prompt(p), True).shape[1] for p in problems}
    new = 256 - sorted(lengths.values())[-2]  # the longest prompt leaves no room for this many tokens
    skipped = [i for i, n in lengths.items() if n + new > 256]
    at = open_tab(run_page("decoding.py"), "dec-tab", "Batch & budgets")
    at.multiselect(key="dec-strategies").set_value(["greedy"])
    at.number_input(key="dec-max-new").set_value(new)
    at.number_input(key="dec-batch-n").set_value(3)
    at.multiselect(key="dec-budgets").set_value([])
    at.button(key="dec-batch-run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    warnings = [html.unescape(w.value) for w in at.warning]
    assert any(w.startswith(f"{len(skipped)} problem") and "skipped: the prompt leaves no room" in w
               and all(s in w for s in skipped) for w in warnings), warnings


def test_a_watermark_generation_that_fills_the_context_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("DASH_WATERMARK_SECRET_FILE", str(tmp_path / "secret.key"))
    monkeypatch.setenv("DASH_STORE", str(tmp_path / "store.duckdb"))
    from backend.watermark import identities

    identities.add_user(identities.add_model("page-model").address, "page-user")
    at = open_tab(run_page("watermark.py"), "wm-tab", "Generate")
    assert at.number_input(key="wm-gen-sentences-kgw").value == 6  # 6 sentences of up to 64 tokens: over 256
    next(b for b in at.button if "Generate" in b.label).click()
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("one more would not fit the model's context" in html.unescape(i.value) for i in at.info), \
        [i.value for i in at.info]
