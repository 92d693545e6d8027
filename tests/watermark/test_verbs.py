"""The watermark feature's cached computations are registered verbs (backend.verbs): listed with the others, keyed
as before except for a code version derived from their source (the paraphrase's included, which had none), and the
evaluation's key never carries the master secret's tag."""
import re
from dataclasses import replace
from pathlib import Path

from backend.features import feature
from backend.store.artifacts import artifact_key
from backend.store.codec import canonical_params, loads
from backend.store.reference import REFERENCE_DIR, read_reference
from backend.verbs import all_verbs, source_digest
from backend.watermark import demo
from backend.watermark import paraphrase as paraphrase_module
from backend.watermark.evaluation import EvalConfig, evaluate_verb
from backend.watermark.examples import ExampleSpec, compute_example, example_verb
from backend.watermark.generation import generate_verb
from backend.watermark.keys import secret_tag
from backend.watermark.length import length_path_verb
from backend.watermark.methods import METHODS
from backend.watermark.sampling import SamplingConfig
from backend.watermark.paraphrase import ParaphraseRequest, compute_paraphrase, paraphrase_verb, paraphraser
from backend.watermark.throwaway import throwaway_registry

WATERMARK = Path(__file__).resolve().parents[2] / "backend" / "watermark"


def test_every_watermark_verb_is_registered_under_its_store_action():
    listed = {v.name: v for v in all_verbs() if v.feature == "watermark"}
    assert listed == {"generate": generate_verb, "paraphrase": paraphrase_verb, "length_path": length_path_verb,
                      "evaluate": evaluate_verb, demo.EXAMPLE_ACTION: example_verb}
    assert len({v.code_version for v in listed.values()}) == len(listed)  # each from its own code


def test_no_watermark_module_keeps_a_hand_bumped_version_or_calls_the_cache_itself():
    sources = {p.relative_to(WATERMARK): p.read_text() for p in WATERMARK.rglob("*.py")}
    offenders = [str(p) for p, text in sources.items()
                 if re.search(r"CODE_VERSION|(?<![\w.])cached(_many)?\(|\blatest\(\"", text)]
    assert offenders == []


def test_the_paraphrase_carries_a_version_derived_from_its_module():
    from backend.models import load

    handle = load("tiny-llama")
    assert paraphrase_verb.code_version == source_digest((compute_paraphrase, paraphrase_module))
    request = ParaphraseRequest("The old city was quiet.")
    done = paraphrase_verb(handle, request)
    params = canonical_params(request)  # the key is the request, as before; only the version is new
    assert done.key == artifact_key("watermark", "paraphrase", handle.fingerprint, params,
                                    paraphrase_verb.code_version)
    assert done.key != artifact_key("watermark", "paraphrase", handle.fingerprint, params, "1")
    assert paraphraser(handle)(request.text) == done.value
    assert paraphrase_verb(handle, request).cached


def test_the_evaluation_is_keyed_by_the_throwaway_root_never_the_master_secret():
    cfg = EvalConfig(n_prompts=1, n_users=2)
    keyed = evaluate_verb.key(None, cfg)
    with throwaway_registry():
        assert keyed == replace(cfg, secret_tag=secret_tag())
    assert keyed.secret_tag != secret_tag()  # the master secret's tag (this test's private secret)


def test_the_example_verb_writes_the_shipped_human_example_under_its_shipped_params():
    human = next(r for r in read_reference(REFERENCE_DIR / "watermark_examples.jsonl.gz")
                 if r["params"] == canonical_params(ExampleSpec(name="human", method="none")))
    assert compute_example(None, ExampleSpec(name="human", method="none")) == loads(human["payload"])


def test_a_marked_example_is_written_with_the_demo_keys_and_listed(writer_handle):
    demo.add_demo()
    spec = ExampleSpec(name="kgw", method="kgw", prompt="Write about the harbour.",
                       sampling=SamplingConfig(max_sentences=2))
    steps = []
    done = example_verb(writer_handle, spec, lambda fraction, message: steps.append(message))
    assert (done.value.method, done.value.model_address, done.value.model_id) == ("kgw", demo.DEMO_MODEL_ADDRESS,
                                                                                 writer_handle.id)
    assert done.value.text and steps and not done.cached
    assert example_verb(writer_handle, spec).cached and demo.examples() == [done.value]


def test_the_verbs_reads_keep_the_methods_in_their_registration_order():
    """verb_reads imports the method modules before load_all does: the order is still backend.features'."""
    modules = feature("watermark").registering_modules
    positions = [modules.index(m.run.__module__) for m in METHODS if not m.is_baseline]
    assert positions == sorted(positions) and [m.name for m in METHODS][0] == "none"
