"""Selection events -> drill-down choices (app/ui/drilldown_select.py): what a click on each chart chooses."""
import numpy as np

from app.ui.drilldown_select import fp8_head_pick, particle_pick, selected_points, trace_position_pick


def event(*points):
    return {"selection": {"points": list(points), "point_indices": [], "box": [], "lasso": []}}


def test_selected_points_tolerates_empty_and_odd_events():
    assert selected_points(None) == [] and selected_points({}) == [] and selected_points(event()) == []
    assert selected_points({"selection": {"points": [1, {"x": 2}]}}) == [{"x": 2}]


def test_fp8_pick_from_heatmap_cell_or_layer():
    bound = np.array([[1.0, 3.0, 2.0], [5.0, 4.0, 6.0]])
    assert fp8_head_pick(event({"x": 1, "y": 0, "customdata": [1, 2]}), bound) == (1, 2)
    # a typed array, as the browser sends it (calcdata of a numeric customdata)
    assert fp8_head_pick(event({"x": 2, "customdata": {"0": 1, "1": 2, "2": 1, "3": 0.04}}), bound) == (1, 2)
    assert fp8_head_pick(event({"x": 1, "y": 5.0, "customdata": 1}), bound) == (1, 2)  # a layer: its largest bound
    assert fp8_head_pick(event({"x": 0, "y": 1.0}), bound) == (0, 1)
    assert fp8_head_pick(event({"x": 2, "customdata": [2, 0]}), bound) is None  # layer 2 does not exist
    assert fp8_head_pick(event({"x": 0.5}), bound) is None and fp8_head_pick(event(), bound) is None
    assert fp8_head_pick(event({"x": 0}, {"customdata": [1, 0]}), bound) == (1, 0)  # the last point wins


def test_trace_position_pick():
    assert trace_position_pick(event({"x": 3, "y": 0.2, "curve_number": 1}), 10) == 3
    assert trace_position_pick(event({"x": 10}), 10) is None and trace_position_pick(event({"x": -1}), 10) is None
    assert trace_position_pick(event({"x": "3"}), 10) == 3 and trace_position_pick(event({"x": True}), 10) is None


def test_particle_pick_from_ess_or_genealogy():
    rounds = [(8, 4), (6, 8)]
    assert particle_pick(event({"x": 5, "y": 0.3, "customdata": [0, 4, -1]}), rounds) == (0, 4, None)
    assert particle_pick(event({"x": 3, "customdata": [1, 2, -1, 3]}), rounds) == (1, 2, None)  # a resampling mark
    assert particle_pick(event({"x": 3, "y": 2, "customdata": [1, 2, 7]}), rounds) == (1, 2, 7)
    assert particle_pick(event({"customdata": {"1": 2, "0": 1, "2": 7}}), rounds) == (1, 2, 7)
    assert particle_pick(event({"customdata": [0, 2, 4]}), rounds) is None  # round 0 has 4 particles
    assert particle_pick(event({"customdata": [0, 8, 1]}), rounds) is None
    assert particle_pick(event({"customdata": [2, 0, 0]}), rounds) is None
    assert particle_pick(event({"x": 3, "y": 0.5}), rounds) is None  # the threshold line or anything else
