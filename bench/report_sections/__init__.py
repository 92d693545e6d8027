"""The sections of docs/RESULTS.md, in order: one renderer per benchmark output (see bench/report.py)."""
from __future__ import annotations

from bench.report_sections import (app, convexbench, decoding, disagreement, drilldown_clicks, drilldowns_dis_dec_fp8,
                                   drilldowns_mt_nag, estimates, features, inspect_drilldowns, inspect_graph, inspect_inseq,
                                   inspect_memory, inspect_patching, inspect_tl, int8, mt, partial_stream, reasoning, speed,
                                   watermark_compare, watermark_first)

SECTIONS = [*app.SECTIONS, *estimates.SECTIONS, *speed.SECTIONS, *int8.SECTIONS, *decoding.SECTIONS, *convexbench.SECTIONS, *disagreement.SECTIONS, *reasoning.SECTIONS,
            *mt.SECTIONS, *drilldowns_mt_nag.SECTIONS, *features.SECTIONS, *watermark_compare.SECTIONS,
            *watermark_first.SECTIONS, *drilldowns_dis_dec_fp8.SECTIONS, *drilldown_clicks.SECTIONS, *partial_stream.SECTIONS,
            *inspect_tl.SECTIONS,
            *inspect_drilldowns.SECTIONS,
            *inspect_graph.SECTIONS, *inspect_patching.SECTIONS, *inspect_inseq.SECTIONS, *inspect_memory.SECTIONS]
