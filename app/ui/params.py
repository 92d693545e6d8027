"""Page widgets derived from config dataclass fields: default, range and help come from `param()`.

    window = number_for(GateConfig, "window", "Spike window W", key="dis-window")
"""
from __future__ import annotations

from typing import Any

import streamlit as st

from backend.params import declared, default_of


def _state_wins(kwargs: dict[str, Any]) -> dict[str, Any]:
    """A widget whose key already holds a value (set by a preset or an earlier run) starts from it: passing a
    default as well makes Streamlit warn. A keyed setting keeps its value for the browser session, across pages and
    tabs (Streamlit drops an unrendered widget's value otherwise)."""
    if kwargs.get("key") is not None:
        kwargs.setdefault("persist_state", "session")
    if kwargs.get("key") in st.session_state:
        kwargs.pop("value", None)
        kwargs.pop("index", None)
    return kwargs


def number_for(cls: type, name: str, label: str, *, container: Any = st, **overrides: Any):
    """st.number_input with the field's default, bounds and help (overrides win, e.g. a narrower max)."""
    spec = declared(cls, name)
    default = default_of(cls, name)
    kwargs: dict[str, Any] = {"value": default, "help": spec.help if spec else None}
    if spec is not None:
        low, high = spec.bounds()
        if low is not None:
            kwargs["min_value"] = type(default)(low)
        if high is not None:
            kwargs["max_value"] = type(default)(high)
    kwargs.update(overrides)
    value = container.number_input(label, **_state_wins(kwargs))
    # a value restored after a visit elsewhere (persist_state) can come back as a float: keep the field's type
    return int(value) if isinstance(default, int) and not isinstance(default, bool) and value is not None else value


def slider_for(cls: type, name: str, label: str, *, container: Any = st, **overrides: Any):
    """st.slider over the field's declared range, starting at its default."""
    spec = declared(cls, name)
    default = default_of(cls, name)
    low, high = spec.bounds()
    kwargs: dict[str, Any] = {"min_value": type(default)(low), "max_value": type(default)(high), "value": default,
                              "help": spec.help}
    kwargs.update(overrides)
    value = container.slider(label, **_state_wins(kwargs))
    return int(value) if isinstance(default, int) and not isinstance(default, bool) and value is not None else value


def select_for(cls: type, name: str, label: str, *, labels: dict[str, str] | None = None, container: Any = st,
               **overrides: Any):
    """st.selectbox over the field's choices (a registry's names), starting at its default."""
    spec = declared(cls, name)
    options = list(overrides.pop("options", None) or spec.options())
    default = overrides.pop("value", default_of(cls, name))
    index = options.index(default) if default in options else 0
    fmt = (lambda n: labels.get(n, n)) if labels else str
    kwargs: dict[str, Any] = {"index": index, "format_func": fmt, "help": spec.help}
    kwargs.update(overrides)
    return container.selectbox(label, options, **_state_wins(kwargs))


def checkbox_for(cls: type, name: str, label: str, *, container: Any = st, **overrides: Any):
    spec = declared(cls, name)
    kwargs: dict[str, Any] = {"value": default_of(cls, name), "help": spec.help if spec else None}
    kwargs.update(overrides)
    return container.checkbox(label, **_state_wins(kwargs))


def config_inputs(cls: type, *, key: str, container: Any = st) -> Any:
    """One widget per declared field of a Config (choices: a select box, bool: a checkbox, numbers: a number input,
    a tuple of whole numbers: a comma-separated text input), then the config built from them. A bad value raises
    the config's own UserError naming the field (wrap the call in `guarded`)."""
    import dataclasses

    from backend.cli.params import int_list

    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        spec = declared(cls, f.name)
        if spec is None:
            continue
        label, default, widget_key = f.name.replace("_", " "), default_of(cls, f.name), f"{key}-{f.name}"
        if spec.options() is not None:
            values[f.name] = select_for(cls, f.name, label, container=container, key=widget_key)
        elif isinstance(default, bool):
            values[f.name] = checkbox_for(cls, f.name, label, container=container, key=widget_key)
        elif isinstance(default, tuple):
            typed = container.text_input(label, ",".join(map(str, default)), help=spec.help, key=widget_key,
                                         persist_state="session")
            values[f.name] = int_list(typed, label)
        else:
            values[f.name] = number_for(cls, f.name, label, container=container, key=widget_key)
    return cls(**values)
