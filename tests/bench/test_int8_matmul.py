"""bench/int8_matmul.py (candidate int8 products, side by side) and bench/int8_decode.py (the native kernel against
PyTorch's op end to end), on small shapes and the tiny model, and the report section they feed."""
import json

import pytest
import torch

from bench import int8_native, report
from bench.int8_matmul import SHAPES, candidates
from bench.report_sections.int8 import CURRENT, LAYERS, NATIVE, STEP, _step_us
from tests.support.trial_kernel import trial_kernel_allowed


@pytest.fixture(autouse=True)
def no_trial_build(monkeypatch):
    """Where the trial kernel may not take part (tests/support/trial_kernel.py), these tests take the benches' own
    path for a machine that cannot build it."""
    if not trial_kernel_allowed():
        monkeypatch.setattr(int8_native, "kernel", lambda: None)


def test_every_candidate_computes_the_rounded_product():
    torch.manual_seed(0)
    weight = torch.randn(96, 128) * 0.02
    kernels = candidates(weight, compile_int8=False)
    assert CURRENT in kernels and "fp32 F.linear" in kernels
    assert (NATIVE in kernels) == (int8_native.kernel() is not None)
    x = torch.randn(3, 128)
    exact = kernels["fp32 F.linear"].run(x)
    for name, kernel in kernels.items():
        y = kernel.run(x.to(kernel.dtype)).float()
        bound = 0.2 if "int4" in name else 0.02  # int4 rounds the int8 weights again, coarsely
        assert (y - exact).abs().max() < bound * exact.abs().max(), name
        assert kernel.bytes >= weight.numel() // 2


def test_a_step_sums_every_layer_product_and_keeps_the_head_apart():
    results = [{"shape": s, "kernel": "k", "rows": 1, "threads": 1, "us_per_call": float(i + 1)}
               for i, s in enumerate(SHAPES)]
    layers, head = _step_us(results, "k", 1, 1)
    per_call = {s: float(i + 1) for i, s in enumerate(SHAPES)}
    assert layers == LAYERS * sum(n * per_call[s] for s, n in STEP.items()) and head == per_call["head 576->49152"]
    assert _step_us(results, "k", 8, 1) is None  # not measured at 8 rows


def test_the_decode_race_keeps_fp32_tokens_in_checked_chunks_and_renders(tmp_path, monkeypatch):
    if int8_native.kernel() is None:
        pytest.skip("the trial int8 kernel cannot be built here (AVX-512, a C++ compiler and ninja): nothing to race")
    from backend.models import speculative
    from bench.int8_decode import run

    monkeypatch.setattr(speculative, "MIN_NEW_TOKENS", 1)  # the tiny model's runs are short
    out = run("tiny-llama", threads=1, tokens=8, reps=1, n_prompts=2, sample_tokens=4)
    rows = out["contestants"]
    for name in ("checked chunks, native int8 draft", "checked chunks, torch-op int8 draft"):
        assert rows[name]["prompts_identical_to_fp32"] == 2, name  # the draft only guesses
    assert rows["kernel int8, native kernel"]["share_of_bandwidth_bound"] > 0
    assert 0 <= rows["speculative sampling x8, native int8 draft"]["acceptance_rate"] <= 1

    results = tmp_path / "bench" / "results"
    results.mkdir(parents=True)
    matmul = {"torch": "t", "bandwidth_gb_per_s": {"1": 10.0}, "footprint_mb": 8, "rounds": 1,
              "load_average_start": 1.0, "load_average_end": 1.0, "command": ".venv/bin/python -m bench.int8_matmul",
              "results": [{"shape": s, "kernel": k, "rows": 1, "threads": 1, "us_per_call": us, "gb_per_s": 1.0,
                           "relative_error": 1e-3} for s in SHAPES for k, us in ((CURRENT, 30.0), (NATIVE, 20.0))]}
    (results / "int8_matmul.json").write_text(json.dumps(matmul))
    (results / "int8_decode.json").write_text(json.dumps(out | {"load_average_start": 1.0, "load_average_end": 1.0,
                                                                  "command": ".venv/bin/python bench/int8_decode.py"}))
    section = report.render(tmp_path).split("## The int8 copy's matrix product")[1].split("\n## ")[0]
    assert "(1.50×)" in section and "checked chunks, native int8 draft" in section
    assert "bench/int8_decode.py" in section


def test_a_cell_slower_with_more_threads_is_marked_as_hit_by_load():
    from bench.report_sections.int8 import _kernel_rows

    def at(threads, current_us, native_us):
        return [{"shape": s, "kernel": k, "rows": 1, "threads": threads, "us_per_call": us, "relative_error": 1e-3}
                for s in SHAPES for k, us in ((CURRENT, current_us), (NATIVE, native_us))]

    rows, header = _kernel_rows({"results": at(1, 30.0, 20.0) + at(2, 20.0, 12.0)})
    assert header[1:3] == ["1 row(s), 1 thread(s)", "1 row(s), 2 thread(s)"]
    assert not any("†" in str(cell) for row in rows for cell in row)
    rows, _ = _kernel_rows({"results": at(1, 30.0, 20.0) + at(2, 90.0, 12.0)})  # the current op hit at 2 threads
    assert all(row[2].endswith("†") and not row[1].endswith("†") for row in rows)
