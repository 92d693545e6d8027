"""Stored results reach the app through backend.results, from the data folder, never from bench/."""
import json

from backend import results


def test_a_stored_result_is_read_by_name_and_a_missing_or_broken_one_is_none(tmp_path, monkeypatch):
    monkeypatch.setenv("DASH_DATA_DIR", str(tmp_path))
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "watermark.json").write_text(json.dumps({"latency": [1]}))
    (tmp_path / "results" / "broken.json").write_text("{")
    (tmp_path / "results" / "list.json").write_text("[]")
    assert results.load_result("watermark") == {"latency": [1]}
    assert results.load_result("absent") is None
    assert results.load_result("broken") is None
    assert results.load_result("list") is None
    assert results.result_names("water") == ("watermark",)


def test_the_results_the_pages_show_ship_under_data():
    for name in ("decoding_accuracy", "watermark", "watermark_length"):
        assert results.load_result(name), f"data/results/{name}.json is published (bench/publish.py)"


def test_every_preset_has_its_measured_evidence_and_carries_settings_only():
    """The presets hold settings; what they were measured to do is data shown beside them."""
    import dataclasses

    from backend.disagreement import presets as gate
    from backend.mt import presets as mt

    for preset in (mt.PAPER, *mt.MEASURED.values(), gate.PAPER, gate.THRESHOLD_ONLY, gate.DECISIVE,
                   gate.DECISIVE_EVERYDAY):
        assert preset.evidence, preset.name
        assert "evidence" not in {f.name for f in dataclasses.fields(preset)}
