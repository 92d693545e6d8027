"""AppTest: a picked head (what a click on the heatmap stores) opens its bound beside its logit histogram."""
from app.figures.clickable import HEAD
from app.ui.fp8_head import FP8_HEAD
from tests.app.helpers import plotly_charts, run_page


def test_fp8_head_pick_opens_the_drilldown():
    at = run_page("fp8_bounds.py")
    assert len(plotly_charts(at)) == 2 and any("Click a head" in c.value for c in at.caption)
    at.session_state[FP8_HEAD.key] = HEAD.of(1, 2)
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any(s.value == "Layer 1, head 2" for s in at.subheader)
    assert len(plotly_charts(at)) == 3, "the head's histogram is missing"
    labels = {m.label: m.value for m in at.metric}
    assert float(labels["Guaranteed bound"]) > 0 and labels["Utilisation"].endswith("%")
    at.session_state[FP8_HEAD.key] = HEAD.of(7, 0)  # out of this model's range (another model's pick): the hint, no error
    at.run()
    assert not at.error and len(plotly_charts(at)) == 2
