"""A `?runs=` link grants reading a tab's runs, not deleting them: only the tab that made the runs, or an admin
server (DASH_ADMIN=1), sees the delete controls."""
import html

from streamlit.testing.v1 import AppTest

from tests.app.helpers import MAIN, ROOT
from tests.app.test_home_and_runs import _runs_page_for_a_new_session


def _open_link(scope: str) -> AppTest:
    """A new browser session opening the Runs page from someone's runs link."""
    at = AppTest.from_file(MAIN, default_timeout=120)
    at.query_params["runs"] = scope
    at.run()
    at.switch_page(str(ROOT / "pages" / "runs.py")).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    return at


def _delete_controls(at: AppTest) -> bool:
    return bool(at.get("multiselect")) or any(b.label == "Delete selected" for b in at.button)


def test_the_tab_that_made_the_runs_can_delete_them():
    at, mine, _ = _runs_page_for_a_new_session()
    assert _delete_controls(at)
    assert mine in list(at.get("multiselect")[0].options)


def test_a_runs_link_lists_and_reopens_but_cannot_delete():
    owner, mine, theirs = _runs_page_for_a_new_session()
    visitor = _open_link(owner.session_state["run_scope"])
    shown = set(visitor.dataframe[0].value["run_id"])
    assert mine in shown and theirs not in shown  # reading: the linked tab's runs, nobody else's
    assert not _delete_controls(visitor)
    visitor.selectbox(key="runs-reopen").set_value(mine).run()
    assert any(j for j in visitor.json)  # and reopening them
    assert any("opened from a runs link" in html.unescape(i.value) and "DASH_ADMIN=1" in html.unescape(i.value)
               for i in visitor.info)


def test_an_admin_server_lets_a_link_delete(monkeypatch):
    owner, mine, _ = _runs_page_for_a_new_session()
    monkeypatch.setenv("DASH_ADMIN", "1")
    visitor = _open_link(owner.session_state["run_scope"])
    assert _delete_controls(visitor)
    assert mine in list(visitor.get("multiselect")[0].options)


def test_on_a_shared_server_a_tab_deletes_only_its_own_runs(monkeypatch):
    monkeypatch.setenv("DASH_SHARED_RUNS", "1")
    at, mine, theirs = _runs_page_for_a_new_session()
    assert {mine, theirs} <= set(at.dataframe[0].value["run_id"])  # everyone's are listed
    options = set(at.get("multiselect")[0].options)
    assert mine in options and theirs not in options
