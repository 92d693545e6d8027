"""FP8's cached computations are registered verbs whose derived code versions do not depend on the process."""
from tests.support.verb_versions import verbs_of, versions_in_a_fresh_process


def test_the_bounds_their_drill_down_and_the_simulation_are_registered_verbs():
    assert set(verbs_of("fp8")) == {"bounds", "head", "simulate"}


def test_unedited_code_keeps_its_version_in_another_process():
    here = {name: v.code_version for name, v in verbs_of("fp8").items()}
    assert versions_in_a_fresh_process("fp8") == here
