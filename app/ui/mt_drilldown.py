"""MT heads page: the drill-down under the head maps. A click on either map (or the scatter) chooses a head; the
section reads it with `backend.mt.head_detail` and offers to steer with it. The drill-downs of every head of the
map shown are prepared right after it (`app.ui.prepared_drilldowns`), so a click reads the store; a click before
they are stored computes its own head at once (patched alone, seconds) instead of waiting for the preparation."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from app.figures.mt_head import attention_row, patching_per_prompt, vocab_effects
from app.figures.clickable import HEAD
from app.ui.drilldown import Clicked, Drilldown, within
from app.ui.prepared_drilldowns import prepare_drilldowns
from app.ui.run import run_verb
from backend.mt.head_detail import HeadDetailConfig, head_detail, map_head_details
from backend.mt.selection import MAX_PERCENT, head_count, top_heads

MT_HEAD = Drilldown("mt-drill-head", (HEAD,))  # from either head map or the scatter


def steering_share(scores, layer: int, head: int) -> float | None:
    """The smallest head share (percent, 0.1 steps) whose top heads of the map include (layer, head); None when
    the head ranks beyond the steering section's 5% cap."""
    n_layers, n_heads = scores.shape
    order = top_heads(scores, MAX_PERCENT)
    if (layer, head) not in order:
        return None
    rank = order.index((layer, head)) + 1
    # the slider's 0.1 steps: the first share whose head count reaches the rank (head_count's rounding decides)
    return next(share for share in (round(0.1 * i, 1) for i in range(1, int(MAX_PERCENT * 10) + 1))
                if head_count(n_layers, n_heads, share) >= rank)


def _steer_with(share: float, head_type: str) -> None:
    st.session_state["mt-percent"] = share  # before the widgets exist: a button callback runs first on rerun
    st.session_state["mt-steer-types"] = [head_type]


def head_drilldown(handle, head_map, data, chart: Clicked) -> None:
    # every head of the map shown, on its first prompt (the selectbox's default): a click is then a store read
    prepared = f"mt-drill-prepare-{handle.fingerprint}-{hash(head_map.config)}"
    n_heads = head_map.patching.size
    prepare_drilldowns(prepared, f"the {n_heads} heads",
                       lambda p: map_head_details(handle, head_map.config, data, progress=p))
    chosen = MT_HEAD.pick_or_hint(chart, fits=within(*head_map.patching.shape),
                                  hint="Click a head on either map (or a point of the scatter) to open it: its "
                                       "attention, what it writes to the vocabulary and its patching effect on each "
                                       "prompt.")
    if chosen is None:
        return
    layer, head = chosen.values
    st.markdown(f"#### Head L{layer}.H{head}")
    c1, c2 = st.columns([2, 1])
    example = c1.selectbox("Prompt the pattern and the vocabulary projection are read on",
                           range(len(head_map.rows)), key="mt-drill-example", persist_state="session",
                           format_func=lambda i: f"prompt {i + 1} (data row {head_map.rows[i]})")
    share = steering_share(head_map.patching, layer, head)
    c2.button("Steer with this head", key="mt-drill-steer", disabled=share is None, on_click=_steer_with,
              args=(share, head_map.config.head_type), width="stretch",
              help="Sets the steering section's head share to the smallest that includes this head (the map's top "
                   "heads down to it) and its vectors to this head type." if share is not None else
              f"This head ranks beyond the top {MAX_PERCENT:g}% the steering section selects from.")
    config = HeadDetailConfig(heads=head_map.config, layer=layer, head=head, example=int(example))
    # not behind the preparation (tens of seconds for 72 heads): one head alone costs a few forwards per prompt, its
    # forwards take turns with the preparation's under the model lock, and the preparation keeps running beside it
    out = run_verb(lambda p: head_detail(handle, config, data, p), label=f"Opening head L{layer}.H{head}")
    if out is None:
        return
    detail = out.value
    st.plotly_chart(attention_row(detail), width="stretch", key="mt-drill-attention")
    left, right = st.columns(2)
    left.plotly_chart(vocab_effects(detail), width="stretch", key="mt-drill-vocab")
    right.plotly_chart(patching_per_prompt(detail), width="stretch", key="mt-drill-patching")
    st.caption((
        f"The vocabulary projection is the head's `o_proj` contribution at the answer position (|write| "
        f"{detail.write_norm:.3f}), through the attention post-norm where the model has one (Gemma 3), the final "
        "norm at that position's scale and the unembedding: its direct effect on each logit, before any "
        f"soft-capping. Mean patching effect {detail.mean_patching:+.4f} nats = the map's score."))
    rows = [{"side": side, "token": e.token, "id": e.id, "direct effect": round(e.logit, 4),
             "occurs in": e.language or "neither"}
            for side, items in (("promoted", detail.promoted), ("suppressed", detail.suppressed)) for e in items]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
