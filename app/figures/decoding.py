"""Figures of decoding runs: ESS over time, particle genealogy, MH acceptance, batch comparisons.

Pure functions from `backend.decoding` results to plotly figures (and small tables), no Streamlit.
"""
from __future__ import annotations

from dataclasses import asdict

import numpy as np
import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from app.figures.axes import log_axis
from app.figures.clickable import Pickable
from backend.decoding import AggregateRow, BatchResult, DecodeResult
from backend.significance import wilson_interval


def _empty(text: str, height: int = 280) -> go.Figure:
    fig = go.Figure()
    fig.add_annotation(text=text, showarrow=False)
    return fig.update_layout(height=height, xaxis_visible=False, yaxis_visible=False)


def results_table(results: list[DecodeResult], labels: dict[str, str] | None = None,
                  problem: str | None = None) -> pd.DataFrame:
    """One row per run: output, correctness, latency, tokens and the particle / MH diagnostics. `problem`: the
    problem as the page names it, in place of its id (a shipped set's problems carry the id of an upload's line)."""
    rows = []
    for r in results:
        row = r.summary()
        row["strategy"] = (labels or {}).get(r.strategy, r.strategy)
        if problem is not None:
            row = {"problem" if k == "problem_id" else k: problem if k == "problem_id" else v for k, v in row.items()}
        rows.append(row)
    return pd.DataFrame(rows)


def aggregate_table(rows: tuple[AggregateRow, ...]) -> pd.DataFrame:
    """The stored benchmark beside the first view: accuracy with its 95% Wilson interval, p95 latency."""
    return pd.DataFrame([{"strategy": r.label, "accuracy": f"{r.accuracy:.1%}",
                          "95% interval": f"{r.low:.1%} - {r.high:.1%}", "correct": f"{r.correct} / {r.problems}",
                          "p95 latency (s)": r.p95_latency_s} for r in rows])


# what a click opens (the particle drill-down): a step of a round on the ESS chart (its heaviest particle's child),
# a particle after a step on the genealogy; steps count from 0
STEP = Pickable("step", ("round", "step"))
PARTICLE = Pickable("particle", ("round", "step", "row"))


def ess_over_time(result: DecodeResult, threshold: float | None = None) -> go.Figure:
    """ESS / N after each token, one line per SMC round, resampling events marked with x."""
    if not result.particles:
        return _empty("ESS is recorded for particle methods (ASMC): run ASMC to see it.")
    fig = go.Figure()
    for k, p in enumerate(result.particles, 1):
        steps = np.arange(1, p.ess.size + 1)
        ratio = p.ess / p.n
        rounds = np.full(p.ess.size, k - 1)
        fig.add_trace(go.Scatter(x=steps, y=ratio, mode="lines+markers", marker_size=4, name=f"round {k} (N={p.n})",
                                 customdata=STEP.rows(rounds, steps - 1),
                                 hovertemplate="token %{x}<br>ESS/N %{y:.2f}<extra></extra>"))
        res = p.resampled.nonzero()[0]
        fig.add_trace(go.Scatter(x=steps[res], y=ratio[res], mode="markers", marker_symbol="x", marker_size=9,
                                 name=f"resampled (round {k})",
                                 customdata=STEP.rows(rounds[res], steps[res] - 1, extras=(p.unique_parents[res],)),
                                 hovertemplate="token %{x}: resampled<br>%{customdata[3]} distinct ancestors"
                                               "<extra></extra>"))
    if threshold is not None:
        fig.add_hline(y=threshold, line_dash="dot", annotation_text="resampling threshold")
    return fig.update_layout(height=340, margin=dict(t=30, b=10), xaxis_title="generated token",
                             yaxis_title="ESS / N", yaxis_range=[0, 1.05], legend_title_text="",
                             clickmode="event+select")


