"""The watermark figures draw only what the verdict uses."""
from types import SimpleNamespace

from app.figures.watermark import level_evidence


def test_the_evidence_chart_draws_no_threshold_the_verdict_does_not_use():
    level = SimpleNamespace(level="model", z=3.74, p_value=1e-5, p_family=2e-4, compared=3, corrected_over="",
                            n_bits=40)
    fig = level_evidence(SimpleNamespace(levels=(level,), verdict="watermarked"))
    assert not fig.layout.shapes, "a z line the verdict does not use (it is taken on the corrected p)"
    assert "corrected p" in fig.layout.title.text


def test_the_latency_chart_labels_whole_values_on_both_log_axes():
    from app.figures.watermark import latency_chart
    from tests.app.test_figure_axes import whole_labels

    fig = latency_chart([{"users": u, "hierarchical_ms": 0.2 + u / 1e5, "flat_ms": u / 500} for u in (10, 1000, 100000)])
    assert whole_labels(fig.layout.xaxis) and whole_labels(fig.layout.yaxis)
