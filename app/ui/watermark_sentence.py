"""The Watermark page's drill-downs: a sentence (a click on its bar or on it in the text) opens its evidence (its
level, both keyed bits, what it counted for, its signature, the candidates it was chosen among); a token its own. The click only chooses a row of the detection on screen;
nothing the browser sends is read as evidence."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from app.figures.watermark import MARK_WORDS, SENTENCE, TOKEN
from app.ui.drilldown import Clicked, Drilldown, within
from app.ui.text import literal

WM_SENTENCE = Drilldown("wm-sentence", (SENTENCE,))  # from the per-sentence chart or the text
WM_TOKEN = Drilldown("wm-token", (TOKEN,))  # from the text


def sentence_table(units) -> pd.DataFrame:
    """The per-sentence rows as the table shows them: numbered from 1, as on the chart."""
    frame = pd.DataFrame([r.__dict__ for r in units])
    return frame.assign(index=frame["index"] + 1).rename(columns={"index": "sentence"})


GENERATED = "wm-generated"  # the Generate tab's last watermarked generation: its sentences' candidates


def generated_candidates(text: str, index: int, generation) -> tuple[str, ...]:
    """The candidates sentence `index` of `text` was chosen among, when `text` is that generation's (detection
    reads a normalised copy, so the sentences are matched by position in the same text, not by their wording)."""
    if generation is None or generation.text != text or not 0 <= index < len(generation.sentences):
        return ()
    return generation.sentences[index].candidates


def signature_line(report, index: int) -> str | None:
    """Sentence `index`'s signature as detection read it (kept on its report: a click computes nothing): the
    semantic bits (signs of its embedding on the public hyperplanes), the function-word skeleton and how close the
    nearest hyperplane is. None for a report without signatures or an unusable sentence."""
    signatures = getattr(report, "signatures", ())
    if not 0 <= index < len(signatures) or not signatures[index].usable:
        return None
    sig = signatures[index]
    return f"Signature: semantic {sig.semantic} (margin {sig.margin:.3f}) · skeleton “{sig.syntactic}”"


def sentence_drilldown(units, chart: Clicked, report, text: str) -> None:
    """A sentence chosen on the per-sentence chart or in the text (WM_SENTENCE): its bits, what it counted for,
    its signature (from the detection's `report`) and, for a sentence generated here, the candidates it was chosen
    among."""
    chosen = WM_SENTENCE.pick_or_hint(chart, fits=within(len(units)),
                                      hint="Click a sentence in the text or its bar to open its evidence.")
    if chosen is None:
        return
    row = units[chosen.values[0]]
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
        line = signature_line(report, row.index)
        if line is not None:
            st.caption(literal(line))
        generation = st.session_state.get(GENERATED)
        candidates = generated_candidates(text, row.index, generation)
        if candidates:
            chosen_text = generation.sentences[row.index].text
            st.caption(f"Chosen among {len(candidates)} candidates (generated here):")
            st.dataframe(pd.DataFrame({"chosen": [c == chosen_text for c in candidates], "candidate": list(candidates)}),
                         hide_index=True, width="stretch")


def seeding_width(report) -> int:
    """How many tokens before a token seed its green list or g-values: SynthID's n - 1, transformers' KGW its context
    width, our KGW the one token before it."""
    config = getattr(report, "config", None)
    if hasattr(config, "ngram_len"):
        return max(1, int(config.ngram_len) - 1)
    return max(1, int(getattr(config, "context_width", 1)))


def token_facts(found, i: int) -> list[str]:
    """What a clicked token of a token-level detection counted for, in sentences: green-list membership and its
    share of z (KGW), or its g-values, their share and its share of the mean (SynthID); then its seeding context."""
    text, mark, tip = found.pieces[i]
    tokens = getattr(found.report, "tokens", ())
    facts = [tip] if tip else []
    level = found.levels[0] if found.levels else None
    if len(tokens) == len(found.pieces) and len(tokens[i]) == 2:  # KGW: (text, 1 green / 0 red / -1 not scored)
        green = int(tokens[i][1])
        facts.append({1: "In the green list seeded by its context.", 0: "Not in its green list (red).",
                      -1: "Not scored (its context was too short, or it repeats a scored context)."}[green])
        if green >= 0 and level is not None and level.n_sentences and level.variance > 0:
            gamma = level.expected / level.n_sentences
            share = (green - gamma) / level.variance ** 0.5
            facts.append(f"Its share of z = {level.z:.2f}: {share:+.3f} (z = (green − γn) / √(nγ(1 − γ)), "
                         f"n = {level.n_sentences:,} scored tokens, γ = {gamma:.2f}).")
    elif len(tokens) == len(found.pieces) and len(tokens[i]) == 3 and tokens[i][1] >= 0:  # SynthID
        ones, depth = int(tokens[i][1]), int(tokens[i][2])
        facts.append(f"g-values: {ones} of its {depth} keys' are 1, a share of {ones / depth:.0%}.")
        if level is not None and level.n_sentences and "(mean)" in level.level:
            facts.append(f"It moves the text's mean g ({level.score:.3f}; unmarked {level.expected:.3f}) by "
                         f"{(ones / depth - level.expected) / level.n_sentences:+.4f}.")
    width = seeding_width(found.report)
    context = "".join(piece[0] for piece in found.pieces[max(0, i - width):i])
    facts.append(f"Seeded by the {width} token{'s' * (width > 1)} before it: "
                 f"“{context or '(start of the text)'}”")
    return facts


def token_drilldown(found) -> None:
    """A clicked token (of the text, WM_TOKEN): its text, its mark in words and `token_facts`."""
    chosen = WM_TOKEN.pick(fits=within(len(found.pieces)))
    if chosen is None or not found.pieces[chosen.values[0]][1]:
        st.caption("Click a token of the text to see what it counted for.")
        return
    (i,) = chosen.values
    text, mark, _ = found.pieces[i]
    with st.container(border=True):
        st.markdown(f"**Token** “{literal(text.strip() or repr(text))}” · {MARK_WORDS.get(mark, mark)}")
        for fact in token_facts(found, i):
            st.caption(literal(fact))


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


def piece_clicked(pieces, sentences: bool):
    """The text's click callback (app/ui/watermark_text.py): a piece opens as a sentence (IPMark) or a token."""
    from app.ui.watermark_text import unit_of

    def pick(index: int) -> None:
        if sentences:
            WM_SENTENCE.choose(SENTENCE.of(unit_of(pieces, index)))
        else:
            WM_TOKEN.choose(TOKEN.of(index))

    return pick
