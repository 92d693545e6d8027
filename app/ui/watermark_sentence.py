"""The Watermark page's sentence drill-down: a click on a bar of the per-sentence chart opens that sentence's
evidence (its level, both keyed bits, what it counted for). The click only chooses a row of the detection on screen;
nothing the browser sends is read as evidence."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from app.ui.drilldown_state import clicked_or_hint
from app.ui.selection import remember_click
from app.ui.text import literal

PICK = "wm-sentence-pick"
TOKEN_PICK = "wm-token-pick"


def sentence_table(units) -> pd.DataFrame:
    """The per-sentence rows as the table shows them: numbered from 1, as on the chart."""
    frame = pd.DataFrame([r.__dict__ for r in units])
    return frame.assign(index=frame["index"] + 1).rename(columns={"index": "sentence"})


def sentence_drilldown(units, event) -> None:
    chosen = clicked_or_hint(PICK, event, (len(units),), "Click a sentence's bar to open its evidence.")
    if chosen is None:
        return
    row = units[chosen[0]]
    with st.container(border=True):
        st.markdown(f"**Sentence {row.index + 1}** · {literal(row.text)}")
        if not row.usable:
            st.caption("Too short to carry bits: it counts for nothing either way.")
            return
        c = st.columns(4)
        c[0].metric("Level", row.level, help="Which key its semantic region selects: the model's or the user's.")
        c[1].metric("Semantic bit", row.sem_bit, help="Keyed bit of its meaning (the sign pattern of its sentence "
                                                       "embedding on public hyperplanes).")
        c[2].metric("Syntactic bit", row.syn_bit, help="Keyed bit of its function-word skeleton.")
        c[3].metric("Counted", f"{row.contribution:.2f}", help="w_sem x semantic + w_syn x syntactic; 0 when its "
                                                               "messages were already counted at this level.")
        if row.repeated:
            st.caption("Its messages repeat an earlier sentence's at this level: counted once, there.")


def token_drilldown(pieces, event) -> None:
    """A click on the token strip opens that token: its text, its mark in words, what the method says of it (the
    g-values over the keys, or green / not green) and the token before it, which seeds its green list."""
    from app.figures.watermark import MARK_WORDS

    chosen = remember_click(st.session_state, TOKEN_PICK, event, (len(pieces),))
    if chosen is None:
        return
    i = chosen[0]
    text, mark, tip = pieces[i]
    before = next((pieces[j][0] for j in range(i - 1, -1, -1) if pieces[j][0].strip()), "")
    with st.container(border=True):
        st.markdown(f"**Token** “{literal(text.strip() or repr(text))}” · {MARK_WORDS.get(mark, mark)}")
        if tip:
            st.caption(literal(tip))
        st.caption("Seeded by the text before it (its green list, or its g-values' context): "
                   f"“{literal(before.strip()[-40:] or '(start of the text)')}”")


def candidates_table(sentences) -> pd.DataFrame:
    """Every candidate each generated sentence was chosen among (IPMark's B), the chosen one marked."""
    rows = [{"sentence": sent.index + 1, "candidate": k + 1, "chosen": text == sent.text,
             "level": sent.level if text == sent.text else "", "text": text}
            for sent in sentences for k, text in enumerate(sent.candidates)]
    return pd.DataFrame(rows, columns=["sentence", "candidate", "chosen", "level", "text"])


def candidates_view(generation) -> None:
    """For text generated here: what each sentence was chosen among (kept with the generation)."""
    table = candidates_table(generation.sentences)
    if table.empty:
        return
    with st.expander(f"The candidates each sentence was chosen among ({len(generation.sentences)} sentences)"):
        st.dataframe(table, hide_index=True, width="stretch")
