"""Input attribution on the Inspect page: the figure follows the result (shaded prompt for one target, targets ×
sources for a continuation, token text as data) and the tab computes, shows the completeness check and refuses
bad input in one line."""
import numpy as np

from app.figures.inspect import token_label
from app.figures.inspect_attribution import attribution_figure, matrix_figure, prompt_figure
from backend.internals.attribution import compute_attribution
from backend.internals.config import AttributeConfig
from tests.app.helpers import error_texts, open_tab, plotly_charts, run_page
from tests.internals.helpers import VARIANTS

PROMPT = "<b>hi</b> & the"
TAB = "Input attribution"


def test_one_target_shades_the_prompt_and_a_continuation_is_a_matrix():
    model, tokenizer = VARIANTS["llama-biases"]()
    one = compute_attribution(model, tokenizer, AttributeConfig(prompt=PROMPT, method="saliency"))
    heat = attribution_figure(one).data[0]
    cells = [t for row in heat.text for t in row if t]
    assert len(cells) == len(one.tokens) and all("<b>" not in t for t in cells), "token text is data"
    shown = np.asarray(heat.z, dtype=float).ravel()[: len(one.tokens)]
    assert np.allclose(shown, one.scores[0]) and heat.zmid == 0
    assert "p(" in prompt_figure(one).layout.title.text
    many = compute_attribution(model, tokenizer, AttributeConfig(prompt=PROMPT, method="ablation", generate=3,
                                                                 function="logit"))
    fig = attribution_figure(many)
    assert fig.data[0].z.shape == many.scores.shape == (3, len(PROMPT) + 2)
    assert list(fig.layout.yaxis.ticktext) == [token_label(t) for t in many.targets]
    assert np.isnan(fig.data[0].z[0, -1]) and np.isfinite(fig.data[0].z[2, -1]), "a target sees only its past"
    assert all("<b>" not in t for t in fig.layout.xaxis.ticktext) and "logit" in matrix_figure(many).layout.title.text


def test_the_tab_attributes_and_refuses_bad_input_in_one_line():
    at = run_page("inspect.py")
    open_tab(at, "inspect-tabs", TAB)
    at.selectbox(key="inspect-attr-method").set_value("integrated_gradients").run()
    buttons = [b for b in at.button if b.key == "compute-now-Input attribution"]
    if buttons:  # a run known to take long asks first
        buttons[0].click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert len(plotly_charts(at)) == 1
    assert any("convergence delta" in c.value for c in at.caption)
    at.text_input(key="inspect-attr-target").set_value("xyz").run()
    assert any("is 3 tokens" in e for e in error_texts(at)) and len(at.error) == 1
