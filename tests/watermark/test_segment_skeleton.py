from hypothesis import given, settings
from hypothesis import strategies as st

from backend.watermark.segment import sentences, split_units
from backend.watermark.skeleton import skeleton


def test_segmenter_rules():
    assert sentences("Hi. How are you doing today? I am fine, thanks. Ok.") == [
        "Hi. How are you doing today?", "I am fine, thanks.", "Ok."]
    assert sentences("Pi is 3.14 or so. Commas, like these, never split a sentence.") == [
        "Pi is 3.14 or so.", "Commas, like these, never split a sentence."]
    assert sentences("A title line here\nThe body text starts here. End") == [
        "A title line here", "The body text starts here.", "End"]  # a trailing short unit stays alone
    assert sentences("") == [] and sentences("   \n ") == []
    units = split_units("  One two three. Four five six.")
    assert [(u.start, u.end) for u in units] == [(2, 16), (17, 31)]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["word", "Word", "a", ".", "!", "?", " ", "  ", "\n", ",", "3.5", "\u2026", "é"]),
                max_size=60), st.integers(min_value=0, max_value=200))
def test_completed_units_never_change_when_text_is_appended(tokens, cut):
    """The property generation relies on: a unit complete in a prefix is a unit of the whole text."""
    text = "".join(tokens)
    prefix = text[:cut]
    done = split_units(prefix)[:-1]  # all but the last unit are complete
    full = split_units(text)
    assert [(u.text, u.start) for u in done] == [(u.text, u.start) for u in full[:len(done)]]


def test_skeleton_survives_content_synonyms_but_not_structure():
    assert skeleton("The old dog slept under a tree.") == skeleton("The elderly hound rested beneath a tree.")
    assert skeleton("People walked slowly along the street.") == skeleton("Folks strolled gradually along the road.")
    assert skeleton("The dog slept.") != skeleton("The dog did not sleep.")
    assert skeleton("I don't think it's 3.5 times bigger, is it?") == "PRON AUX NEG W PRON # W , AUX PRON ?"
    assert skeleton("") == ""
