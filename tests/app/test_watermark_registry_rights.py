"""The identity registry from the Watermark page: bulk creation is capped (identities.PAGE_MAX_BULK) and needs a
confirmation; a server reachable from other machines lets pages write identities only with DASH_ADMIN=1; names
are shown with their hidden characters written out, never applied."""
import html
import json

import pytest

from tests.app.helpers import open_tab, private_identities, run_page


@pytest.fixture
def registry(tmp_path, monkeypatch):
    identities = private_identities(tmp_path, monkeypatch)
    model = identities.add_model("evil-model\u202eko")
    return identities, model.address


def _users(identities, model: int) -> int:
    return int(identities.summary_frame().set_index("address").loc[model, "users"])


def _bulk(at, model: int, count: int, confirm: bool):
    form_inputs = [n for n in at.number_input if n.label.startswith("Model address ")]
    form_inputs[0].set_value(model)
    at.number_input(key="wm-bulk-count").set_value(count)
    at.checkbox(key="wm-bulk-confirm").set_value(confirm)
    next(b for b in at.button if b.label == "Bulk-create users").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_bulk_creation_is_capped_and_needs_a_confirmation(registry):
    identities, model = registry
    at = open_tab(run_page("watermark.py"), "wm-tab", "Registry")
    count = at.number_input(key="wm-bulk-count")
    assert count.max == identities.PAGE_MAX_BULK == 10_000 and "10,000" in count.label
    _bulk(at, model, 500, confirm=False)
    assert any("Tick the confirmation" in w.value for w in at.warning) and _users(identities, model) == 0
    _bulk(at, model, 500, confirm=True)
    assert any("500 users added" in s.value for s in at.success) and _users(identities, model) == 500


def test_an_exposed_server_lets_only_an_admin_add_identities_from_the_page(registry, exposed, monkeypatch):
    identities, model = registry
    at = open_tab(run_page("watermark.py"), "wm-tab", "Registry")
    assert not [b for b in at.button if b.label in ("Add model", "Add user", "Bulk-create users",
                                                    "Add the demo identity", "Remove the demo identity")]
    assert any("DASH_ADMIN=1" in html.unescape(i.value) for i in at.info)
    monkeypatch.setenv("DASH_ADMIN", "1")
    at = open_tab(run_page("watermark.py"), "wm-tab", "Registry")
    _bulk(at, model, 20, confirm=True)
    assert _users(identities, model) == 20


def test_a_right_to_left_override_in_a_model_name_is_shown_not_applied(registry):
    identities, model = registry
    at = open_tab(run_page("watermark.py"), "wm-tab", "Registry")
    table = at.dataframe[0].value
    assert "evil-model\\u202eko" in set(table["name"]) and not any("\u202e" in n for n in table["name"])
    figure = next(c for c in at.get("plotly_chart") if c.proto.id and "wm-registry" in c.proto.id)
    bars = json.loads(figure.proto.spec)["data"][0]["x"]  # the decoded labels, as the browser draws them
    assert any("evil-model\\u202eko" in x for x in bars) and not any("\u202e" in x for x in bars)
