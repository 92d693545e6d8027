"""NAG, FP8 bounds, watermark, corpus jobs."""
from __future__ import annotations

from bench.report import PY, Body, Ctx, Section, num, pct, sec, table, times


def nag(ctx: Ctx) -> Body:
    r = ctx.load("nag.json")
    t = r["throughput"]
    p = r["precision_at_k_mean"]
    d = r["deactivation_summary"]
    rerank = [x["seconds"] for x in r["rerank_new_target"]]
    n_zeroed = r["deactivation"][next(iter(r["deactivation"]))]
    rows = [[f"P@{k} (mean over {len(r['domains'])} domains): NAG / MiniLM embedding / random",
             f"{num(p['nag'][k])} / {num(p['embedding'][k])} / {num(p['random'][k])}"] for k in ("20", "50", "100")]
    rows += [[f"zeroing the top {n_zeroed['neurons_zeroed']} NAG neurons ({pct(n_zeroed['share_of_all_neurons'], 2)}) "
              "vs as many random: target-loss increase, min / median ratio",
              f"{d['ratio_target_min']:.1f}× / {d['ratio_target_median']:.0f}×"],
             ["same, mean loss increase on the target vs other domains (nats)",
              f"{num(d['nag_target_mean'])} vs {num(d['nag_other_mean'])}"]]
    for threads, x in sorted(t["by_threads"].items()):
        rows.append([f"batched vs one-document extraction, {t['documents']} documents, {threads} thread(s), same "
                     f"top-20 sets ({pct(t['identical_top20_layer_sets'], 0)} identical; target ≥ 3×)",
                     f"{times(x['speedup'])} ({x['batched']['tokens_per_s']:.0f} vs {x['naive']['tokens_per_s']:.0f} "
                     "tokens/s)"])
    rows.append([f"features of the {r['pool_documents']}-document pool (cold) / re-ranking for a new target",
                 f"{sec(r['pool_features']['seconds'], 0)} / {sec(min(rerank))}–{sec(max(rerank))}"])
    lines = [f"{r['model']}, a {r['pool_documents']}-document pool over {', '.join(r['domains'])}.", ""]
    return Body(lines + table(["measure", "result"], rows),
                [f"NAG_BENCH_THREADS={r['torch_threads_rest']} NAG_BENCH_DOCS={t['documents']} {PY} bench/nag.py"])


def fp8(ctx: Ctx) -> Body:
    r = ctx.load("fp8.json")
    w, e = r["whole_model_bounds"], r["embedded_bounds"]
    rows = [[f"whole-model bounds, all {w['layers']} layers (with the exact check)",
             f"{sec(w['seconds_power'])} ({sec(w['seconds_power_plus_exact_check'])})", f"< {w['target_seconds']:g} s"]]
    for m in r["sigma_methods"]:
        rows.append([f"{m['model']} (d = {m['d']}): power iteration vs SVD of the formed matrix, per head",
                     f"{m['ms_per_head']['power']:.1f} ms vs {m['ms_per_head']['dense']:.1f} ms "
                     f"({m['dense_over_power']:g}×); max relative deviation {m['power_vs_dense_max_rel_error']:.1e}",
                     None])
    rows.append([f"observed max logit / bound on {e['n_texts']} sample texts ({e['n_tokens']} tokens)",
                 f"{pct(e['min_utilisation'], 0)}–{pct(e['max_utilisation'], 0)} per layer; exceeded: "
                 f"{'yes' if e['bound_ever_exceeded'] else 'never'}", None])
    for name, s in r["transient_simulation"].items():
        rows.append([f"×{s['spike_factor']:g} q/k spike at step {s['spike_step']}, layer {s['layer']}: overflows, "
                     "delayed "
                     "scaling vs geometry-aware", f"{s['overflows_delayed']} vs {s['overflows_geometry']}", None])
    return Body(table(["measure", "result", "target"], rows), [f"{PY} bench/fp8.py"])


