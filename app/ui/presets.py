"""Settings presets on a page: a radio that fills several widgets at once (through their session-state keys),
applied once when the page first opens (or the model changes) so the page opens on the first preset."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import streamlit as st


def _apply(values: Mapping[str, Any]) -> None:
    for key, value in values.items():
        st.session_state[key] = value


def preset_choice(label: str, presets: Sequence[tuple[str, Mapping[str, Any], str]], *, key: str, scope: str,
                  container: Any = st) -> None:
    """`presets`: (name, {widget key: value}, evidence) in order of preference. Call before the widgets it fills
    are created. `scope` (e.g. the model id): when it changes, the first preset is applied again."""
    names = [name for name, _, _ in presets]
    by_name = {name: (values, evidence) for name, values, evidence in presets}
    if st.session_state.get(f"{key}-scope") != scope or st.session_state.get(key) not in by_name:
        st.session_state[f"{key}-scope"] = scope
        st.session_state[key] = names[0]
        _apply(by_name[names[0]][0])
    container.radio(label, names, horizontal=True, key=key,  # kept while hidden (in a tab), not re-applied
                    on_change=lambda: _apply(by_name[st.session_state[key]][0]), persist_state="session",
                    help="Fills the settings below; change any of them afterwards.")
    container.caption(by_name[st.session_state[key]][1])
