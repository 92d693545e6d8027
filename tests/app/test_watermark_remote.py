"""Issue 46 §1 on the page: a remote user of a server reachable from other machines (no DASH_ADMIN) sees only the
verdict under a registered identity's key, and generates only with the demo identity; the local user sees all."""
import html

import pytest

from tests.app.helpers import open_tab, private_identities, run_page

TEXT = "The sea was calm that morning. Boats went out early and came back late. Nobody spoke of the storm."


@pytest.fixture
def registry(tmp_path, monkeypatch):
    identities = private_identities(tmp_path, monkeypatch)
    from backend.watermark import demo

    model = identities.add_model("acme-llm")
    identities.add_user(model.address, "alice")
    demo.add_demo()
    return model.address


def _detect(address: int):
    at = run_page("watermark.py", state={"wm-text": TEXT, "wm-detect-address": address,
                                         "wm-detect-method": "kgw"})
    return at


def test_a_remote_user_sees_the_verdict_only_under_a_registered_key(registry, exposed):
    at = _detect(registry)
    import pandas as pd

    verdicts = next(d.value for d in at.dataframe if "verdict" in d.value.columns).set_index("method")
    kgw = verdicts.loc[verdicts.index.str.startswith("KGW (token")].iloc[0]
    no_p = kgw["p (corrected)"]  # shown as "–" where the page formats p-values as text, else missing
    assert kgw["verdict"] != "watermarked" and (no_p == "–" or pd.isna(no_p)) and pd.isna(kgw["score"])
    infos = [html.unescape(i.value) for i in at.info]
    assert any("withheld" in i for i in infos) and not any("green tokens" in i for i in infos)
    captions = [html.unescape(c.value) for c in at.caption]
    assert any("you do not hold its keys" in c for c in captions)
    assert any("Corpus scans under the registered keys" in c for c in captions)
    at = open_tab(at, "wm-tab", "Generate")
    options = at.selectbox[[s.label for s in at.selectbox].index("Identity")].options
    assert options and all("demo" in o for o in options)


def test_the_local_user_sees_everything(registry):
    at = _detect(registry)
    infos = [html.unescape(i.value) for i in at.info]
    assert any("green tokens" in i for i in infos)
    at = open_tab(at, "wm-tab", "Generate")
    options = at.selectbox[[s.label for s in at.selectbox].index("Identity")].options
    assert any("acme-llm" in o for o in options)


def test_a_remote_user_sees_everything_under_the_demo_key(registry, exposed):
    from backend.watermark.keys import DEMO_MODEL_ADDRESS

    at = _detect(DEMO_MODEL_ADDRESS)
    infos = [html.unescape(i.value) for i in at.info]
    assert any("green tokens" in i and "demo identity" in i for i in infos)


def test_a_new_tab_scope_of_the_same_client_spends_the_same_budget(registry, exposed, monkeypatch):
    """Issue 55 §2: keyed verdicts are counted per client (the connection's address, else its Streamlit session),
    not per `?runs=` scope, which a new tab renews."""
    from backend.store.scope import current_client, current_scope
    from backend.watermark import disclosure

    spent = []

    class Recording(disclosure.QueryBudget):
        def spend(self, client: str) -> None:
            spent.append((client, current_client(), current_scope()))
            super().spend(client)

    monkeypatch.setattr(disclosure, "BUDGET", Recording())
    at = _detect(registry)
    at.session_state["run_scope"] = "another-tab-scop"  # what a new tab's token would be
    at.session_state["wm-text"] = TEXT + " One more sentence."
    at.run()
    assert len(spent) >= 2 and len({scope for _, _, scope in spent}) == 2, spent
    assert len({client for client, _, _ in spent}) == 1 and spent[0][0].startswith("session "), spent
