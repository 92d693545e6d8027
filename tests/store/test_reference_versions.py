"""The shipped reference artifacts (data/reference/) are results of the code as it is: each row is a registered
verb's, under that verb's current derived code version, so a page's first view is served from them. A verb whose
code changed fails here: recompute its rows (docs/architecture.md, "Reference artifacts"), or, when
bench/verb_snapshot.py shows its outputs unchanged, re-key them with scripts/rekey_reference.py."""
from backend.store.artifacts import artifact_key
from backend.store.codec import loads
from backend.store.reference_files import REFERENCE_DIR, read_reference, reference_files
from backend.verbs import all_verbs


def test_every_reference_row_is_a_verb_at_its_current_code_version():
    versions = {(v.feature, v.name): v.code_version for v in all_verbs()}
    stale, unknown = [], []
    for path in reference_files(REFERENCE_DIR):
        for row in read_reference(path):
            kind = (row["feature"], row["action"])
            if kind not in versions:
                unknown.append(f"{path.name}: {' '.join(kind)}")
            elif row["code_version"] != versions[kind] or row["key"] != artifact_key(
                    *kind, row["fingerprint"], row["params"], versions[kind]):
                stale.append(f"{path.name}: {' '.join(kind)}")
    assert not unknown, f"rows of no registered verb: {sorted(set(unknown))}"
    assert not stale, f"rows computed by older code: {sorted(set(stale))}"


def test_every_reference_row_decodes_with_the_code_as_it_is():
    """A result type renamed or moved since a row was stored must still resolve (backend.store.codec's
    MOVED_PACKAGES), or the page showing it would fail."""
    for path in reference_files(REFERENCE_DIR):
        for row in read_reference(path):
            loads(row["payload"])
