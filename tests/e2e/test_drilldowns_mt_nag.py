"""Real browser: a click on a head cell of the MT-heads map and on a neuron of the NAG graph opens its drill-down.

Plotly draws on SVG, so the click goes to the pixel of the data point: the plot's own axes (`_fullLayout`) convert
the point's data coordinates to pixels inside the `.js-plotly-plot` element, and the mouse clicks there as a user
does (the hover that precedes it is what Plotly turns into the click's point)."""
from __future__ import annotations

import pytest

from tests.e2e.conftest import PAGE_TIMEOUT_S, Tab, click_chart_point, open_tab, wait_until_idle
from app import server

# Pixel of point `index` of the chart's first click layer (app/figures/clickable.py), else of its first trace with
# customdata (the graph's nodes), relative to the plot element.
POINT_PIXEL = """([key, index]) => {
  const gd = document.querySelector(`.st-key-${key} .js-plotly-plot`);
  const clickLayer = gd._fullData.findIndex(d => d.name === 'click');
  const t = clickLayer >= 0 ? clickLayer : gd._fullData.findIndex(d => d.customdata);
  const data = gd._fullData[t], layout = gd._fullLayout;
  const xa = layout[data.xaxis.replace('x', 'xaxis')], ya = layout[data.yaxis.replace('y', 'yaxis')];
  return {x: xa._offset + xa.d2p(data.x[index]), y: ya._offset + ya.d2p(data.y[index]),
          customdata: data.customdata[index]};
}"""


@pytest.fixture(scope="module")
def tab(app_url, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1600})
    page.goto(app_url)
    wait_until_idle(page)
    yield Tab(page)
    page.close()


def _click_point(page, key: str, index: int) -> list:
    """Click point `index`; its customdata, [kind, *fields] (app/figures/clickable.py)."""
    server.wait_for_charts(page, 60)
    plot = page.locator(f".st-key-{key} .js-plotly-plot")
    plot.scroll_into_view_if_needed()
    point = page.evaluate(POINT_PIXEL, [key, index])
    box = plot.bounding_box()
    click_chart_point(page, box["x"] + point["x"], box["y"] + point["y"])
    return point["customdata"]


def _sees(page, text: str) -> None:
    page.get_by_text(text).first.wait_for(timeout=PAGE_TIMEOUT_S * 1000)
    wait_until_idle(page)
    assert page.locator('[data-testid="stException"]').count() == 0, page.inner_text("body")[:2000]


def _shown(page, selector: str) -> int:
    """How many `selector` elements the drill-down drew, once the first is there and the script idle: a rerun the
    background preparation asks for can end the click's run between the drill-down's heading and its body, and the
    rerun draws the body again (a count taken in that gap read 0)."""
    page.locator(selector).first.wait_for(state="attached", timeout=PAGE_TIMEOUT_S * 1000)
    wait_until_idle(page)
    return page.locator(selector).count()


def test_clicking_a_head_cell_opens_its_drilldown(tab):
    tab.show("mt_heads")
    page = tab.page
    _, layer, head = _click_point(page, "mt-heat", 6)  # the patching map, cell 6 (tiny-llama: L1.H2)
    _sees(page, f"Head L{layer}.H{head}")
    # prepared with every head right after the map: a store read, or, while the preparation still runs, this head
    # patched alone (backend/mt/head_patching.py)
    _sees(page, f"Opening head L{layer}.H{head}: ")
    served = page.get_by_text(f"Opening head L{layer}.H{head}: ").first.inner_text()
    assert served.split(": ", 1)[1].startswith(("cached", "computed")), served
    assert _shown(page, ".st-key-mt-drill-attention .js-plotly-plot") == 1
    assert _shown(page, ".st-key-mt-drill-vocab .js-plotly-plot") == 1


def test_clicking_a_neuron_on_the_graph_opens_its_drilldown(tab):
    tab.show("nag")
    page = tab.page
    open_tab(page, "Graph")
    _, layer, neuron = _click_point(page, "nag-graph", 0)  # the heaviest neuron of the first layer shown
    _sees(page, f"Neuron L{layer}.N{neuron}")
    _sees(page, f"Opening neuron L{layer}.N{neuron}: cached")  # prepared with the graph's other nodes
    assert _shown(page, "mark") >= 1  # a top context with its token marked
    assert _shown(page, ".st-key-nag-graph-drill-hist .js-plotly-plot") == 1


def test_clicking_a_profile_cell_opens_that_neuron(tab):
    tab.show("nag")
    page = tab.page
    open_tab(page, "Profile")
    n_ranks = page.evaluate("document.querySelector('.st-key-nag-heatmap .js-plotly-plot')._fullData[0].z[0].length")
    _, layer, neuron = _click_point(page, "nag-heatmap", n_ranks)  # layer 1's heaviest neuron (rank 1)
    assert layer == 1
    _sees(page, f"Neuron L{layer}.N{neuron}")
    assert _shown(page, ".st-key-nag-heatmap-drill-hist .js-plotly-plot") == 1
