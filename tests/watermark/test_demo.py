"""The demo identity: keys from a public demo secret that no real identity ever uses, created on a fresh registry,
removable (and then not re-created), restorable."""
import hashlib

import pytest

from backend.errors import UserError
from backend.watermark import demo, identities, keys


def test_demo_keys_come_from_the_demo_secret_and_real_keys_never_do(monkeypatch):
    demo_root, master = keys.demo_key(), keys.master_key()
    assert demo_root != master
    real, reserved = 1, keys.DEMO_MODEL_ADDRESS
    assert keys.model_key(real) == master.derive(f"ipmark/model/{real}")
    assert keys.model_key(reserved) == demo_root.derive(f"ipmark/model/{reserved}")
    assert keys.user_key(reserved, 1) == demo_root.derive(f"ipmark/user/{reserved}.1")
    assert keys.kgw_key(reserved) == demo_root.derive(f"kgw/model/{reserved}")
    # every address but the reserved one derives from the master secret, whatever it is
    for address in (1, 2, 1000, 2**31 - 2):
        assert keys.model_key(address) != demo_root.derive(f"ipmark/model/{address}")
        assert keys.kgw_key(address) != demo_root.derive(f"kgw/model/{address}")
    # the demo keys do not depend on the master secret (the shipped examples verify on every install) ...
    monkeypatch.setenv(keys.ENV_SECRET, "another master secret, long enough")
    assert keys.model_key(reserved) == demo_root.derive(f"ipmark/model/{reserved}")
    assert keys.model_key(real) != master.derive(f"ipmark/model/{real}")
    assert keys.secret_tag(reserved) != keys.secret_tag(real)


def test_a_master_secret_equal_to_the_demo_secret_is_refused(private_secret):
    private_secret.parent.mkdir(parents=True, exist_ok=True)
    private_secret.write_bytes(keys._DEMO_SECRET)
    private_secret.chmod(0o600)
    with pytest.raises(UserError, match="demo secret"):
        keys.model_key(1)
    keys._cache.clear()
    assert keys._DEMO_SECRET != hashlib.sha256(b"").digest()


def test_no_real_identity_takes_the_reserved_address():
    with pytest.raises(UserError, match="reserved for the demo"):
        identities.add_model("impostor", keys.DEMO_MODEL_ADDRESS)
    demo.add_demo()
    assert identities.add_model("mine").address == 1  # next free skips the demo's address
    assert identities.add_model("next").address == 2


def test_demo_on_a_fresh_registry_removable_and_restorable():
    assert demo.ensure_demo()
    models = identities.list_models()
    assert [m.address for m in models] == [keys.DEMO_MODEL_ADDRESS] and "demo" in models[0].name
    users = identities.users_of(keys.DEMO_MODEL_ADDRESS)
    assert [u.user_address for u in users] == [1, 2] and all("demo" in u.label for u in users)
    assert demo.ensure_demo()  # idempotent
    assert len(identities.users_of(keys.DEMO_MODEL_ADDRESS)) == 2
    assert demo.remove_demo() == 3
    assert not demo.ensure_demo() and identities.list_models() == []  # removed stays removed
    demo.add_demo()
    assert demo.demo_present() and len(identities.users_of(keys.DEMO_MODEL_ADDRESS)) == 2


def test_no_demo_where_identities_exist():
    identities.add_model("existing")
    assert not demo.ensure_demo()
    assert [m.name for m in identities.list_models()] == ["existing"]


def test_demo_tag():
    assert demo.tagged("model 7", 7) == "model 7"
    assert demo.tagged("model x", keys.DEMO_MODEL_ADDRESS).endswith("[demo]")
