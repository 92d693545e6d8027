"""The first view's sentence says what the result on screen shows, and says so when it does not show the claim."""
from types import SimpleNamespace

import numpy as np

from app.figures.findings import disagreement_finding, fp8_finding, nag_finding


def _rollout(values):
    n = len(values)
    return SimpleNamespace(signals={"kl": np.asarray(values, dtype=np.float32)},
                           tokens=tuple(f" t{i}" for i in range(n)))


def test_disagreement_finding_names_early_concentrated_disagreement():
    values = [0.0] * 40
    values[1], values[2], values[4] = 5.0, 4.0, 3.0
    text = disagreement_finding(_rollout(values), "kl", "KL", 3)
    assert text.startswith("Disagreement is concentrated and early here")
    assert "carry 100% of the total KL" in text and "'t1', 't2', 't4'" in text


def test_disagreement_finding_says_when_the_rollout_does_not_show_the_claim():
    late = [0.1] * 40
    late[35], late[37], late[39] = 0.2, 0.2, 0.2
    text = disagreement_finding(_rollout(late), "kl", "KL", 3)
    assert text.startswith("This rollout does not show disagreement concentrated and early")
    assert disagreement_finding(_rollout([0.0] * 5), "kl", "KL", 3).startswith("The two models agree everywhere")


def test_nag_finding_compares_with_chance_and_the_embedding_baseline():
    text = nag_finding({10: 0.8, 20: 0.7}, relevant=20, pool_size=100, embedding={10: 0.6}, targets="code")
    assert "top 10 documents NAG picks 80%" in text and "20% expected at random (20 of 100" in text
    assert "60% for the embedding baseline" in text
    assert "no better than chance" in nag_finding({10: 0.1}, 20, 100, None, "code")


def test_fp8_finding_names_the_peak_and_where():
    bound = np.full((2, 3), 10.0)
    observed = np.array([[1.0, 2.0, 1.0], [5.0, 1.0, 1.0]])
    text = fp8_finding(SimpleNamespace(observed=observed, bound=bound))
    assert "at most 50.0% of that head's guaranteed bound (layer 1, head 0;" in text and "1.0 bits" in text
    assert "No sample text" in fp8_finding(SimpleNamespace(observed=np.full((2, 3), np.nan), bound=bound))
