"""A clicked token's facts (app/ui/watermark_sentence.token_facts) from hand-made detections: KGW tokens' shares of z
add up to the detection's z; SynthID tokens say their g-values and their share; the seeding context is the tokens
the method seeds on."""
import math
import re
from dataclasses import dataclass

from app.ui.watermark_sentence import token_facts
from backend.watermark.hf_kgw.config import HFKGWConfig
from backend.watermark.methods import Detection
from backend.watermark.stats import LevelScore
from backend.watermark.synthid.config import SynthIDConfig


@dataclass(frozen=True)
class Report:
    tokens: tuple
    config: object


def _detection(tokens, pieces, level, config) -> Detection:
    return Detection(method="m", verdict="WATERMARKED", score=1.0, z=level.z, p_value=level.p_value, model_address=0,
                     model_name="", user_address=0, user_label="", guess_model=0, guess_user=0, evidence="",
                     levels=(level,), pieces=tuple(pieces), report=Report(tuple(tokens), config))


def _kgw():
    flags = [-1, 1, 1, 0, 1, 0, 1]
    tokens = [(f" t{i}", g) for i, g in enumerate(flags)]
    scored = [g for g in flags if g >= 0]
    n, gamma, green = len(scored), 0.25, sum(scored)
    variance = n * gamma * (1 - gamma)
    z = (green - gamma * n) / math.sqrt(variance)
    level = LevelScore("tokens", n, n, 0, float(green), gamma * n, variance, z, 0.01, -2.0)
    marks = {1: "strong", 0: "miss", -1: "unscored"}
    return _detection(tokens, [(t, marks[g], "") for t, g in tokens], level, HFKGWConfig(greenlist_ratio=gamma)), z


def test_kgw_tokens_say_their_membership_and_their_shares_add_up_to_z():
    found, z = _kgw()
    shares = []
    for i, (_, flag) in enumerate(found.report.tokens):
        facts = token_facts(found, i)
        assert ("In the green list" in facts[0]) == (flag == 1) and ("Not in its green list" in facts[0]) == (flag == 0)
        share = next((f for f in facts if f.startswith("Its share of z")), None)
        assert (share is None) == (flag < 0)
        if share:
            shares.append(float(re.search(r": ([+-][\d.]+) \(", share).group(1)))
    assert math.isclose(sum(shares), z, abs_tol=0.01)
    assert token_facts(found, 3)[-1] == "Seeded by the 1 token before it: “ t2”"


def test_synthid_tokens_say_their_g_values_and_the_n_gram_they_are_seeded_by():
    tokens = [(" a", -1, 3), (" b", 2, 3), (" c", 3, 3), (" d", 1, 3)]
    level = LevelScore("g-values (mean)", 3, 9, 0, 6 / 9, 0.5, 0.01, 1.67, 0.05, -1.3)
    found = _detection(tokens, [(t, "weak", "") for t, _, _ in tokens], level, SynthIDConfig(ngram_len=3))
    facts = token_facts(found, 2)
    assert "g-values: 3 of its 3 keys' are 1, a share of 100%." in facts
    assert any(f.startswith("It moves the text's mean g (0.667; unmarked 0.500) by +0.1667") for f in facts), facts
    assert facts[-1] == "Seeded by the 2 tokens before it: “ a b”"
