"""synthid: transformers' SynthID-Text written through the sentence loop and read by its g-value score.

The g-values behind the report are those of transformers' own processor (a separate instance, built from
SynthIDTextWatermarkingConfig) on the same ids, masked by its own repetition and EOS masks; the p-value is valid
on unmarked token sequences (uniform under the null); text generated in the app and text marked by
`model.generate(watermarking_config=...)` outside it are detected from their text alone."""
import numpy as np
import pytest
import torch
from transformers import SynthIDTextWatermarkingConfig

from backend.errors import UserError
from backend.models import embedded, load
from backend.watermark.generation import make_request, run_generation
from backend.watermark.library import text_config
from backend.watermark.methods import CLEAN, METHODS, WATERMARKED, DetectRequest, detect
from backend.watermark.sampling import SamplingConfig
from backend.watermark.synthid.config import SynthIDConfig
from backend.watermark.synthid.detect import detect as synthid_detect
from backend.watermark.synthid.detect import layer_weights, score_tests
from tests.watermark.test_hf_kgw import outside_the_app

SAMPLING = SamplingConfig(max_sentences=4, max_sentence_tokens=48, temperature=1.0, seed=5)
PROMPT = "Write about the harbour town."


def library_processor(handle, cfg: SynthIDConfig):
    wm = SynthIDTextWatermarkingConfig(ngram_len=cfg.ngram_len, keys=list(cfg.keys),
                                       sampling_table_seed=cfg.sampling_table_seed)
    return wm.construct_processor(text_config(handle).vocab_size, "cpu")


def assert_g_values_are_the_library_s(handle, text: str, cfg: SynthIDConfig):
    report = synthid_detect(handle, text, cfg)
    ids = torch.tensor([handle.tokenizer(text, add_special_tokens=False)["input_ids"]])
    proc = library_processor(handle, cfg)
    g = proc.compute_g_values(ids)[0]  # [L - n + 1, depth]
    mask = (proc.compute_context_repetition_mask(ids)
            * proc.compute_eos_token_mask(ids, handle.tokenizer.eos_token_id)[:, cfg.ngram_len - 1:])[0].bool()
    ones = [o for _, o, _ in report.tokens]
    assert ones[:cfg.ngram_len - 1] == [-1] * (cfg.ngram_len - 1)
    assert ones[cfg.ngram_len - 1:] == [int(x.sum()) if m else -1 for x, m in zip(g, mask)]
    kept = g[mask].double()
    assert report.n_tokens == kept.shape[0] and report.depth == len(cfg.keys)
    assert report.mean.score == pytest.approx(float(kept.mean()), abs=1e-12)
    assert report.weighted.score == pytest.approx(float((kept * layer_weights(kept.shape[1])).mean()), abs=1e-12)
    return report


def test_generated_in_the_app_is_detected_with_the_library_s_g_values(writer_handle):
    cfg = SynthIDConfig(keys=(11, 22, 33, 44, 55, 66), ngram_len=4)
    marked = run_generation(writer_handle, make_request(PROMPT, "synthid", 0, 0, SAMPLING, cfg))
    plain = run_generation(writer_handle, make_request(PROMPT, "none", 0, 0, SAMPLING))
    hit = assert_g_values_are_the_library_s(writer_handle, marked.text, cfg)
    miss = assert_g_values_are_the_library_s(writer_handle, plain.text, cfg)
    assert hit.verdict == WATERMARKED and hit.mean.score > 0.55, hit.mean
    assert miss.verdict == CLEAN and miss.mean.score < hit.mean.score


def test_text_marked_outside_the_app_is_detected_from_its_text_alone(writer_handle):
    cfg = SynthIDConfig(keys=(654, 400, 836, 123, 340, 443, 597, 160, 57), ngram_len=5)
    text = outside_the_app(writer_handle, cfg.watermarking_config(), n_tokens=200)
    found = detect(text, DetectRequest("synthid", config=cfg, handle=writer_handle))
    assert found.verdict == WATERMARKED and found.model_address == 0, found.evidence
    assert found.levels and found.levels[0].p_value == found.p_value
    assert_g_values_are_the_library_s(writer_handle, text, cfg)
    other = detect(text, DetectRequest("synthid", config=SynthIDConfig(keys=(1, 2, 3)), handle=writer_handle))
    assert other.score < found.score


def test_p_values_are_uniform_on_unmarked_token_sequences():
    """Under the null (ids chosen without the keys) the exact mean-score p-value is uniform: P(p <= a) <= a."""
    cfg = SynthIDConfig()
    proc = SynthIDTextWatermarkingConfig(ngram_len=cfg.ngram_len, keys=list(cfg.keys)).construct_processor(5000,
                                                                                                          "cpu")
    pi = float(proc.sampling_table.double().mean())
    rng = np.random.default_rng(0)
    p_mean, p_weighted = [], []
    for _ in range(400):
        ids = torch.tensor(rng.integers(0, 5000, size=(1, 60)))
        g, mask = proc.compute_g_values(ids)[0], proc.compute_context_repetition_mask(ids)[0]
        mean, weighted = score_tests(g, mask, pi)
        p_mean.append(mean.p_value)
        p_weighted.append(weighted.p_value)
    for p in (np.array(p_mean), np.array(p_weighted)):
        for a in (0.05, 0.2, 0.5):  # 400 draws: the share below a is within 4 binomial sd of a
            assert abs(np.mean(p <= a) - a) <= 4 * np.sqrt(a * (1 - a) / 400) + 0.02, (a, np.mean(p <= a))


def test_bad_settings_are_user_errors_naming_the_field(writer_handle):
    with pytest.raises(UserError, match="ngram_len"):
        detect("abc", DetectRequest("synthid", config=SynthIDConfig(ngram_len=8), handle=writer_handle))
    with pytest.raises(UserError, match="keys"):
        SynthIDConfig(keys=())
    with pytest.raises(UserError, match="keys"):
        SynthIDConfig(keys=(1, "x"))
    assert METHODS.get("synthid").identity_free


@pytest.mark.skipif(not embedded.is_prepared("smollm2-135m-instruct"),
                    reason="run `python -m backend models prepare` first (make test does)")
def test_on_the_embedded_model_library_text_is_detected():
    handle = load("smollm2-135m-instruct")
    cfg = SynthIDConfig()
    text = outside_the_app(handle, cfg.watermarking_config(), n_tokens=64)
    report = assert_g_values_are_the_library_s(handle, text, cfg)
    assert report.mean.score > 0.53 and report.verdict == WATERMARKED, report.mean


def test_nothing_after_a_chat_end_of_turn_is_scored():
    """SynthID's detector scores up to the first stop id of the one stop rule, a chat end-of-turn that is not the
    tokenizer's eos included (transformers' mask is given the tokenizer's eos alone)."""
    from backend.models.rules import stop_ids

    handle = load("tiny-llama")
    tok = handle.tokenizer
    old_eos, tok.eos_token = tok.eos_token, "<|endoftext|>"  # the end of turn (<|im_end|>) is now another id
    try:
        assert tok.convert_tokens_to_ids("<|im_end|>") in stop_ids(handle) - {tok.eos_token_id}
        words = "the harbour town sleeps under a grey sky"
        upto = synthid_detect(handle, words + "<|im_end|>")
        after = synthid_detect(handle, words + "<|im_end|>" + " and the boats come home at night")
        assert after.n_tokens == upto.n_tokens > 0
    finally:
        tok.eos_token = old_eos
