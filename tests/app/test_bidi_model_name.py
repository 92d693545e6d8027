"""Issue 46 §5: a model id holding a right-to-left override (DASH_EXTRA_MODELS=$'evil\\u202eledom=<dir>') is shown
with the override written out in the sidebar picker, the "Loaded …" status and "In memory:"; never applied."""
import os

from backend.__main__ import main
from tests.app.helpers import run_page
from tests.conftest import TINY_DIRS

EVIL = "evil\u202eledom"
WIDGETS = {"Selectbox", "Radio", "Multiselect", "SelectSlider", "TextInput", "TextArea"}


def _texts(at) -> list[str]:
    """Every label and text the page's elements carry (the sidebar's included)."""
    out = []
    for node in at._tree.root.children.values():
        stack = [node]
        while stack:
            el = stack.pop()
            stack.extend(getattr(el, "children", {}).values())
            # a widget's value is the option itself (the id, never shown); what is shown is its label and options
            for attr in ("label", "body") if type(el).__name__ in WIDGETS else ("value", "label", "body"):
                value = getattr(el, attr, None)
                if isinstance(value, str):
                    out.append(value)
            proto = getattr(el, "proto", None)
            if proto is not None and hasattr(proto, "options"):
                out.extend(str(o) for o in proto.options)
    return out


def test_a_bidi_model_id_is_written_out_everywhere(monkeypatch, capsys):
    monkeypatch.setenv("DASH_EXTRA_MODELS", os.environ["DASH_EXTRA_MODELS"] + f";{EVIL}={TINY_DIRS['llama']}")
    monkeypatch.setenv("DASH_DEFAULT_MODEL", EVIL)
    at = run_page("watermark.py")
    texts = _texts(at)
    assert texts and not any("\u202e" in t for t in texts), [t for t in texts if "\u202e" in t]
    assert any("evil\\u202eledom" in t for t in at.sidebar.selectbox[0].options)
    assert any("In memory" in c.value and "u202e" in c.value for c in at.sidebar.caption)
    assert main(["models", "list"]) == 0
    out = capsys.readouterr().out
    assert "\u202e" not in out and "evil\\u202eledom" in out
