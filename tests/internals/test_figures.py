"""The Inspect figures: shapes follow the results, token text stays data, a click on the head map reads back."""
from app.figures.clickable import HEAD
from app.figures.inspect import dla_figure, final_figure, lens_figure, logit_name, mlp_figure, pattern_figure, token_label
from app.ui.drilldown import Clicked, within
from app.ui.inspect_patch import DLA_HEAD
from backend.internals.attention import compute_attention
from backend.internals.config import AttentionConfig, DlaConfig, LensConfig
from backend.internals.dla import compute_dla
from backend.internals.lens import compute_lens

PROMPT = "<b>hi</b> & more"


def test_figures_follow_the_results(tiny_handle):
    model, tokenizer = tiny_handle.model, tiny_handle.tokenizer
    lens = compute_lens(model, tokenizer, LensConfig(prompt=PROMPT))
    fig = lens_figure(lens)
    assert fig.data[0].z.shape == (3, len(lens.tokens))
    assert all("<b>" not in t for t in fig.layout.xaxis.ticktext), "token text is shown, never rendered"
    dla = compute_dla(model, tokenizer, DlaConfig(prompt=PROMPT))
    heatmap, clickable = dla_figure(dla).data
    assert heatmap.z.shape == (2, 4) and len(clickable.x) == 2 * 4
    assert [c[3] for c in clickable.customdata] == list(dla.heads.ravel()), "each head's effect on hover"
    assert list(clickable.y) == [0, 0, 0, 0, 1, 1, 1, 1]
    assert [DLA_HEAD.read(Clicked("map", ({"customdata": c},)), within(2, 4)) for c in clickable.customdata] == \
        [HEAD.of(y, x) for x, y in zip(clickable.x, clickable.y)], "a click opens the head drawn there"
    assert list(mlp_figure(dla).data[0].y) == list(dla.mlps)
    att = compute_attention(model, tokenizer, AttentionConfig(prompt=PROMPT, layer=1, head=1))
    assert pattern_figure(att.tokens, att.pattern, "t").data[0].z.shape == (len(att.tokens),) * 2


def test_a_crafted_selection_event_is_ignored():
    """Issue 55 §5: the event comes from the browser; only a point naming a head of the map with whole non-negative
    numbers opens it."""
    crafted = [["head", 1, -1], ["head", "1", "0"], ["head", 1, "9e9999"], ["head", 1, float("nan")],
               ["head", 1, float("inf")], ["head", 0.5, 1], ["head", True, 1], ["head", [1], 1], ["head", 2, 0],
               ["node", 1, 1], [1, 1], "head", None]
    for customdata in crafted:
        assert DLA_HEAD.read(Clicked("map", ({"customdata": customdata},)), within(2, 4)) is None, customdata
    mixed = Clicked.of("map", {"selection": {"points": ["x", {"customdata": ["head", 1.0, 2.0]},
                                                        {"customdata": ["head", 2, -3]}]}})
    assert DLA_HEAD.read(mixed, within(2, 4)) == HEAD.of(1, 2)


def test_the_lens_writes_tokens_out_and_tracks_a_token(tiny_handle):
    model, tokenizer = tiny_handle.model, tiny_handle.tokenizer
    lens = compute_lens(model, tokenizer, LensConfig(prompt="a b", track="x"))
    heat = lens_figure(lens).data[0]
    assert heat.texttemplate == "%{text}" and heat.text[1][1] == token_label(lens.top_tokens[1][1][0])
    assert lens_figure(lens).layout.xaxis.tickangle == 0 and "·" in lens_figure(lens).layout.xaxis.ticktext[1]
    assert heat.customdata[2][0].count("<br>") == 5 and "%" in heat.customdata[2][0], "hover: the top 5 with p"
    final = final_figure(lens)
    assert [trace.name for trace in final.data[::2]] == [f"{token_label(lens.predicted_token)} (final prediction)",
                                                         "x (tracked)"]
    assert list(final.data[2].y) == list(lens.tracked_prob) and list(final.data[3].customdata) == \
        list(lens.tracked_rank)
    assert len(final_figure(compute_lens(model, tokenizer, LensConfig(prompt="a b"))).data) == 2


def test_dla_says_logit_difference_when_a_contrast_is_set(tiny_handle):
    model, tokenizer = tiny_handle.model, tiny_handle.tokenizer
    plain = compute_dla(model, tokenizer, DlaConfig(prompt=PROMPT, target="a"))
    contrast = compute_dla(model, tokenizer, DlaConfig(prompt=PROMPT, target="a", contrast="b"))
    assert logit_name(plain) == "logit" and "difference" not in dla_figure(plain).layout.title.text
    assert logit_name(contrast) == "logit difference"
    assert "logit difference" in dla_figure(contrast).layout.title.text
    assert mlp_figure(contrast).layout.yaxis.title.text == "logit difference"
