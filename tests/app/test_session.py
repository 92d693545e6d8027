"""Which model a page opens on: a page's recommendation stays on its page; the user's own pick goes everywhere."""
from app.session import CHOSEN_KEY, page_model
from backend.models import default_model_id, list_models
from tests.app.helpers import ROOT, run_page

DEFAULT, TRANSLATOR, PICKED = "default-model", "translator", "picked-by-hand"


def test_a_recommendation_applies_on_its_page_only():
    assert page_model(False, TRANSLATOR, TRANSLATOR, DEFAULT, True) == TRANSLATOR
    # the next page has no recommendation: back to the default, not the previous page's translator
    assert page_model(False, TRANSLATOR, None, DEFAULT, True) == DEFAULT


def test_the_users_own_pick_is_kept_on_every_page():
    assert page_model(True, PICKED, TRANSLATOR, DEFAULT, True) == PICKED
    assert page_model(True, PICKED, None, DEFAULT, True) == PICKED


def test_a_deployments_own_default_is_never_overridden_by_a_recommendation():
    assert page_model(False, DEFAULT, TRANSLATOR, DEFAULT, False) == DEFAULT


def _other_model() -> str:
    return next(spec.id for spec in list_models() if spec.id != default_model_id())


def test_the_next_page_drops_a_previous_pages_model_unless_the_user_picked_it():
    at = run_page("nag.py", timeout=300)
    other = _other_model()
    at.session_state["model_id"] = other  # as a previous page's recommendation leaves it
    at.switch_page(str(ROOT / "pages" / "fp8_bounds.py"))
    at.run()
    assert at.session_state["model_id"] == default_model_id()
    at.session_state["model_id"] = other
    at.session_state[CHOSEN_KEY] = True  # the same model, picked by hand in the sidebar
    at.switch_page(str(ROOT / "pages" / "runs.py"))
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["model_id"] == other
