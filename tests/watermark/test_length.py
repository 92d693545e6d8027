"""Writing continues to the requested number of sentences, and replaying a recorded path with the
writer's own keys gives back the generated text (what bench/watermark_length.py relies on)."""
import torch

from backend.watermark.generation import make_request
from backend.watermark.ipmark.config import IPMarkConfig
from backend.watermark.length import attribution_trials, generate_path, length_rows, replay
from backend.watermark.sampling import SamplingConfig, first_candidate, sentence_loop

PROMPT = "Write about the harbour town."
SAMPLING = SamplingConfig(max_sentences=5, max_sentence_tokens=40, temperature=1.0, seed=2)


def eos_first(handle):
    """A logits processor that makes the end-of-answer token overwhelmingly likely."""
    eos = handle.tokenizer.eos_token_id

    def processor(input_ids, scores):
        boosted = scores.clone()
        boosted[:, eos] += 1e4
        return boosted

    return processor


def test_writing_continues_past_the_end_of_answer_until_the_requested_sentences(writer_handle):
    stop = SamplingConfig(**{**SAMPLING.__dict__, "continue_past_eos": False})
    stopped = sentence_loop(writer_handle, PROMPT, stop, 1, first_candidate, logits_processors=(eos_first(writer_handle),))
    assert len(stopped.sentences) <= 1  # the model ends its answer at once
    kept = sentence_loop(writer_handle, PROMPT, SAMPLING, 1, first_candidate, logits_processors=(eos_first(writer_handle),))
    assert len(kept.sentences) == SAMPLING.max_sentences
    assert all(s.ended != "eos" for s in kept.sentences)
    assert writer_handle.tokenizer.eos_token not in kept.text


def test_replay_with_the_writers_keys_is_the_generated_text(fixed_secret, writer_handle, identity):
    torch.manual_seed(0)
    model, users = identity
    request = make_request(PROMPT, "ipmark", model, users[0], SAMPLING, IPMarkConfig(n_candidates=3))
    path = generate_path(writer_handle, request).value
    assert len(path.candidates) == len(path.chosen) == SAMPLING.max_sentences
    assert all(len(c) == 3 for c in path.candidates)
    assert replay(path, model, users[0], request.ipmark) == path.text
    others = {replay(path, model, u, request.ipmark) for u in users[1:]}
    assert others - {path.text}  # another user's keys choose other candidates somewhere
    again = generate_path(writer_handle, request)
    assert again.provenance.startswith("cached") and again.value.text == path.text


def test_length_rows_count_only_texts_long_enough(identity):
    model, users = identity
    trials = [{1: (True, True, False, False), 2: (True, False, False, False)}, {1: (False, False, False, False)}]
    rows = length_rows(trials)
    assert [(r.sentences, r.n_texts, r.model_accuracy, r.user_accuracy) for r in rows] == [(1, 2, 0.5, 0.5),
                                                                                         (2, 1, 1.0, 0.0)]
    assert attribution_trials("Too short.", model, users[0], {model: users}, (1, 2, 40)).keys() <= {1}
