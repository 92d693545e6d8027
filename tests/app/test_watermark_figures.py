"""The watermark figures draw only what the verdict uses."""
from types import SimpleNamespace

from app.figures.watermark import level_evidence


def test_the_evidence_chart_draws_no_threshold_the_verdict_does_not_use():
    level = SimpleNamespace(level="model", z=3.74, p_value=1e-5, p_family=2e-4, compared=3, corrected_over="",
                            n_bits=40)
    fig = level_evidence(SimpleNamespace(levels=(level,), verdict="watermarked"))
    assert not fig.layout.shapes, "a z line the verdict does not use (it is taken on the corrected p)"
    assert "corrected p" in fig.layout.title.text
