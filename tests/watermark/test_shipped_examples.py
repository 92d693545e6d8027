"""The shipped example texts (data/reference/watermark_examples.jsonl.gz, written by scripts/watermark_examples.py):
genuine reference artifacts that a fresh store imports, and the IPMark ones read back from their text alone as
written by the demo user whose keys marked them."""
from backend.store.artifacts import artifact_key
from backend.store.reference import REFERENCE_DIR, import_reference, read_reference
from backend.watermark import demo
from backend.watermark.methods import METHODS, WATERMARKED, DetectRequest, detect

SHIPPED = REFERENCE_DIR / "watermark_examples.jsonl.gz"


def test_examples_are_genuine_reference_artifacts():
    rows = read_reference(SHIPPED)
    assert rows and all((r["feature"], r["action"]) == ("watermark", demo.EXAMPLE_ACTION) for r in rows)
    for r in rows:  # an edited row would be refused on import
        assert r["key"] == artifact_key(r["feature"], r["action"], r["fingerprint"], r["params"], r["code_version"])


def test_a_fresh_store_lists_them_and_ipmark_ones_name_their_demo_user():
    import_reference(REFERENCE_DIR)
    shipped = demo.examples()
    methods = [e.method for e in shipped]
    assert methods.count("ipmark") == 2 and methods[-1] == "none"
    registered = {m.name: m for m in METHODS if not m.is_baseline}
    assert set(registered) <= set(methods), "a newly registered method: run scripts/watermark_examples.py"
    for e in shipped:  # identity-keyed examples carry the demo identity, the others their default public keys
        if e.method != "none":
            assert e.model_address == (0 if registered[e.method].identity_free else demo.DEMO_MODEL_ADDRESS)
    demo.add_demo()
    for example in shipped:
        if example.method == "ipmark":
            found = detect(example.text, DetectRequest("ipmark"))
            assert found.verdict == WATERMARKED
            assert (found.model_address, found.user_address) == (demo.DEMO_MODEL_ADDRESS, example.user_address)
        if example.method == "none":
            assert detect(example.text, DetectRequest("ipmark")).verdict != WATERMARKED
