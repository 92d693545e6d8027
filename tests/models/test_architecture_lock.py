"""Every read of the model's own modules runs under its lock, the norm and q/k projections of the FP8 observed
logits included (another session's forward with hooks installed would otherwise run through them meanwhile)."""
import torch

from backend.models import load
from backend.models.architecture import attention_input_norm, attention_qk_states
from backend.models.locks import model_lock


def test_attention_qk_states_reads_the_modules_under_the_model_lock():
    model = load("tiny-llama").model
    seen = []
    handle = attention_input_norm(model, 0).register_forward_hook(
        lambda module, args, output: seen.append(model_lock(model).held))
    try:
        q, k = attention_qk_states(model, 0, torch.randn(1, 5, model.config.hidden_size))
    finally:
        handle.remove()
    assert seen == [True] and q.shape[2] == 5 and k.shape[2] == 5
    assert not model_lock(model).held
