"""AppTest: a picked trace position (what a click on the trace stores) opens both models' distributions there,
every divergence, and, on request, the gate's verdict with the values it compared."""
import html

from app.figures.disagreement import POSITION
from app.ui.disagreement_position import DIS_POSITION
from backend.tasks import generate_problems
from tests.app.helpers import plotly_charts, run_page

FITS = {"dis-max-new": 16, "dis-cal-n": 2}  # a short trace; the gate calibrates on 2 training rollouts


def _check_gate(at):
    """Click "Check the gate here" when it is offered (the calibration rollouts are not stored yet)."""
    button = next((b for b in at.button if b.key == "dis-gate-at-run"), None)
    if button is not None:
        button.click().run()


def test_trace_position_pick_opens_the_drilldown():
    at = run_page("disagreement.py", state=FITS)
    assert not at.error, [e.value for e in at.error]
    assert any("Click a point on the trace" in c.value for c in at.caption)
    at.session_state[DIS_POSITION.key] = POSITION.of(3, context="base")
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any(s.value == "Position 3 of the base rollout" for s in at.subheader)
    question = generate_problems(1, "heldout", seed=0, difficulty=2)[0].question  # the page's first problem: shown
    assert any(html.unescape(c.value) == f"Question: {question}" for c in at.caption)
    assert [c.key for c in plotly_charts(at)] == ["dis-trace-fig", "dis-position-fig"]
    signals = at.dataframe[-1].value
    assert len(signals) == 6 and (signals["nats"] >= -1e-6).all()
    _check_gate(at)
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any(m.value.startswith("**Gate fires**") or m.value.startswith("**Gate does not fire**")
               for m in at.markdown)
    captions = [html.unescape(c.value) for c in at.caption]
    assert any(c.startswith("fires: s_t =") or c.startswith("does not fire: s_t =") for c in captions), captions
    at.session_state[DIS_POSITION.key] = POSITION.of(3, context="reasoning")  # a pick on the other rollout than the one traced: the hint
    at.run()
    assert not at.error and [c.key for c in plotly_charts(at)] == ["dis-trace-fig"]


def test_once_calibrated_the_gate_is_checked_at_every_clicked_position():
    at = run_page("disagreement.py", state={**FITS, DIS_POSITION.key: POSITION.of(1, context="base")})
    _check_gate(at)  # calibrates (or finds the calibration stored)
    at.session_state[DIS_POSITION.key] = POSITION.of(2, context="base")
    at.run()
    assert not at.error and not any(b.key == "dis-gate-at-run" for b in at.button), "no button once calibrated"
    assert any(m.value.startswith("**Gate") for m in at.markdown)
