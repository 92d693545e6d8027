"""`python -m bench report`: docs/RESULTS.md renders from the result JSONs present, every section says how to
reproduce it, and figures come from the files (not from the text)."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from bench import report
from bench.report_sections import SECTIONS

ROOT = Path(report.__file__).resolve().parents[1]


def _sections(text: str) -> dict[str, str]:
    parts = re.split(r"^## ", text, flags=re.M)[1:]
    return {p.splitlines()[0]: p for p in parts}


def test_renders_from_the_results_present_and_every_section_has_a_command():
    text = report.render(ROOT)
    sections = _sections(text)
    notes = ("Not measured in this tree", "Result files not reported")
    measured = {t: s for t, s in sections.items() if t not in notes}
    assert len(measured) >= 10
    for title, body in measured.items():
        commands = body.split("Reproduce:", 1)[1]
        block = re.search(r"```bash\n(.+?)```", commands, flags=re.S)
        assert block and block.group(1).strip(), f"section {title!r} lists no command"
        assert "Source: `" in body, f"section {title!r} names no source file"


def test_a_missing_result_leaves_its_section_out_and_says_so(tmp_path):
    (tmp_path / "bench" / "results").mkdir(parents=True)
    shutil.copy(ROOT / "bench" / "results" / "fp8.json", tmp_path / "bench" / "results" / "fp8.json")
    text = report.render(tmp_path)
    sections = _sections(text)
    assert "FP8 bounds" in sections
    assert "NAG" not in sections
    missing = sections["Not measured in this tree"]
    assert "NAG" in missing and "nag.json" in missing


def test_figures_are_read_from_the_json(tmp_path):
    (tmp_path / "bench" / "results").mkdir(parents=True)
    data = json.loads((ROOT / "bench" / "results" / "fp8.json").read_text())
    data["whole_model_bounds"]["seconds_power"] = 123.4
    (tmp_path / "bench" / "results" / "fp8.json").write_text(json.dumps(data))
    assert "123.4 s" in _sections(report.render(tmp_path))["FP8 bounds"]


def test_a_section_without_a_command_is_refused(tmp_path, monkeypatch):
    (tmp_path / "bench" / "results").mkdir(parents=True)
    (tmp_path / "bench" / "results" / "x.json").write_text("{}")
    broken = report.Section("Broken", ("x.json",), lambda ctx: report.Body(["a figure"], []))
    monkeypatch.setattr("bench.report_sections.SECTIONS", [broken])
    with pytest.raises(ValueError, match="no command"):
        report.render(tmp_path)


@pytest.mark.parametrize("recorded, expected", [
    ("nohup .venv/bin/python bench/fp8.py --x 1 > log.txt &", ".venv/bin/python bench/fp8.py --x 1"),
    ("cd /somewhere && .venv/bin/python bench/fp8.py", ".venv/bin/python bench/fp8.py"),
    (".venv/bin/python bench/mt_gemma.py --ablate-types  --out o.json",
     '.venv/bin/python bench/mt_gemma.py --ablate-types "" --out o.json'),
])
def test_recorded_commands_are_cleaned(recorded, expected):
    assert report.clean_command(recorded) == expected


def test_every_section_names_a_result_file():
    assert all(section.files for section in SECTIONS)


def test_the_committed_results_page_is_current():
    out = ROOT / "docs" / "RESULTS.md"
    if not out.exists():
        pytest.skip("docs/RESULTS.md not generated yet")
    assert report.same_figures(out.read_text(), report.render(ROOT)), "run: python -m bench report"


def test_the_readme_headline_figures_are_current_and_link_to_results():
    readme = (ROOT / "README.md").read_text()
    if report.BEGIN not in readme:
        pytest.skip("README has no headline block")
    assert report.readme_with_headline(readme, ROOT) == readme, "run: python -m bench report"
    block = readme.split(report.BEGIN, 1)[1].split(report.END, 1)[0].strip().splitlines()
    anchors = {report.slug(t) for t in _sections(report.render(ROOT))}
    assert block
    for line in block:
        anchor = re.search(r"\(docs/RESULTS\.md#([^)]+)\)", line)
        assert anchor and anchor.group(1) in anchors, line


def test_the_readme_stays_short():
    assert len((ROOT / "README.md").read_text().splitlines()) <= 300


def test_a_kernel_result_renders_with_its_command(tmp_path):
    (tmp_path / "bench" / "results").mkdir(parents=True)
    kernel = {"bench": "kernel", "model": "m", "tokens": 64, "reps": 5, "threads": 1,
              "machine": {"cpu": "x86_64", "device": "cpu"},
              "command": ".venv/bin/python bench/kernel.py --model m --tokens 64 --reps 5 --threads 1",
              "features": {"decoding greedy": {"rows_x_tokens": [1, 64],
                                               "seconds": {"kernel": {"wall_s": 1.02, "cpu_s": 1.0},
                                                           "bare": {"wall_s": 1.0, "cpu_s": 1.0}},
                                               "ratio": {"wall_s": 1.02, "cpu_s": 1.0}}}}
    (tmp_path / "bench" / "results" / "kernel.json").write_text(json.dumps(kernel))
    section = _sections(report.render(tmp_path))["Generation kernel vs a bare transformers loop"]
    assert "1.02×" in section and "1 × 64" in section and "bench/kernel.py --model m" in section


def test_an_unclaimed_result_gets_a_generic_section(tmp_path):
    (tmp_path / "bench" / "results").mkdir(parents=True)
    (tmp_path / "bench" / "results" / "newbench.json").write_text(
        json.dumps({"command": ".venv/bin/python bench/newbench.py --x 1", "speedup": 2.5}))
    (tmp_path / "bench" / "results" / "orphan.json").write_text(json.dumps({"speedup": 2.5}))
    text = report.render(tmp_path)
    section = _sections(text)["newbench (all figures)"]
    assert "2.5" in section and "bench/newbench.py --x 1" in section
    assert "orphan.json" in _sections(text)["Result files not reported"]


def test_the_speculative_sampling_row_shows_its_acceptance_and_verdict(tmp_path):
    (tmp_path / "bench" / "results").mkdir(parents=True)
    name = next(p.name for p in (ROOT / "bench" / "results").glob("speed_vs_generate_*.json"))
    data = json.loads((ROOT / "bench" / "results" / name).read_text())
    for t in data["by_threads"].values():
        t["sampling_x8"]["contestants"]["kernel speculative (int8 draft)"] = {
            "wall_s": 1.0, "tokens_per_s": 1.0, "speed_vs_generate": 1.234, "acceptance_rate": 0.9375}
    (tmp_path / "bench" / "results" / name).write_text(json.dumps(data))
    section = _sections(report.render(tmp_path))["Generation speed against transformers.generate"]
    assert "| kernel speculative (int8 draft) | 1.0 | 1.23× | 93.8% |" in section.replace(" %", "%")
    assert "sampling ×8, speculative (same distribution) 1.23× (target 1.2×): met" in section
