"""FP8's cached computations are registered verbs whose derived code versions do not depend on the process."""
from backend.verbs import all_verbs
from tests.support.verb_versions import versions_in_a_fresh_process


def _fp8_verbs():
    return {v.name: v for v in all_verbs() if v.feature == "fp8"}


def test_the_bounds_their_drill_down_and_the_simulation_are_registered_verbs():
    assert set(_fp8_verbs()) == {"bounds", "head", "simulate"}


def test_unedited_code_keeps_its_version_in_another_process():
    here = {name: v.code_version for name, v in _fp8_verbs().items()}
    assert versions_in_a_fresh_process("fp8") == here
