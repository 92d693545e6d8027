import json
import logging
import os
import stat

import pytest

from backend.errors import UserError
from backend.watermark import identities, keys


def test_secret_created_on_first_use_owner_only(private_secret):
    assert not private_secret.exists()
    keys.master_key()
    assert private_secret.exists()
    assert stat.S_IMODE(private_secret.stat().st_mode) == 0o600
    assert stat.S_IMODE(private_secret.parent.stat().st_mode) == 0o700
    first = keys.model_key(1)
    keys._cache.clear()  # a new process reads the same file
    assert keys.model_key(1) == first


def test_env_secret_overrides_file(monkeypatch, private_secret):
    monkeypatch.setenv(keys.ENV_SECRET, "a-long-enough-test-secret")
    a = keys.model_key(1)
    monkeypatch.setenv(keys.ENV_SECRET, "another-long-test-secret")
    assert keys.model_key(1) != a
    assert not private_secret.exists()
    monkeypatch.setenv(keys.ENV_SECRET, "short")
    with pytest.raises(UserError):
        keys.master_key()


def test_keys_are_distinct_and_redacted():
    derived = {keys.model_key(1), keys.model_key(2), keys.user_key(1, 1), keys.user_key(1, 2), keys.kgw_key(1)}
    assert len(derived) == 5
    text = repr(keys.user_key(1, 2)) + str(keys.master_key())
    assert "redacted" in text
    with pytest.raises(TypeError):
        import pickle

        pickle.dumps(keys.master_key())


def test_master_secret_never_leaks(private_secret, caplog, capsys, tmp_path):
    """The secret bytes (raw or hex) appear in no log, CLI output, store file or export."""
    from backend.__main__ import main
    from backend.store import RunFilter, export_runs, list_runs
    from backend.watermark.ipmark.detect import detect

    caplog.set_level(logging.DEBUG)
    model = identities.add_model("leak-check")
    identities.add_user(model.address, "u")
    report = detect("The first sentence is here today. The second sentence follows it now. A third one comes "
                    "after that. The fourth sentence ends the text.")
    assert main(["watermark", "identity", "list", "--json"]) == 0
    assert main(["watermark", "detect", "--text", "One sentence only, nothing more.", "--json"]) == 0
    raw = private_secret.read_bytes()
    needles = [raw, raw.hex().encode(), raw.hex().upper().encode()]
    out = capsys.readouterr()
    haystacks = [out.out.encode(), out.err.encode(), caplog.text.encode(), json.dumps(report.summary()).encode(),
                 repr(report).encode(), export_runs(list_runs(RunFilter()), "json")]
    store = tmp_path / "store.duckdb"
    haystacks += [p.read_bytes() for p in store.parent.glob(store.name + "*") if p.is_file()]
    for hay in haystacks:
        for needle in needles:
            assert needle not in hay
    assert os.environ.get(keys.ENV_SECRET) is None
