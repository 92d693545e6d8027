import pytest

from backend.errors import UserError
from backend.watermark import identities


def test_add_and_list_identities():
    a = identities.add_model("alpha")
    b = identities.add_model("beta", address=10)
    assert (a.address, b.address) == (1, 10)
    u1 = identities.add_user(a.address, "alice")
    u2 = identities.add_user(a.address, "bob")
    assert (u1.full_address, u2.full_address) == ("1.1", "1.2")
    assert [m.name for m in identities.list_models()] == ["alpha", "beta"]
    assert [u.label for u in identities.users_of(1)] == ["alice", "bob"]
    frame = identities.summary_frame()
    assert frame.set_index("address").loc[1, "users"] == 2
    assert identities.all_users_by_model() == {1: [1, 2]}


def test_bulk_users_and_errors():
    m = identities.add_model("bulk")
    assert identities.bulk_add_users(m.address, 10_000) == 10_000
    assert len(identities.users_of(m.address)) == 10_000
    identities.add_user(m.address, "late")
    assert identities.users_of(m.address)[-1].user_address == 10_001
    with pytest.raises(UserError):
        identities.add_model("bulk2", address=m.address)
    with pytest.raises(UserError):
        identities.add_user(99, "nobody")
    with pytest.raises(UserError):
        identities.add_user(m.address, "   ")
    with pytest.raises(UserError):
        identities.bulk_add_users(m.address, 0)
    with pytest.raises(UserError):
        identities.get_user(m.address, 99_999)
