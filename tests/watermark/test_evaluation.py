"""A miniature evaluation on the tiny writer: every table is filled and the numbers are well formed."""
import math

from backend.watermark.evaluation import EvalConfig, evaluate, latest_evaluation
from backend.watermark.ipmark.config import IPMarkConfig
from backend.watermark.sampling import SamplingConfig


def test_small_evaluation(writer_handle):
    cfg = EvalConfig(n_prompts=2, n_users=3, sampling=SamplingConfig(max_sentences=2, max_sentence_tokens=32),
                     ipmark=IPMarkConfig(n_candidates=4), attacks=(("copy_paste", 0.5),))
    done = evaluate(writer_handle, cfg)
    result = done.value
    assert [q.method for q in result.quality] == ["none", "ipmark", "kgw"]
    assert all(q.n == 2 and q.ppl_median > 1 for q in result.quality)
    conditions = {(d.method, d.condition) for d in result.detection}
    assert conditions == {(m, c) for m in ("ipmark", "kgw") for c in ("clean", "copy_paste 0.5")}
    for d in result.detection:
        assert 0 <= d.auc <= 1 and d.n_pos == 2 and d.n_neg == 2 + 39
        assert all(0 <= v <= 1 for v in (d.tpr_1, d.tpr_5, d.tpr_10))
    assert result.attribution and result.attribution[0].sentences == 1
    assert len(result.curves) == len(result.detection) and len(result.examples) == 3
    assert not math.isnan(result.detection[0].auc)
    assert evaluate(writer_handle, cfg).cached
    assert latest_evaluation(writer_handle) is not None
