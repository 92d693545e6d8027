import json
import os

import pytest

from backend.errors import UserError
from backend.models import get_spec, list_models, load
from backend.models.fingerprint import fingerprint_dir


def test_registry_lists_embedded_default_and_extra_models():
    ids = [spec.id for spec in list_models()]
    assert "smollm2-135m-instruct" in ids
    assert get_spec("smollm2-135m-instruct").is_embedded
    assert "tiny-llama" in ids


def test_unknown_model_is_refused_with_the_allowlist():
    with pytest.raises(UserError, match="Allowlisted models"):
        load("/etc/passwd")


def test_model_over_budget_is_refused_before_loading(monkeypatch):
    monkeypatch.setenv("DASH_MAX_PARAMS", "1000")
    extra = os.environ["DASH_EXTRA_MODELS"]
    monkeypatch.setenv("DASH_EXTRA_MODELS", extra.replace("tiny-qwen2=", "tiny-qwen2-budget="))
    with pytest.raises(UserError, match="budget"):
        load("tiny-qwen2-budget")


def test_loading_twice_returns_the_same_object():
    assert load("tiny-llama") is load("tiny-llama")


def test_a_registry_entry_can_ask_for_more_new_tokens_but_only_a_whole_number():
    from backend.models.allowlist import ModelSpec

    assert get_spec("smollm2-135m-arith-reasoner-everyday").max_new_tokens == 128  # worked solutions run long
    assert get_spec("smollm2-135m-instruct").max_new_tokens == 0  # the pages' default
    for bad in (-1, "lots", 12.5, True):
        with pytest.raises(UserError, match="max_new_tokens"):
            ModelSpec("m", "m", "embedded:m", max_new_tokens=bad)


def test_bad_extra_models_entry_is_a_user_error(monkeypatch):
    monkeypatch.setenv("DASH_EXTRA_MODELS", "no-equals-sign")
    with pytest.raises(UserError, match="id=source"):
        list_models()


def test_fingerprint_is_stable_and_sensitive_to_weights(tmp_path):
    from tests.support.tiny import build_tiny_model

    a = build_tiny_model("llama", tmp_path / "a", seed=0)
    b = build_tiny_model("llama", tmp_path / "b", seed=0)
    c = build_tiny_model("llama", tmp_path / "c", seed=1)
    assert fingerprint_dir(a) == fingerprint_dir(b)
    assert fingerprint_dir(a) != fingerprint_dir(c)
    config = json.loads((a / "config.json").read_text())
    config["rms_norm_eps"] = 1e-3
    (b / "config.json").write_text(json.dumps(config))
    assert fingerprint_dir(a) != fingerprint_dir(b)


def _greedy_without_cache(handle, prompt: str, n: int) -> tuple[int, ...]:
    """Reference greedy decode: a full forward over the whole sequence at every step, stopping at EOS."""
    import torch

    from backend.models.generate import encode_prompt

    ids = encode_prompt(handle, prompt)
    new: list[int] = []
    with torch.no_grad():
        for _ in range(n):
            token = int(handle.model(input_ids=ids).logits[0, -1].argmax())
            if token == handle.tokenizer.eos_token_id:
                break
            new.append(token)
            ids = torch.cat([ids, torch.tensor([[token]])], dim=1)
    return tuple(new)


def test_generate_runs_offline_and_rejects_bad_input(tiny_handle):
    from backend.models.generate import generate_text

    out = generate_text(tiny_handle, "Hello", max_new_tokens=5)
    assert out.token_ids == _greedy_without_cache(tiny_handle, "Hello", 5)
    assert out.text == tiny_handle.tokenizer.decode(list(out.token_ids), skip_special_tokens=True)
    with pytest.raises(UserError):
        generate_text(tiny_handle, "   ")
    with pytest.raises(UserError):
        generate_text(tiny_handle, "Hello", max_new_tokens=0)


def test_prompt_longer_than_context_is_refused(tiny_handle):
    from backend.models.generate import generate_text

    with pytest.raises(UserError, match="context"):
        generate_text(tiny_handle, "word " * 400, max_new_tokens=2)


def test_adapter_is_merged_and_changes_fingerprint(tmp_path, monkeypatch):
    """A LoRA adapter listed in the registry is merged at load; the fingerprint covers base + adapter."""
    import torch
    from peft import LoraConfig, get_peft_model

    from backend.models import loading

    base = load("tiny-llama")
    peft_model = get_peft_model(loading.AutoModelForCausalLM.from_pretrained(os.environ["DASH_EXTRA_MODELS"]
                                .split("tiny-llama=")[1].split(";")[0]),
                                LoraConfig(r=4, target_modules=["q_proj", "v_proj"], init_lora_weights=False))
    peft_model.save_pretrained(tmp_path / "adapter")
    registry = tmp_path / "models" / "registry.json"
    registry.parent.mkdir()
    registry.write_text(json.dumps({"models": [{"id": "tiny-llama-lora", "display_name": "tiny + lora",
                                                 "source": base.spec.source, "adapter": str(tmp_path / "adapter")}]}))
    monkeypatch.setenv("DASH_DATA_DIR", str(tmp_path))
    merged = load("tiny-llama-lora")
    assert merged.fingerprint != base.fingerprint
    ids = base.tokenizer("abc", return_tensors="pt")["input_ids"]
    with torch.no_grad():
        assert not torch.allclose(merged.model(input_ids=ids).logits, base.model(input_ids=ids).logits)
    monkeypatch.setattr(loading, "_resident", loading.Residency(lambda handle: handle.model, loading.in_use))
    (tmp_path / "adapter" / "adapter_config.json").unlink()
    with pytest.raises(UserError, match="adapter"):
        load("tiny-llama-lora")
