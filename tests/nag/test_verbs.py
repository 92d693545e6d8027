"""NAG's cached computations are registered verbs whose derived code versions do not depend on the process."""
from tests.support.verb_versions import verbs_of, versions_in_a_fresh_process


def test_every_cached_nag_computation_is_a_registered_verb():
    assert set(verbs_of("nag")) == {"doc-features", "doc-embedding", "rank", "rank-job", "neuron", "deactivate"}


def test_unedited_code_keeps_its_version_in_another_process():
    here = {name: v.code_version for name, v in verbs_of("nag").items()}
    assert versions_in_a_fresh_process("nag") == here
