"""Decoding page drill-down: a clicked step on the ESS chart or particle in the genealogy -> the particle's text
at that step, its weight history and the particles it replaced at resampling events."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from app.figures.clickable import Picked
from app.figures.decoding import PARTICLE, STEP, particle_weights
from app.ui.drilldown import Clicked, Drilldown, within
from app.ui.run import STORED_FIRST, run_verb
from backend.decoding.particle import ParticleConfig, particle
from backend.decoding.run import RunKey

DEC_PARTICLE = Drilldown("dec-particle", (STEP, PARTICLE))


def fits_run(rounds: list[tuple[int, int]]):
    """A pick within the run whose rounds have these (steps, particles): a round's step, or a particle of it."""
    def fits(picked: Picked) -> bool:
        k = picked.values[0] if picked.values else None
        if not isinstance(k, int) or not 0 <= k < len(rounds):
            return False
        steps, n = rounds[k]
        return within(len(rounds), steps, *((n,) if picked.kind == PARTICLE.kind else ()))(picked)

    return fits


def particle_drilldown(handle, run, chart: Clicked) -> None:
    """Below the ESS chart / genealogy of `run` (the page's particle run, decoded with the chat template)."""
    rounds = [(p.genealogy.shape[0], p.n) for p in run.particles]
    chosen = DEC_PARTICLE.pick_or_hint(chart, fits=fits_run(rounds),  # None: nothing picked, or a pick of another run
                                       hint="Click a step on the ESS chart (a resampling event: x) or a particle in "
                                            "the genealogy to see its text at that step, its weight history and the "
                                            "particles it replaced.")
    if chosen is None:
        return
    k, step, row = chosen.values if chosen.kind == PARTICLE.kind else (*chosen.values, None)
    key = RunKey(config=run.config, prompt=run.prompt, expected=run.expected, problem_id=run.problem_id, chat=True)
    config = ParticleConfig(key, k, step, -1 if row is None else row)
    done = run_verb(particle, handle, config, label=f"Particle at token {step + 1}", when=STORED_FIRST)
    if done is None:
        return
    d = done.value
    chosen_how = "" if row is not None else " (a child of the heaviest particle at this step)"
    st.subheader(f"Round {d.round + 1}, particle {d.row} after token {d.step + 1}{chosen_how}")
    left, right = st.columns([2, 3])
    with left:
        st.caption(f"Its text at this step ({len(d.token_ids)} tokens):")
        st.text(d.text or "(empty)")
        st.caption(f"Copies of its parent after this step: rows {', '.join(map(str, d.offspring))}.")
    right.plotly_chart(particle_weights(d), width="stretch", key="dec-particle-fig")
    if d.replacements:
        table = pd.DataFrame([{"token": r.step + 1, "row": r.row, "copied row": r.parent,
                               "copied weight": r.parent_weight, "replaced row": r.replaced,
                               "replaced weight": r.replaced_weight, "replaced survived elsewhere": r.replaced_survived}
                              for r in d.replacements])
        st.caption("Resampling events on its ancestry: the row its line held, the particle it copied, and the "
                   "particle it replaced (empty: the row kept its own particle).")
        st.dataframe(table, hide_index=True, width="stretch")
    else:
        st.caption("No resampling event on its ancestry up to this step: it replaced no particle.")
