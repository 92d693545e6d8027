"""Issue 46 §1: the detector is no forging oracle. A hill-climbing forger (tests/support/forger.py) that keeps an
edit whenever the shown score does not fall forges the demo identity's KGW mark (its key is public: everything is
shown) but not a registered identity's as a remote user, who sees only the verdict of a text not flagged; and a
remote user's keyed queries are budgeted per session and per server and recorded in the run log."""
import pytest

from backend.errors import UserError
from backend.watermark import disclosure
from backend.watermark.keys import DEMO_MODEL_ADDRESS
from backend.watermark.methods import DetectRequest, detect
from tests.support.forger import hill_climb


@pytest.fixture(scope="module")
def handle():
    from backend.models import load

    return load("tiny-llama")


def _oracle(handle, address: int, key_holder: bool):
    return lambda text: detect(text, DetectRequest("kgw", model_address=address, handle=handle,
                                                   key_holder=key_holder))


@pytest.fixture
def unlimited(monkeypatch):
    """The budget out of the way: the withholding alone must defeat the forger."""
    monkeypatch.setattr(disclosure, "BUDGET", disclosure.QueryBudget(disclosure.BudgetLimits(10**6, 4 * 10**6)))
    monkeypatch.setattr(disclosure, "_record", lambda *args, **kwargs: None)  # 1,000 run rows: a second of writes


def test_the_forger_fails_as_a_remote_user_and_succeeds_on_the_demo_identity(handle, unlimited, fixed_secret):
    # A fixed master secret: model 1's key is the same on every run, so the blind walk's 1,000 texts are too (with a
    # fresh random key, one clean-clone run in four saw a walk's text reach the verdict by chance at query 977).
    remote = hill_climb(_oracle(handle, 1, key_holder=False), max_queries=1000)
    assert not remote.forged and remote.queries == 1000 and remote.best_score == 0.0  # it saw nothing move
    demo = hill_climb(_oracle(handle, DEMO_MODEL_ADDRESS, key_holder=False), max_queries=1000)
    assert demo.forged and demo.queries < 1000  # the demo's key is public: its score is shown, and it climbs
    held = hill_climb(_oracle(handle, 1, key_holder=True), max_queries=1000)
    assert held.forged  # the key's holder sees the score (and could read the key itself)


def test_a_text_not_flagged_shows_a_remote_user_nothing_that_moves(handle, unlimited):
    text = "the sea was calm and the boats went out early in the morning to fish"
    found = _oracle(handle, 1, key_holder=False)(text)
    assert not found.flagged and found.z is None and found.p_family is None and found.levels == ()
    assert found.units == () and all(mark == "" for _, mark, _ in found.pieces) and found.guess_model == 0
    assert "withheld" in found.evidence and "green" not in found.evidence
    assert "green" in _oracle(handle, 1, key_holder=True)(text).evidence


def test_keyed_queries_are_budgeted_per_client_and_recorded(handle, monkeypatch, fresh_store):
    """Issue 55 §2: the budget is a client's (its remote address, else its session), not a tab's: a new `?runs=`
    scope from the same client gets no fresh budget, and no one client can spend the server's."""
    from backend.store import list_runs

    now = [0.0]
    monkeypatch.setattr(disclosure, "BUDGET", disclosure.QueryBudget(disclosure.BudgetLimits(5, 20, 60.0),
                                                                     clock=lambda: now[0]))
    client = ["address 203.0.113.9"]
    monkeypatch.setattr("backend.watermark.disclosure.current_client", lambda: client[0])
    query = _oracle(handle, 1, key_holder=False)
    for _ in range(5):
        query("some text of a few words to check here")
    with pytest.raises(UserError, match="your budget of 5 verdicts per 60 s"):
        query("one more")
    runs = list_runs()
    keyed = runs[runs["action"] == "keyed-detect"]
    assert sorted(keyed["status"]) == ["done"] * 5 + ["refused"]
    monkeypatch.setattr("backend.watermark.disclosure.current_scope", lambda: "a-new-tab")
    with pytest.raises(UserError, match="your budget of 5"):  # a new tab of the same client: the same budget
        query("from a new tab")
    now[0] = 61.0  # a minute later the client may ask again
    query("again")
    for other in ("b", "c", "d"):  # other clients have their own 5 each: 16 of the server's 20 spent
        client[0] = f"address 198.51.100.{ord(other)}"
        for text in "vwxyz":
            query(text)
    client[0] = "session a-fifth-client"
    for text in "wxyz":
        query(text)
    with pytest.raises(UserError, match="this server's budget of 20"):
        query("f")


def test_one_client_s_budget_is_at_most_a_share_of_the_server_s():
    with pytest.raises(UserError, match="at most 25% of the server's"):
        disclosure.BudgetLimits(per_client=300, per_server=300)
    assert disclosure.BudgetLimits().per_client * 4 <= disclosure.BudgetLimits().per_server


def test_a_flagged_text_shows_a_remote_user_its_verdict_p_and_identity(handle, unlimited, fixed_secret):
    """A text flagged under a registered key (here forged by the key's holder) keeps, for a remote user, the verdict,
    its corrected p and the identity, and nothing per token."""
    held = hill_climb(_oracle(handle, 1, key_holder=True), max_queries=1000)
    assert held.forged
    found = _oracle(handle, 1, key_holder=False)(held.text)
    assert found.flagged and found.model_address == 1 and found.p_family is not None and found.p_family < 0.01
    assert found.z is None and found.levels == () and all(mark == "" for _, mark, _ in found.pieces)
