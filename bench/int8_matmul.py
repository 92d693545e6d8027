"""Candidate kernels for the int8 copy's Linear layers (issue 57 §4), side by side on SmolLM2-135M's shapes.

A profile of an int8 decode step puts ~80 % of it in `_weight_int8pack_mm`, at about a third of the bandwidth
bound, so this measures one Linear at a time: for every shape of SmolLM2's layers (and its head), every row count a
caller uses (1: greedy; 4, 8, 32: checking chunks and sampling rows) and every thread count, the weight bytes each
kernel reads per second. Each kernel cycles through enough copies of its weight (--footprint-mb of int8 bytes, so
more for wider formats) that the product reads memory, as a decode step does, not a cache. Candidates are
interleaved within each round, and the figure is the median of --rounds rounds.

Every candidate computes from the same per-row int8 weight (int4 rounds it further); its numbers are checked
against the dequantized fp32 product (largest absolute error, relative to the largest output). The native candidate
is the trial kernel kept in bench/ (bench/int8_native.py, not used by the app), measured where it builds.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

SHAPES = {"q/o 576->576": (576, 576), "k/v 576->192": (192, 576), "gate/up 576->1536": (1536, 576),
          "down 1536->576": (576, 1536), "head 576->49152": (49152, 576)}  # name -> (out, in)
INT4_GROUP = 64
NATIVE = "native int8 (fp32 x, bench/int8_linear.cpp)"  # the trial kernel (bench/int8_native.py)


@dataclass
class Kernel:
    """One candidate built for one weight: `run(x)` computes x @ W.T; `bytes` is what one call reads."""
    run: Callable
    bytes: int
    dtype: object  # the activation dtype the kernel takes


def _per_row_int8(weight):
    import torch

    scale = weight.abs().amax(dim=1).clamp(min=1e-12) / 127.0
    q = torch.round(weight / scale[:, None]).clamp(-127, 127).to(torch.int8).contiguous()
    return q, scale


def _int4_groupwise(dequantized, group: int):
    """Symmetric groupwise int4 in the layout of `_weight_int4pack_mm_for_cpu`: w = (q - 8) * scale + zero."""
    import torch

    out_features, in_features = dequantized.shape
    grouped = dequantized.reshape(out_features, in_features // group, group)
    scale = grouped.abs().amax(dim=2).clamp(min=1e-12) / 7.0
    q = (torch.round(grouped / scale[..., None]).clamp(-8, 7) + 8).to(torch.int32).reshape(out_features, in_features)
    packed = torch.ops.aten._convert_weight_to_int4pack_for_cpu(q, 1)
    scale_zeros = torch.stack([scale, torch.zeros_like(scale)], dim=2).transpose(0, 1).contiguous()  # [K/g, N, 2]
    return packed, scale_zeros


def candidates(weight, compile_int8: bool) -> dict[str, Kernel]:
    """name -> Kernel for one fp32 weight `[out, in]`."""
    import torch
    import torch.nn.functional as F

    q, scale = _per_row_int8(weight)
    dequantized = q.float() * scale[:, None]
    out_features, in_features = weight.shape
    scale_bf16, bf16 = scale.to(torch.bfloat16), dequantized.to(torch.bfloat16)
    kernels = {
        "int8pack_mm (bf16 x, current)": Kernel(
            lambda x: torch.ops.aten._weight_int8pack_mm(x, q, scale_bf16), q.numel() + 2 * out_features,
            torch.bfloat16),
        "int8pack_mm (fp32 x)": Kernel(
            lambda x: torch.ops.aten._weight_int8pack_mm(x, q, scale), q.numel() + 4 * out_features, torch.float32),
        "fp32 F.linear": Kernel(lambda x: F.linear(x, dequantized), 4 * q.numel(), torch.float32),
        "bf16 F.linear": Kernel(lambda x: F.linear(x, bf16), 2 * q.numel(), torch.bfloat16),
    }
    if torch._C.has_mkl:
        packed = torch.ops.mkl._mkl_reorder_linear_weight(dequantized, 1)
        kernels["fp32 MKL packed (1 row)"] = Kernel(
            lambda x: torch.ops.mkl._mkl_linear(x, packed, dequantized, None, 1), 4 * q.numel(), torch.float32)
    if torch.backends.mkldnn.is_available():
        onednn_bf16 = torch.ops.mkldnn._reorder_linear_weight(bf16, 1)
        kernels["bf16 oneDNN linear"] = Kernel(
            lambda x: torch.ops.mkldnn._linear_pointwise(x, onednn_bf16, None, "none", [None], ""),
            2 * q.numel(), torch.bfloat16)
    if in_features % INT4_GROUP == 0:
        packed4, scale_zeros = _int4_groupwise(dequantized, INT4_GROUP)
        scale_zeros_bf16 = scale_zeros.to(torch.bfloat16)
        kernels[f"int4pack_mm g{INT4_GROUP} (bf16 x)"] = Kernel(
            lambda x: torch.ops.aten._weight_int4pack_mm_for_cpu(x, packed4, INT4_GROUP, scale_zeros_bf16),
            packed4.numel() + scale_zeros_bf16.numel() * 2, torch.bfloat16)
    from bench.int8_native import kernel

    native = kernel()
    if native is not None:
        kernels[NATIVE] = Kernel(lambda x: native(x, q, scale), q.numel() + 4 * out_features, torch.float32)
    if compile_int8:
        def dequant_matmul(x, w, s):  # the weight-only int8 pattern inductor matches on CPU
            return F.linear(x, w.to(x.dtype)) * s
        for mode in ("default", "max-autotune"):
            fn = torch.compile(dequant_matmul, mode=None if mode == "default" else mode, dynamic=False)
            kernels[f"compiled dequant-matmul ({mode}, bf16 x)"] = Kernel(
                (lambda f: lambda x: f(x, q, scale_bf16))(fn), q.numel() + 2 * out_features, torch.bfloat16)
    return kernels


def _time_cycle(x, copies_of: list[Callable]) -> float:
    """Seconds per call, cycling through the weight copies (one call per copy)."""
    start = time.perf_counter()
    for fn in copies_of:
        fn(x)
    return (time.perf_counter() - start) / len(copies_of)


def measure(shape_name: str, rows: list[int], threads: list[int], footprint_mb: int, rounds: int,
            compile_int8: bool) -> list[dict]:
    import torch

    torch.manual_seed(0)
    out_features, in_features = SHAPES[shape_name]
    copies = max(1, -(-footprint_mb * 2**20 // (out_features * in_features)))
    weights = [torch.randn(out_features, in_features) * 0.02 for _ in range(copies)]
    built = [candidates(w, compile_int8) for w in weights]
    names = list(built[0])
    results = []
    for n_threads in threads:
        torch.set_num_threads(n_threads)
        for m in rows:
            x32 = torch.randn(m, in_features)
            inputs = {torch.float32: x32, torch.bfloat16: x32.to(torch.bfloat16)}
            reference = x32 @ (_per_row_int8(weights[0])[0].float() * _per_row_int8(weights[0])[1][:, None]).T
            errors, compile_s = {}, {}
            for name in names:  # warm up (and compile) each candidate, then check its numbers
                start = time.perf_counter()
                with torch.no_grad():
                    y = built[0][name].run(inputs[built[0][name].dtype]).float()
                compile_s[name] = time.perf_counter() - start
                errors[name] = float((y - reference).abs().max() / reference.abs().max())
                with torch.no_grad():
                    for kernels in built:
                        kernels[name].run(inputs[kernels[name].dtype])
            seconds = {name: [] for name in names}
            with torch.no_grad():
                for _ in range(rounds):
                    for name in names:
                        x = inputs[built[0][name].dtype]
                        seconds[name].append(_time_cycle(x, [k[name].run for k in built]))
            for name in names:
                per_call = statistics.median(seconds[name])
                results.append({"shape": shape_name, "out": out_features, "in": in_features, "rows": m,
                                "threads": n_threads, "kernel": name, "us_per_call": per_call * 1e6,
                                "weight_bytes": built[0][name].bytes,
                                "gb_per_s": built[0][name].bytes / per_call / 1e9,
                                "relative_error": errors[name], "first_call_s": compile_s[name],
                                "copies": copies})
                print(f"{shape_name:18s} M={m:<3d} t={n_threads} {name:40s} {per_call * 1e6:9.1f} us "
                      f"{results[-1]['gb_per_s']:6.1f} GB/s  err {errors[name]:.1e}", flush=True)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shapes", nargs="*", default=list(SHAPES), choices=list(SHAPES))
    parser.add_argument("--rows", nargs="*", type=int, default=[1, 4, 8, 32])
    parser.add_argument("--threads", nargs="*", type=int, default=[1, 2])
    parser.add_argument("--footprint-mb", type=int, default=96, help="int8 bytes of weight copies cycled through")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--compile", action="store_true", help="also torch.compile the dequant-matmul pattern")
    parser.add_argument("--out", default="bench/results/int8_matmul.json")
    args = parser.parse_args()

    import torch

    from bench.bandwidth import measured_bandwidth

    load_start = os.getloadavg()[0]
    bandwidth = {}
    for n in args.threads:
        torch.set_num_threads(n)
        bandwidth[n] = measured_bandwidth()
    rows = []
    for shape in args.shapes:
        rows += measure(shape, args.rows, args.threads, args.footprint_mb, args.rounds, args.compile)
    result = {"bench": "int8_matmul", "torch": torch.__version__, "bandwidth_gb_per_s":
              {str(n): b / 1e9 for n, b in bandwidth.items()}, "footprint_mb": args.footprint_mb,
              "rounds": args.rounds, "load_average_start": load_start, "load_average_end": os.getloadavg()[0],
              "command": ".venv/bin/python -m bench.int8_matmul " + " ".join(
                  f"{k} {' '.join(repr(x) if ' ' in str(x) else str(x) for x in v) if isinstance(v, list) else v}"
                  for k, v in (("--shapes", args.shapes), ("--rows", args.rows), ("--threads", args.threads),
                               ("--footprint-mb", args.footprint_mb), ("--rounds", args.rounds)))
              + (" --compile" if args.compile else "") + f" --out {args.out}",
              "results": rows}
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    print("bandwidth GB/s", {n: round(b / 1e9, 1) for n, b in bandwidth.items()}, "load", load_start,
          os.getloadavg()[0])


if __name__ == "__main__":
    main()
