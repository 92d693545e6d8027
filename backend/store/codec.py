"""Lossless JSON codec for result dataclasses (with numpy arrays and tuples inside).

JSON rather than pickle: the store is shared between processes and exported, and decoding must
never execute code. Dataclass types are resolved by name, and only inside the `backend` package.
"""
from __future__ import annotations

import base64
import dataclasses
import importlib
import io
import json
from typing import Any

import numpy as np

ALLOWED_MODULE_PREFIXES: tuple[str, ...] = ("backend.",)
# Packages renamed since results were stored under their old names: old prefix -> new (stores made before the
# rename, and shipped reference rows, still decode).
MOVED_PACKAGES: dict[str, str] = {"backend.inspect.": "backend.internals."}


def to_jsonable(obj: Any) -> Any:
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        fields = {f.name: to_jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
        return {"__dataclass__": f"{type(obj).__module__}:{type(obj).__qualname__}", "fields": fields}
    if isinstance(obj, np.ndarray):
        buf = io.BytesIO()
        np.save(buf, obj, allow_pickle=False)
        return {"__ndarray__": base64.b64encode(buf.getvalue()).decode("ascii")}
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, tuple):
        return {"__tuple__": [to_jsonable(v) for v in obj]}
    if isinstance(obj, list):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, dict):
        if not all(isinstance(k, str) for k in obj):
            return {"__items__": [[to_jsonable(k), to_jsonable(v)] for k, v in obj.items()]}
        return {k: to_jsonable(v) for k, v in obj.items()}
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    raise TypeError(f"cannot store a value of type {type(obj).__name__}")


def _resolve(type_name: str) -> type:
    module_name, qualname = type_name.split(":")
    if not module_name.startswith(ALLOWED_MODULE_PREFIXES):
        raise ValueError(f"refusing to decode type {type_name!r} from outside the backend package")
    for old, new in MOVED_PACKAGES.items():
        if module_name.startswith(old):
            module_name = new + module_name[len(old):]
    obj: Any = importlib.import_module(module_name)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    if not dataclasses.is_dataclass(obj):
        raise ValueError(f"{type_name!r} is not a dataclass")
    return obj


def from_jsonable(data: Any) -> Any:
    if isinstance(data, list):
        return [from_jsonable(v) for v in data]
    if not isinstance(data, dict):
        return data
    if "__dataclass__" in data:
        cls = _resolve(data["__dataclass__"])
        return cls(**{k: from_jsonable(v) for k, v in data["fields"].items()})
    if "__ndarray__" in data:
        return np.load(io.BytesIO(base64.b64decode(data["__ndarray__"])), allow_pickle=False)
    if "__tuple__" in data:
        return tuple(from_jsonable(v) for v in data["__tuple__"])
    if "__items__" in data:
        return {from_jsonable(k): from_jsonable(v) for k, v in data["__items__"]}
    return {k: from_jsonable(v) for k, v in data.items()}


def dumps(obj: Any) -> str:
    return json.dumps(to_jsonable(obj), separators=(",", ":"))


def loads(text: str) -> Any:
    return from_jsonable(json.loads(text))


def _key_plain(obj: Any) -> Any:
    """`dataclasses.asdict`, leaving out fields declared keyed_when_set (backend.params.param) at their default."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: _key_plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)
                if not (f.metadata.get("keyed_when_set") and getattr(obj, f.name) == f.default)}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_key_plain(v) for v in obj)
    if isinstance(obj, dict):
        return type(obj)((k, _key_plain(v)) for k, v in obj.items())
    return obj


def canonical_params(config: Any) -> str:
    """Stable text of a config for cache keys: sorted keys, no whitespace, no type markers."""
    return json.dumps(_key_plain(config), sort_keys=True, separators=(",", ":"), default=str)
