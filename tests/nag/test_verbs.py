"""NAG's cached computations are registered verbs whose derived code versions do not depend on the process."""
from backend.verbs import all_verbs
from tests.support.verb_versions import versions_in_a_fresh_process


def _nag_verbs():
    return {v.name: v for v in all_verbs() if v.feature == "nag"}


def test_every_cached_nag_computation_is_a_registered_verb():
    assert set(_nag_verbs()) == {"doc-features", "doc-embedding", "rank", "rank-job", "neuron", "deactivate"}


def test_unedited_code_keeps_its_version_in_another_process():
    here = {name: v.code_version for name, v in _nag_verbs().items()}
    assert versions_in_a_fresh_process("nag") == here
