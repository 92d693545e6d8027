"""AppTest: the Decoding page's ConvexBench tab: the stored benchmark or its absence, a live run of both strategies,
a typed expression and a bad one (a message naming the field, no traceback)."""
from tests.app.helpers import error_texts, open_tab, plotly_charts, run_page


def _tab():
    at = run_page("decoding.py")
    open_tab(at, "dec-tab", "ConvexBench")
    assert not at.exception and not at.error, [e.value for e in at.error]
    return at


def test_convexbench_tab_runs_both_strategies_on_generated_problems():
    at = _tab()
    keys = {chart.key for chart in plotly_charts(at)}
    assert "cvx-stored-f1" in keys or any("No stored ConvexBench" in i.value for i in at.info)
    at.number_input(key="cvx-depth").set_value(2)
    at.number_input(key="cvx-problems").set_value(3)
    at.button(key="cvx-run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    table = next(df.value for df in at.dataframe if "f1" in df.value.columns and "depth" in df.value.columns
                 and len(df.value) == 2)
    assert list(table["strategy"]) == ["direct", "decomposed"] and list(table["n"]) == [3, 3]
    assert "cvx-rules" in {chart.key for chart in plotly_charts(at)}


def test_a_typed_expression_and_a_bad_one():
    at = _tab()
    at.radio(key="cvx-source").set_value("Own expression").run()
    at.text_input(key="cvx-expression").set_value("exp(x) + y**2").run()
    at.button(key="cvx-ask").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("convex" in c.value for c in at.caption)
    at.text_input(key="cvx-expression").set_value("exp(x + ").run()
    at.button(key="cvx-ask").click().run()
    assert not at.exception
    assert any("expression could not be parsed" in text for text in error_texts(at))
