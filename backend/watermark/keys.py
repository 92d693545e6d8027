"""The master secret and the per-identity keys derived from it with HMAC-SHA256.

The master secret comes from DASH_WATERMARK_SECRET (any string, at least 16 characters) or from a
file created on first use under `<data>/secrets/watermark_master.key` (DASH_WATERMARK_SECRET_FILE
overrides the path) with owner-only permissions (dir 0700, file 0600). It is never returned to a
caller, printed, logged, stored in DuckDB or exported: only HMAC outputs leave this module, and the
key objects redact themselves in repr/str so an accidental log line shows nothing.

The demo identity (backend.watermark.demo) lives at one reserved model address, DEMO_MODEL_ADDRESS, and its keys
come from a public demo secret instead: its marks are for trying the app, and anyone can write them. No other
address ever derives from the demo secret, and a master secret equal to it is refused.
"""
from __future__ import annotations

import hashlib
import hmac
import os
import secrets as _random
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from backend.config import settings
from backend.errors import UserError

ENV_SECRET = "DASH_WATERMARK_SECRET"
ENV_SECRET_FILE = "DASH_WATERMARK_SECRET_FILE"
_lock = threading.Lock()
_cache: dict[str, bytes] = {}
DEMO_MODEL_ADDRESS = 2**31 - 1  # reserved for the demo identity: the identity registry gives it to no real model
# Public on purpose (shipped example texts carry its marks); a fixed digest, so every install reads the examples.
_DEMO_SECRET = hashlib.sha256(b"dash watermark demo secret v1: public, for example texts only").digest()
# The root of a throw-away registry's keys (backend.watermark.throwaway) while one is in use in this context (the
# evaluation's): its identities are not the server's, so neither is their secret.
_scoped_root: ContextVar[Key | None] = ContextVar("watermark_scoped_root", default=None)


class Key:
    """A derived HMAC key. Comparable and hashable; its bytes never appear in repr/str/JSON."""

    __slots__ = ("_raw", "label")

    def __init__(self, raw: bytes, label: str):
        self._raw = raw
        self.label = label  # public name of what the key is for, e.g. "model 3"

    def mac(self, message: bytes) -> bytes:
        return hmac.digest(self._raw, message, "sha256")

    def derive(self, purpose: str, label: str | None = None) -> Key:
        return Key(self.mac(purpose.encode("utf-8")), label or purpose)

    def __repr__(self) -> str:
        return f"Key({self.label!r}, <redacted>)"

    __str__ = __repr__

    def __eq__(self, other) -> bool:
        return isinstance(other, Key) and hmac.compare_digest(self._raw, other._raw)

    def __hash__(self) -> int:
        return hash(self._raw)

    def __reduce__(self):  # no pickling into caches or exports
        raise TypeError("watermark keys cannot be serialised")


def secret_file() -> Path:
    override = os.environ.get(ENV_SECRET_FILE)
    return Path(override) if override else settings().data_dir / "secrets" / "watermark_master.key"


def _create_file(path: Path) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(path.parent, 0o700)
    raw = _random.token_bytes(32)
    try:  # O_EXCL: two processes starting at once must not overwrite each other's secret
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_bytes()
    with os.fdopen(fd, "wb") as handle:
        handle.write(raw)
    return raw


def _load_master() -> bytes:
    env = os.environ.get(ENV_SECRET)
    if env is not None:
        if len(env) < 16:
            raise UserError(f"{ENV_SECRET} must be at least 16 characters long.")
        raw = hashlib.sha256(b"env:" + env.encode("utf-8")).digest()
        _refuse_demo(raw)
        return raw
    path = secret_file()
    with _lock:
        if str(path) in _cache:
            return _cache[str(path)]
        if path.exists() and not path.is_file():
            raise UserError(f"The watermark secret path ({ENV_SECRET_FILE} or the default) is not a regular file; "
                            "point it at a file, or remove what is there to create a new secret.")
        raw = path.read_bytes() if path.exists() else _create_file(path)
        if len(raw) < 16:
            raise UserError(f"The watermark secret file {path} is damaged (too short); move it away to "
                            "create a new one (existing watermarks then no longer verify).")
        if path.stat().st_mode & 0o077:
            os.chmod(path, 0o600)  # tighten a file someone copied in with loose permissions
        _refuse_demo(raw)
        _cache[str(path)] = raw
        return raw


def _refuse_demo(raw: bytes) -> None:
    """A master secret must never be the public demo secret (real identities would carry forgeable marks)."""
    if hmac.compare_digest(raw, _DEMO_SECRET):
        raise UserError("The watermark master secret equals the public demo secret; create a new secret "
                        f"({ENV_SECRET} or a new secret file).")


def master_key() -> Key:
    """The root of all watermark keys (read or created now)."""
    return Key(_load_master(), "master")


def demo_key() -> Key:
    """The root of the demo identity's keys (public; never the master secret)."""
    return Key(_DEMO_SECRET, "demo")


def is_demo(model_address: int) -> bool:
    return int(model_address) == DEMO_MODEL_ADDRESS


def root_key(model_address: int) -> Key:
    """The secret a model identity's keys derive from: the demo secret for the demo address, else a throw-away
    registry's own root while one is in use, else the master."""
    if is_demo(model_address):
        return demo_key()
    return _scoped_root.get() or master_key()


@contextmanager
def rooted_at(root: Key) -> Iterator[None]:
    """Every non-demo identity's keys derive from `root` inside the block (in this thread or task only)."""
    token = _scoped_root.set(root)
    try:
        yield
    finally:
        _scoped_root.reset(token)


def model_key(model_address: int) -> Key:
    return root_key(model_address).derive(f"ipmark/model/{int(model_address)}", f"model {model_address}")


def user_key(model_address: int, user_address: int) -> Key:
    return root_key(model_address).derive(f"ipmark/user/{int(model_address)}.{int(user_address)}",
                               f"user {model_address}.{user_address}")


def user_keys(model_address: int, user_addresses) -> Iterator[tuple[int, Key]]:
    """(user address, key) for many users of one model, the same keys as `user_key`, with the root secret read
    once instead of once per user (a registry search over 100,000 users)."""
    root = root_key(model_address)
    for u in user_addresses:
        yield int(u), root.derive(f"ipmark/user/{int(model_address)}.{int(u)}", f"user {model_address}.{u}")


def kgw_key(model_address: int) -> Key:
    return root_key(model_address).derive(f"kgw/model/{int(model_address)}", f"kgw {model_address}")


def secret_tag(model_address: int = 0) -> str:
    """A short one-way tag of the secret this identity's keys come from (the master secret unless it is the demo
    identity), for cache keys: results change when the secret does, and the demo's are the same on every install."""
    return root_key(model_address).mac(b"cache-tag").hex()[:12]
