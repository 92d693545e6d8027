"""hf-kgw: transformers' KGW written through the sentence loop and read by transformers.WatermarkDetector.

The app's z-score, counts and prediction are the detector's on the same ids; the per-token highlight sums to the
detector's green count; text marked by `model.generate(watermarking_config=...)` outside the app is detected
from its text alone; another hashing key does not flag it."""
import pytest
import torch
from transformers import WatermarkDetector, WatermarkingConfig

from backend.models import embedded, load
from backend.models.generate import encode_prompt
from backend.watermark.generation import make_request, run_generation
from backend.watermark.hf_kgw.config import HFKGWConfig
from backend.watermark.hf_kgw.detect import detect as hf_detect
from backend.watermark.library import text_config
from backend.watermark.methods import CLEAN, METHODS, TOO_SHORT, WATERMARKED, DetectRequest, detect
from backend.watermark.sampling import SamplingConfig

SAMPLING = SamplingConfig(max_sentences=4, max_sentence_tokens=48, temperature=1.0, seed=5)
PROMPT = "Write about the harbour town."


def library_detector(handle, cfg: HFKGWConfig) -> WatermarkDetector:
    return WatermarkDetector(model_config=text_config(handle), device="cpu",
                             watermarking_config=WatermarkingConfig(
                                 greenlist_ratio=cfg.greenlist_ratio, bias=cfg.bias, hashing_key=cfg.hashing_key,
                                 seeding_scheme=cfg.seeding_scheme, context_width=cfg.context_width))


def assert_same_as_library(handle, text: str, cfg: HFKGWConfig):
    report = hf_detect(handle, text, cfg)
    ids = torch.tensor([handle.tokenizer(text, add_special_tokens=False)["input_ids"]])
    out = library_detector(handle, cfg)(ids, z_threshold=cfg.z_threshold, return_dict=True)
    assert report.z == float(out.z_score[0]) and report.p_value == float(out.p_value[0])  # exactly
    assert report.prediction == bool(out.prediction[0])
    assert (report.n_tokens, report.n_green) == (int(out.num_tokens_scored[0]), int(out.num_green_tokens[0]))
    marks = [m for _, m in report.tokens]
    assert marks.count(1) == report.n_green and marks.count(0) + marks.count(1) == report.n_tokens
    return report


def outside_the_app(handle, watermarking_config, n_tokens: int = 160, seed: int = 0) -> str:
    """Text written by transformers' own generate with its watermark (allowed in tests only)."""
    torch.manual_seed(seed)
    ids = encode_prompt(handle, PROMPT)
    out = handle.model.generate(ids, attention_mask=torch.ones_like(ids), do_sample=True, max_new_tokens=n_tokens,
                                min_new_tokens=n_tokens, watermarking_config=watermarking_config,
                                pad_token_id=handle.tokenizer.pad_token_id)
    return handle.tokenizer.decode(out[0, ids.shape[1]:], skip_special_tokens=True)


@pytest.mark.parametrize("cfg", [HFKGWConfig(), HFKGWConfig(seeding_scheme="selfhash", context_width=2, bias=3.0,
                                                            hashing_key=7)])
def test_generated_in_the_app_and_scored_exactly_as_the_library_does(writer_handle, cfg):
    marked = run_generation(writer_handle, make_request(PROMPT, "hf-kgw", 0, 0, SAMPLING, cfg))
    plain = run_generation(writer_handle, make_request(PROMPT, "none", 0, 0, SAMPLING))
    hit = assert_same_as_library(writer_handle, marked.text, cfg)
    miss = assert_same_as_library(writer_handle, plain.text, cfg)
    assert hit.verdict == WATERMARKED and hit.z > 4, hit.z
    assert miss.verdict == CLEAN and miss.z < hit.z


def test_text_marked_outside_the_app_is_detected_from_its_text_alone(writer_handle):
    cfg = HFKGWConfig(bias=2.5, hashing_key=12345)
    text = outside_the_app(writer_handle, cfg.watermarking_config())
    found = detect(text, DetectRequest("hf-kgw", config=cfg, handle=writer_handle))
    assert found.verdict == WATERMARKED and found.model_address == 0, found.evidence
    assert found.levels and found.levels[0].z == found.z and found.p_value < 1e-4
    assert sum(mark == "strong" for _, mark, _ in found.pieces) == found.report.n_green
    assert_same_as_library(writer_handle, text, HFKGWConfig(hashing_key=54321))


def test_judges_without_an_identity_and_says_too_short(writer_handle):
    method = METHODS.get("hf-kgw")
    assert method.identity_free and method.needs_model_to_detect and not method.identifies_users
    assert detect("Hi.", DetectRequest("hf-kgw", handle=writer_handle)).verdict == TOO_SHORT
    assert detect("", DetectRequest("hf-kgw", handle=writer_handle)).verdict == TOO_SHORT


@pytest.mark.skipif(not embedded.is_prepared("smollm2-135m-instruct"),
                    reason="run `python -m backend models prepare` first (make test does)")
def test_on_the_embedded_model_library_text_is_detected_and_scores_match():
    handle = load("smollm2-135m-instruct")
    cfg = HFKGWConfig()  # transformers' defaults: the public hashing key, lefthash
    text = outside_the_app(handle, cfg.watermarking_config(), n_tokens=80)
    report = assert_same_as_library(handle, text, cfg)
    assert report.verdict == WATERMARKED, report.z
    assert_same_as_library(handle, text, HFKGWConfig(seeding_scheme="selfhash", hashing_key=99))


def test_detections_at_once_in_threads_score_as_one_at_a_time(writer_handle):
    """The kept detector is shared (its processor reseeds one generator per token): texts checked from several
    threads at once (browser sessions, a scan's shards) score exactly as checked one at a time."""
    from concurrent.futures import ThreadPoolExecutor

    cfg = HFKGWConfig()
    texts = [run_generation(writer_handle, make_request(PROMPT, method, 0, 0, SAMPLING, *extra)).text
             for method, extra in (("hf-kgw", (cfg,)), ("none", ()))] * 3
    alone = [hf_detect(writer_handle, text, cfg) for text in texts]
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(lambda text: hf_detect(writer_handle, text, cfg), texts))
    assert [(r.z, r.tokens) for r in together] == [(r.z, r.tokens) for r in alone]