def genealogy(result: DecodeResult, round_index: int = -1) -> go.Figure:
    """Particle genealogy: a segment from each particle's parent at token t-1 to the particle at t.
    Lineages that reach a final particle are dark; extinct branches are light."""
    if not result.particles:
        return _empty("The genealogy exists for particle methods (ASMC).")
    p = result.particles[round_index]
    steps, n = p.genealogy.shape
    alive = np.zeros((steps, n), dtype=bool)  # row i at step t has descendants at the end
    alive[-1] = True
    for t in range(steps - 1, 0, -1):
        alive[t - 1, p.genealogy[t][alive[t]]] = True
    segments = {True: ([], []), False: ([], [])}
    for t in range(1, steps):
        for i in range(n):
            xs, ys = segments[bool(alive[t, i])]
            xs += [t, t + 1, None]
            ys += [int(p.genealogy[t, i]), i, None]
    fig = go.Figure()
    for survived, color, name in ((False, "rgba(150,150,150,0.35)", "extinct"), (True, "#2f5d9e", "surviving")):
        xs, ys = segments[survived]
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", line=dict(color=color, width=1.5), name=name,
                                 hoverinfo="skip"))
    nodes_t, nodes_i = np.divmod(np.arange(steps * n), n)  # a node per particle after each step: the drill-down's
    fig.add_trace(go.Scatter(x=nodes_t + 1, y=nodes_i, mode="markers", name="particles", showlegend=False,
                             marker=dict(size=5, color=np.where(alive.ravel(), "#2f5d9e", "rgba(150,150,150,0.5)")),
                             customdata=PARTICLE.rows(np.full(steps * n, round_index % len(result.particles)),
                                                      nodes_t, nodes_i),
                             hovertemplate="token %{x}, particle %{y}<extra>click: its text and weights</extra>"))
    for t in p.resampled.nonzero()[0]:  # resampling after token t+1 rewires the segments from x=t to x=t+1
        fig.add_vline(x=int(t) + 0.5, line_color="rgba(200,80,60,0.35)", line_width=1)
    events, lineages = p.resampling_events, int(p.lineages[-1])
    # particles are whole numbers: ticks on them only (Plotly's own put ticks at 0.5, 1.5 for a few particles)
    return fig.update_layout(height=360, margin=dict(t=30, b=10), xaxis_title="generated token",
                             yaxis=dict(title="particle", tickmode="linear", tick0=0, dtick=max(1, -(-n // 16))),
                             legend_title_text="", clickmode="event+select",
                             title=f"N={p.n}: {events} resampling event{'' if events == 1 else 's'} (red), "
                                   f"{lineages} first-token lineage{' survives' if lineages == 1 else 's survive'}")


def mh_acceptance(result: DecodeResult) -> go.Figure:
    """Log acceptance ratio of every MH step (accepted filled, rejected open) and the running acceptance rate."""
    mh = result.mh
    if mh is None or mh.accepted.size == 0:
        return _empty("The acceptance plot exists for MH power sampling with at least one MH step.")
    step = np.arange(1, mh.accepted.size + 1)
    log_r = np.clip(mh.log_ratio, -20, 20)
    fig = go.Figure()
    for accepted, symbol, name in ((True, "circle", "accepted"), (False, "circle-open", "rejected")):
        mask = mh.accepted == accepted
        fig.add_trace(go.Scatter(x=step[mask], y=log_r[mask], mode="markers", marker_symbol=symbol, name=name,
                                 customdata=np.stack([mh.block[mask], mh.position[mask]], axis=-1),
                                 hovertemplate="step %{x}, block %{customdata[0]}, idx %{customdata[1]}<br>"
                                               "log r %{y:.2f}<extra></extra>"))
    running = np.cumsum(mh.accepted) / step
    fig.add_trace(go.Scatter(x=step, y=running, mode="lines", name="acceptance rate", yaxis="y2"))
    return fig.update_layout(height=340, margin=dict(t=30, b=10), xaxis_title="MH step",
                             yaxis_title="log acceptance ratio (clipped to ±20)", legend_title_text="",
                             yaxis2=dict(title="acceptance rate", overlaying="y", side="right", range=[0, 1.05]))


def side_by_side(results: list[DecodeResult], labels: dict[str, str] | None = None) -> go.Figure:
    """Latency and generated tokens per strategy; bar colour = correctness."""
    if not results:
        return _empty("No runs yet.")
    frame = results_table(results, labels)
    frame["result"] = frame["correct"].map({True: "correct", False: "wrong"}).fillna("no checker")
    fig = go.Figure()  # graph objects: plotly express took ~0.1 s of the server's CPU on every page run
    for result, colour in (("correct", "#4c9a5a"), ("wrong", "#c0504d"), ("no checker", "#7f8c9a")):
        rows = frame[frame["result"] == result]
        if rows.empty:
            continue
        fig.add_trace(go.Bar(
            x=rows["strategy"], y=rows["wall_seconds"], name=result, marker_color=colour,
            text=rows["tokens_generated"], texttemplate="%{text} tok", textposition="outside",
            customdata=rows[["forward_passes", "answer"]].astype(str).to_numpy(),
            hovertemplate=("%{x}: %{y:.2f} s, %{text} tokens<br>forward passes %{customdata[0]}<br>"
                           "answer %{customdata[1]}<extra>" + result + "</extra>")))
    return fig.update_layout(height=320, margin=dict(t=30, b=10), legend_title_text="", xaxis_title="strategy",
                             yaxis_title="latency (s)", barmode="relative")


def candidates_table(result: DecodeResult) -> pd.DataFrame:
    """The sequences best-of-n or ASMC chose from, heaviest first."""
    frame = pd.DataFrame([asdict(c) for c in result.candidates])
    return frame.sort_values("weight", ascending=False) if not frame.empty else frame


def batch_table(batch: BatchResult) -> pd.DataFrame:
    """Per setting: accuracy, mean / p95 latency, mean generated tokens."""
    return pd.DataFrame(batch.summary())


def batch_rows(batch: BatchResult) -> pd.DataFrame:
    """One row per (setting, problem)."""
    return pd.DataFrame([asdict(r) for r in batch.rows])


def batch_summary(batch: BatchResult) -> go.Figure:
    """Accuracy (bars) and mean / p95 latency (markers, right axis) per setting."""
    frame = batch_table(batch)
    fig = go.Figure(go.Bar(x=frame["label"], y=frame["accuracy"], name="accuracy", marker_color="#4a7ab5"))
    for col, symbol in (("mean_latency_s", "circle"), ("p95_latency_s", "diamond")):
        fig.add_trace(go.Scatter(x=frame["label"], y=frame[col], mode="markers", marker_symbol=symbol,
                                 marker_size=11, name=col.replace("_s", " (s)").replace("_", " "), yaxis="y2"))
    return fig.update_layout(height=340, margin=dict(t=30, b=10), yaxis=dict(title="accuracy", range=[0, 1.05]),
                             yaxis2=dict(title="latency (s)", overlaying="y", side="right", rangemode="tozero"),
                             legend_title_text="")


def collapse_vs_correct(batch: BatchResult) -> go.Figure:
    """ESS_min / N of each particle run against its correctness: does collapse predict failure?"""
    frame = pd.DataFrame([asdict(r) for r in batch.rows if r.ess_min_ratio is not None])
    if frame.empty or frame["correct"].isna().all():
        return _empty("Needs ASMC runs on problems with a checker.")
    frame["result"] = frame["correct"].map({True: "correct", False: "wrong"})
    fig = px.strip(frame, x="result", y="ess_min_ratio", color="label", hover_data=["problem_id"],
                   labels={"ess_min_ratio": "ESS_min / N", "result": ""})
    return fig.update_layout(height=320, margin=dict(t=30, b=10), yaxis_range=[0, 1.05], legend_title_text="")


def accuracy_vs_budget(batch: BatchResult) -> go.Figure:
    """Accuracy against mean generated tokens per problem, one line per strategy (points = budgets)."""
    return accuracy_curves(batch_table(batch))


def _wilson_columns(frame: pd.DataFrame) -> dict[str, list]:
    """Error-bar lengths and a label from each row's accuracy and scored count ("checked", else "problems")."""
    counts = frame["checked"] if "checked" in frame else frame["problems"]
    above, below, label = [], [], []
    for accuracy, n in zip(frame["accuracy"], counts):
        if accuracy is None or pd.isna(accuracy) or not n:
            above.append(None), below.append(None), label.append("")
            continue
        low, high = wilson_interval(round(accuracy * n), int(n))
        above.append(high - accuracy), below.append(accuracy - low), label.append(f"{low:.0%}-{high:.0%}")
    return {"ci_above": above, "ci_below": below, "95% CI": label}


def accuracy_curves(frame: pd.DataFrame, y: str = "accuracy") -> go.Figure:
    """`y` against mean generated tokens per problem from a batch summary (run here or a stored benchmark)."""
    if frame.empty or frame[y].isna().all():
        return _empty("Needs problems with a checker.")
    frame = frame.sort_values("mean_tokens")
    bars = {}
    if y == "accuracy":  # Wilson 95% intervals: a few dozen problems leave wide ones
        frame = frame.assign(**_wilson_columns(frame))
        bars = dict(error_y="ci_above", error_y_minus="ci_below")
    fig = px.line(frame, x="mean_tokens", y=y, color="strategy", markers=True,
                  hover_data=["label", "budget", "p95_latency_s", *(["95% CI"] if bars else [])], log_x=True,
                  labels={"mean_tokens": "generated tokens per problem (log)", y: y.replace("_", " ")}, **bars)
    fig.update_layout(height=340, margin=dict(t=30, b=10), legend_title_text="")
    fig.update_xaxes(log_axis(frame["mean_tokens"]))
    return fig.update_layout(yaxis_range=[0, 1.05]) if y.startswith("accuracy") else fig


def particle_weights(d, label: str = "") -> go.Figure:
    """A particle's normalised weight along its ancestry (backend.decoding.particle.ParticleResult) beside the
    population's ESS / N, resampling events on its ancestry marked (red: a step where its line replaced another)."""
    steps = np.arange(1, d.step + 2)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=steps, y=d.weights, mode="lines+markers", name="its weight (normalised)",
                             customdata=np.stack([d.ancestry, d.log_weights], axis=1),
                             hovertemplate="token %{x}: weight %{y:.3f} (log %{customdata[1]:.3f}), "
                                           "row %{customdata[0]}<extra></extra>"))
    fig.add_trace(go.Scatter(x=steps, y=d.ess / d.n, mode="lines", line=dict(dash="dot"), name="ESS / N"))
    for r in d.replacements:
        fig.add_vline(x=r.step + 1, line_color="#d62728" if r.replaced is not None else "rgba(120,120,120,0.4)")
    fig.add_hline(y=1 / d.n, line_dash="dash", line_color="#999", annotation_text="1/N")
    return fig.update_layout(height=300, margin=dict(t=40, b=10), xaxis_title="generated token",
                             yaxis_title="weight / ESS ratio", yaxis_range=[0, 1.05], legend_title_text="",
                             title=f"Particle {d.row} after token {d.step + 1}" + (f" · {label}" if label else ""))
