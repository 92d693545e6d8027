"""A throw-away identity registry for work that needs identities of its own (the evaluation): an empty registry in
memory and its own public root secret, in use for one block in one thread. The server's registry and its master
secret are neither read nor written, so anyone may run such work, remote page users included (issue 55 §2): its
identities would otherwise stay in the server's registry (weakening every model-level p, corrected over the models)
and its texts would be signed with master-secret keys."""
from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager

from backend.store.identity_tables import in_memory
from backend.watermark.keys import Key, rooted_at

# Public on purpose, like the demo secret: marks written under a throw-away identity prove nothing about anyone, and
# a fixed root keeps the evaluation's cached generations and results the same on every install.
_ROOT = Key(hashlib.sha256(b"dash watermark throw-away registry v1: public, evaluation only").digest(), "throw-away")


@contextmanager
def throwaway_registry() -> Iterator[None]:
    """Identities added, listed and keyed inside the block live and die with it."""
    with in_memory(), rooted_at(_ROOT):
        yield
