"""AppTest: a picked particle (what a click on the genealogy or the ESS chart stores) opens its text, weight
history and replacements under the chart."""
from app.figures.decoding import PARTICLE, STEP
from app.ui.decoding_particle import DEC_PARTICLE
from tests.app.helpers import open_tab, plotly_charts, run_page


def test_particle_pick_opens_the_drilldown_under_ess_and_genealogy():
    at = run_page("decoding.py")
    assert not at.error, [e.value for e in at.error]
    assert any("Click a step on the ESS chart" in c.value for c in at.caption)
    at.session_state[DEC_PARTICLE.key] = PARTICLE.of(0, 0, 1)  # round 0, first token, particle 1
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any(s.value.startswith("Round 1, particle 1 after token 1") for s in at.subheader)
    assert "dec-particle-fig" in {c.key for c in plotly_charts(at)}
    assert at.text and at.text[-1].value  # the particle's text
    open_tab(at, "dec-detail-tab", "Genealogy")
    at.session_state[DEC_PARTICLE.key] = STEP.of(0, 0)  # a step of the ESS chart: a child of the heaviest particle
    at.run()
    assert not at.error and {"dec-genealogy", "dec-particle-fig"} <= {c.key for c in plotly_charts(at)}
    assert any("a child of the heaviest particle" in s.value for s in at.subheader)
    at.session_state[DEC_PARTICLE.key] = PARTICLE.of(3, 0, 0)  # no such round (another run's pick): the hint
    at.run()
    assert not at.error and "dec-particle-fig" not in {c.key for c in plotly_charts(at)}


def test_a_fresh_stores_first_particle_click_does_not_probe_the_model(fresh_store, monkeypatch):
    """The particle drill-down is computed on the click (0.1 s); its status box's estimate must not first probe the
    model (two forwards: 7 s in the browser bench at load 5-12)."""
    from backend.estimates import expected
    from backend.store.reference import import_reference

    import_reference()  # a fresh install: the first view is shipped, nothing was ever computed or probed here
    at = run_page("decoding.py")
    probes = []
    monkeypatch.setattr(expected, "probe", lambda *args, **kwargs: probes.append(args))
    at.session_state[DEC_PARTICLE.key] = STEP.of(0, 0)
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any(s.value.startswith("Round 1, particle") for s in at.subheader)
    assert probes == []
