"""The sweep figure and table carry each cell's interval and its paired test against random."""
from app.figures.disagreement import sweep_figure, sweep_table
from tests.disagreement.test_sweep_stats import _result


def test_sweep_points_have_asymmetric_interval_bars_and_say_them_on_hover():
    fig = sweep_figure(_result())
    guided = next(t for t in fig.data if t.name == "guided")
    assert guided.y[0] == 60.0 and guided.error_y.array[0] > 0 and guided.error_y.arrayminus[0] > 0
    assert guided.error_y.array[0] != guided.error_y.arrayminus[0]
    assert "95% CI" in guided.customdata[0] and "vs random" in guided.customdata[0]
    assert "vs random" not in next(t for t in fig.data if t.name == "random").customdata[0]


def test_sweep_table_rows_read_as_counts_and_tests():
    table = sweep_table(_result())
    guided = table[table.policy == "guided"].iloc[0]
    assert guided["right"] == "6/10" and guided["95% CI"] == "31%-83%"
    assert guided["vs random (only this / only random)"] == "5 / 1" and 0.2 < guided["McNemar p"] < 0.25
    assert table[table.policy == "random"].iloc[0]["vs random (only this / only random)"] == ""


def test_distribution_titles_start_from_the_figures_outer_edges():
    """Centred on its panel, the right title (a long reasoning model's name) ran off the figure's right edge."""
    from app.figures.disagreement import distributions_figure
    from backend.disagreement.position import PositionResult, TopToken

    top = (TopToken(" 8", 23, 0.7, -0.36), TopToken(" 6", 21, 0.2, -1.6))
    result = PositionResult("base", 3, 9, "She pays", " 8", 23, top, top, {"ce": 0.1}, -0.36, -0.36, False)
    left, right = distributions_figure(result, "base-model", "DeepSeek-R1-Distill-Qwen-1.5B reasoning").layout.annotations
    assert (left.x, left.xanchor) == (0, "left") and (right.x, right.xanchor) == (1, "right")
    assert right.text == "reasoning: DeepSeek-R1-Distill-Qwen-1.5B reasoning"
