"""The contract every registered attack honours (a new attack is tested by being registered)."""
import pytest

from backend.errors import UserError
from backend.watermark.attacks import ATTACKS, AttackContext, apply_attack, changed_share

TEXT = ("The old city was quiet and calm. People walked slowly along the street. A huge market filled the square "
        "with music. Children ran to see the bright flowers. The river was cold and the sky was grey.")
OTHER = "An unrelated first sentence appears. Another unrelated sentence follows. A third unrelated one ends."


def context(attack, seed: int = 1) -> AttackContext:
    """What a caller provides, read from the attack's flags (a stand-in paraphraser for model attacks)."""
    rewrite = (lambda text: " ".join(reversed(text.split()))) if attack.needs_model else None
    return AttackContext(seed=seed, other_text=OTHER, paraphrase=rewrite)


@pytest.mark.parametrize("name", ATTACKS.names())
def test_attack_changes_the_text_and_is_seeded(name):
    attack = ATTACKS.get(name)
    assert 0 <= attack.default_rate <= 1
    out = apply_attack(name, TEXT, None, context(attack))
    assert isinstance(out, str) and out.strip() and out != TEXT
    assert changed_share(TEXT, out) > 0
    assert apply_attack(name, TEXT, None, context(attack)) == out  # same seed, same result


@pytest.mark.parametrize("name", ATTACKS.names())
def test_attack_handles_empty_text_and_checks_its_rate(name):
    attack = ATTACKS.get(name)
    assert isinstance(apply_attack(name, "", None, context(attack)), str)
    with pytest.raises(UserError):
        apply_attack(name, TEXT, 1.5, context(attack))
    with pytest.raises(UserError):
        apply_attack(name, TEXT, -0.1, context(attack))


@pytest.mark.parametrize("name", ATTACKS.names())
def test_needs_model_is_honoured(name):
    """An attack that needs the model refuses without it; the others never need one."""
    if ATTACKS.get(name).needs_model:
        with pytest.raises(UserError):
            apply_attack(name, TEXT, None, AttackContext(seed=1, other_text=OTHER))
    else:
        assert apply_attack(name, TEXT, None, AttackContext(seed=1, other_text=OTHER)) != TEXT


def test_changed_share():
    assert changed_share(TEXT, TEXT) == 0 and changed_share("", "") == 0
    assert changed_share("a b c d", "a b") == 0.5 and changed_share("a b", "a b c d") == 0.5
    assert changed_share("a b c d", "x y z w") == 1
