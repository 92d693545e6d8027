"""A miniature evaluation on the tiny writer: every table is filled, the numbers are well formed, and the server's
registry and master secret are left as they were."""
import math

from backend.watermark.evaluation import EvalConfig, evaluate, latest_evaluation
from backend.watermark.ipmark.config import IPMarkConfig
from backend.watermark.methods import METHODS, watermark_names
from backend.watermark.sampling import SamplingConfig


def test_small_evaluation(writer_handle, private_secret, identity):
    """Every table filled and well formed; and (issue 55 §2) on a throw-away registry with no master secret: the
    evaluation registered its model, a decoy and their users in the server's registry (kept after Stop, weakening
    every IPMark model-level p) and signed its texts with master-secret keys. One evaluation for both (each costs
    seconds of generation)."""
    from backend.watermark import identities

    before = (identities.summary_frame().to_dict(orient="records"), identities.all_users_by_model())
    private_secret.unlink(missing_ok=True)  # the identity fixture's registry needs no key: nothing read it yet
    cfg = EvalConfig(n_prompts=2, n_users=3, sampling=SamplingConfig(max_sentences=2, max_sentence_tokens=32),
                     ipmark=IPMarkConfig(n_candidates=4), attacks=(("copy_paste", 0.5),))
    done = evaluate(writer_handle, cfg)
    assert (identities.summary_frame().to_dict(orient="records"), identities.all_users_by_model()) == before
    assert not private_secret.exists()  # no key came from the master secret (it would have been created)
    result = done.value
    assert result.n_users == 3
    assert [q.method for q in result.quality] == list(METHODS.names())  # every registered method, side by side
    assert {"ipmark", "kgw", "hf-kgw", "synthid"} <= set(watermark_names())
    assert all(q.n == 2 and q.ppl_median > 1 for q in result.quality)
    conditions = {(d.method, d.condition) for d in result.detection}
    assert conditions == {(m, c) for m in watermark_names() for c in ("clean", "copy_paste 0.5")}
    for d in result.detection:
        assert 0 <= d.auc <= 1 and d.n_pos == 2 and d.n_neg == 2 + 39 and d.detect_ms > 0
        assert all(0 <= v <= 1 for v in (d.tpr_1, d.tpr_5, d.tpr_10))
    assert result.attribution and result.attribution[0].sentences == 1
    assert len(result.curves) == len(result.detection) and len(result.examples) == len(METHODS)
    assert not math.isnan(result.detection[0].auc)
    assert evaluate(writer_handle, cfg).cached
    assert latest_evaluation(writer_handle) is not None
    chosen = evaluate(writer_handle, EvalConfig(**{**cfg.__dict__, "methods": ("hf-kgw",)})).value  # cached texts
    assert [q.method for q in chosen.quality] == ["none", "hf-kgw"]
    assert {d.method for d in chosen.detection} == {"hf-kgw"}