def watermark(ctx: Ctx) -> Body:
    r = ctx.load("watermark.json")
    lines = ["Target: ≥ 50× faster than checking every key at 100,000 users, the same attribution.", ""]
    lines += table(["users registered (models)", "hierarchical lookup", "checking every key", "speed-up",
                    "same attribution"],
                   [[f"{x['users']:,} ({x['models']})", f"{x['hierarchical_ms']} ms", f"{x['flat_ms']} ms",
                     f"{x['speedup']}×", "yes" if x["same_attribution"] else "no"] for x in r["latency"]])
    doc = r["document_2000_words"]
    lines += [f"A {doc['words']:,}-word document ({doc['sentences']} sentences, {doc['registry_users']:,} users "
              "registered) checked end to end: " + ", ".join(
                  f"{sec(v['seconds'], 2)} on {k} torch thread(s) (retrieval {sec(v['retrieval_seconds'], 2)})"
                  for k, v in sorted(doc["by_torch_threads"].items())) + " (target < 2 s).", ""]
    ev = r["evaluation"]
    det = {}
    for x in ev["detection"]:
        det.setdefault(x["condition"], {})[x["method"]] = x
    methods = list(dict.fromkeys(x["method"] for x in ev["detection"]))
    first = ev["detection"][0]
    lines += [f"Detection ({first['n_pos']} watermarked texts, {first['n_neg']} negatives): AUC / TPR at 1% FPR / TPR "
              "of the default decision.", ""]
    lines += table(["condition", *methods],
                   [[c, *[None if m not in v else f"{v[m]['auc']:.3f} / {v[m]['tpr_1']:g} / {v[m]['tpr_decision']:g}"
                          for m in methods]] for c, v in det.items()])
    lines += table(["method", "median perplexity", "seconds per sentence", "candidates per sentence"],
                   [[q["method"], num(q["ppl_median"]), ev["generation_costs"][q["method"]]["seconds_per_sentence"],
                     ev["generation_costs"][q["method"]]["candidates_per_sentence"]] for q in ev["quality"]])
    lines += table(["sentences", "texts", "model attributed", "user attributed"],
                   [[a["sentences"], a["n_texts"], num(a["model_accuracy"]), num(a["user_accuracy"])]
                    for a in ev["attribution"]])
    return Body(lines, [f"{PY} -m backend watermark evaluate --json", f"{PY} bench/watermark.py --eval-only",
                        f"{PY} bench/watermark.py --skip-eval"])


def watermark_length(ctx: Ctx) -> Body:
    r = ctx.load("watermark_length.json")
    rows = r["replayed"]
    lines = [f"{r['model']}, {r['models']} models × {r['users_per_model']} users, {r['candidates_per_sentence']} "
             f"candidates per sentence: {r['texts_generated']} generated {r['requested_sentences']}-sentence texts, "
             f"each replayed with every user's keys of its model ({r['replayed_trials']} trials).", ""]
    lines += table(["sentences", *[x["sentences"] for x in rows]], [
        ["model (best guess)", *[num(x["model_accuracy"]) for x in rows]],
        ["user (best guess)", *[num(x["user_accuracy"]) for x in rows]],
        ["user named (corrected p ≤ 1e-3)", *[num(x["user_decided"]) for x in rows]],
        ["flagged as watermarked", *[num(x["flagged"]) for x in rows]]])
    return Body(lines, [f"OMP_NUM_THREADS=1 {PY} bench/watermark_length.py --texts {r['texts_generated']} "
                        f"--sentences {r['requested_sentences']} --users {r['users_per_model']}"])


def corpus(ctx: Ctx) -> Body:
    r = ctx.load("corpus_jobs.json")
    rows = [["NAG features", k, sec(v["seconds"]), num(v["docs_per_s"], 1), times(v["vs_local_path"])]
            for k, v in r["runs"].items()]
    rows += [[f"watermark scan", k, sec(v["seconds"]), num(v["docs_per_s"], 1), times(v["vs_local"])]
             for k, v in r["watermark_scan"].items()]
    lines = [f"{r['documents']} documents in {r['shards']} JSONL shards, {r['model']}, {r['max_length']} tokens per "
             f"document, each configuration on a fresh store; {r['cpus']} CPUs, load average {r['load_average_start']} "
             "at the start.", ""]
    lines += table(["job", "engine", "time", "documents/s", "vs local (target for Ray, 1 worker: ≤ 1.2×)"], rows)
    lines += [f"Starting a local Ray: {sec(r['ray_start_seconds'])}; 2 vs 1 workers: "
              f"{times(r['ray_speedup_2_vs_1_workers'])}; per worker on one CPU {r['per_worker_docs_per_s']} "
              f"documents/s; reading JSONL {r['read_docs_per_s']:,.0f} documents/s, tokenising "
              f"{r['tokenise_docs_per_s']:,.0f}.", ""]
    return Body(lines, [f"CORPUS_BENCH_SHARDS={r['shards']} CORPUS_BENCH_DOCS={r['documents'] // r['shards']} "
                        f"{PY} bench/corpus_jobs.py"])


SECTIONS = [
    Section("NAG", ("nag.json",), nag),
    Section("FP8 bounds", ("fp8.json",), fp8),
    Section("Watermark: retrieval, detection, attribution", ("watermark.json",), watermark),
    Section("Watermark: attribution by length", ("watermark_length.json",), watermark_length),
    Section("Corpus jobs on Ray", ("corpus_jobs.json",), corpus),
]
