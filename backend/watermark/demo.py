"""The demo identity and the shipped example texts: a verdict on a fresh install before anyone registers anything.

The demo identity is one model identity at the reserved address `keys.DEMO_MODEL_ADDRESS` with two users. Its keys
derive from a public demo secret (`keys.demo_key`), never from the master secret, so example texts marked with it
can ship in the repository and verify on every install; by the same token anyone can write its marks, which is why
it is labelled "demo" wherever it appears. It is created on a store whose registry is empty (a fresh install) unless
it was removed there before; it can be removed and added back.

The example texts are reference artifacts of the verb "watermark example" (backend.watermark.examples) written by
`scripts/watermark_examples.py` with the embedded model and imported with the rest of the reference set.
"""
from __future__ import annotations

from dataclasses import dataclass

from backend.errors import UserError
from backend.store.db import StoreUnavailable
from backend.store.identity_tables import demo_removed, set_demo_removed
from backend.store.listing import values_of
import backend.watermark.identities as identities
from backend.watermark.keys import DEMO_MODEL_ADDRESS, is_demo

DEMO_LABEL = "demo"
DEMO_MODEL_NAME = "demo model (public demo secret)"
DEMO_USERS = ((1, "demo user 1"), (2, "demo user 2"))
EXAMPLE_ACTION = "example"

__all__ = ["DEMO_LABEL", "DEMO_MODEL_ADDRESS", "Example", "add_demo", "demo_present", "ensure_demo", "examples",
           "first_try_identity",
           "is_demo", "remove_demo", "tagged"]


@dataclass(frozen=True)
class Example:
    """A shipped example text and how it was made (method "none": a human-written text)."""

    name: str  # stable id, e.g. "ipmark-user-1"
    title: str  # what the button says
    method: str  # the watermark method that marked it, "none" for human text
    text: str
    prompt: str  # the prompt it answers ("" for human text)
    model_address: int  # the identity whose keys marked it (0: none)
    user_address: int
    model_id: str  # the language model that wrote it ("" for human text): token methods need its tokenizer
    note: str  # what a reader should expect, in words


def tagged(name: str, model_address: int) -> str:
    """A name with the demo label when the identity is the demo's."""
    if not is_demo(model_address) or DEMO_LABEL in name.lower():
        return name
    return f"{name} [{DEMO_LABEL}]" if name else DEMO_LABEL


def demo_present() -> bool:
    return any(is_demo(m.address) for m in identities.list_models())


def add_demo() -> identities.ModelIdentity:
    """The demo identity (created if missing: the model and its two users)."""
    set_demo_removed(False)
    if not demo_present():
        try:
            identities.add_model(DEMO_MODEL_NAME, DEMO_MODEL_ADDRESS, demo=True)
        except UserError:
            if not demo_present():  # another session created it meanwhile: fine; anything else is real
                raise
    have = {u.user_address for u in identities.users_of(DEMO_MODEL_ADDRESS)}
    for address, label in DEMO_USERS:
        if address not in have:
            try:
                identities.add_user(DEMO_MODEL_ADDRESS, label, address)
            except UserError:
                pass  # added by a concurrent call
    return identities.get_model(DEMO_MODEL_ADDRESS)


def ensure_demo() -> bool:
    """On a fresh registry (no identity at all) that never had the demo removed: add the demo identity. Returns
    whether the demo identity is present now. A store that cannot be written leaves things as they are."""
    try:
        if identities.list_models():
            return demo_present()
        if demo_removed():
            return False
        add_demo()
        return True
    except StoreUnavailable:
        return False


def first_try_identity() -> tuple[int, int]:
    """The identity a generation uses when none is named (the CLI without --identity, as the page's first pick):
    the demo identity's first user, created on a fresh registry as the page does. A registry whose demo was
    removed gets a message saying how to name an identity instead."""
    if ensure_demo() or demo_present():
        return DEMO_MODEL_ADDRESS, DEMO_USERS[0][0]
    raise UserError("No identity given and the demo identity was removed: name one with --identity MODEL.USER "
                    "(`watermark identity list`), or add the demo back from the Registry tab.")


def remove_demo() -> int:
    """Remove the demo identity (model and users); it stays removed (not re-created on open) until added back.
    Returns the number of identities removed."""
    set_demo_removed(True)
    return identities.remove_model(DEMO_MODEL_ADDRESS) if demo_present() else 0


def examples() -> list[Example]:
    """The example texts in the store (the shipped reference ones, imported on first open), by name."""
    try:
        values = values_of("watermark", EXAMPLE_ACTION)
    except StoreUnavailable:
        return []
    found = {}
    for value in values:
        if isinstance(value, Example):
            found.setdefault(value.name, value)
    return sorted(found.values(), key=lambda e: (_ORDER.get(e.method, 50), e.name))


_ORDER = {"ipmark": 0, "kgw": 1, "hf-kgw": 2, "synthid": 3, "none": 9}
