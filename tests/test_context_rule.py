"""The context rule has one home (backend/models/rules.py): no module outside backend/models reads a model's context
length from its config (`max_position_embeddings`, `n_positions`, ...), calls `context_limit` or falls back on a
hard-coded context size (`limit or 4096`, `CONTEXT = 2048`); features ask `room` / `fits` / `check_room` /
`keep_fitting` instead. Read from the source with ast, so comments and docstrings that name the fields are fine."""
from __future__ import annotations

import ast
from pathlib import Path

from tests.support.imports import ROOT

CONFIG_LENGTH_FIELDS = {"max_position_embeddings", "n_positions", "n_ctx", "max_sequence_length", "seq_length",
                        "model_max_length", "sliding_window_size"}
RULE_INTERNALS = {"context_limit"}  # the rule's own reader; features ask room / fits
CONTEXTISH = ("context", "ctx", "limit", "positions")


def _name_of(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Call):
        return _name_of(node.func)
    return ""


def offenders_in(source: str, where: str) -> list[str]:
    tree = ast.parse(source)
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.body
                  and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    out = []
    for node in ast.walk(tree):
        line = f"{where}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Attribute) and node.attr in CONFIG_LENGTH_FIELDS | RULE_INTERNALS:
            out.append(f"{line} reads .{node.attr}")
        elif isinstance(node, ast.Name) and node.id in RULE_INTERNALS:
            out.append(f"{line} calls {node.id}")
        elif isinstance(node, ast.alias) and node.name in RULE_INTERNALS:
            out.append(f"{line} imports {node.name}")
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
              and node.value in CONFIG_LENGTH_FIELDS):
            out.append(f"{line} names {node.value!r}")  # getattr(config, "n_positions", ...)
        elif isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or) and any(
                isinstance(v, ast.Constant) and isinstance(v.value, int) and v.value >= 512 for v in node.values) \
                and any(any(w in _name_of(v).lower() for w in CONTEXTISH) for v in node.values):
            out.append(f"{line} falls back on a hard-coded context size")  # `context_limit(m) or 4096`
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) \
                and isinstance(node.value.value, int) and any(
                isinstance(t, ast.Name) and ("CONTEXT" in t.id.upper() or "CTX" in t.id.upper()) for t in node.targets):
            out.append(f"{line} hard-codes a context size")
    return out


def _product_files() -> list[Path]:
    tops = ("backend", "app", "pages", "bench", "training", "scripts")
    return [p for top in tops if (ROOT / top).is_dir() for p in (ROOT / top).rglob("*.py")
            if not p.relative_to(ROOT).as_posix().startswith("backend/models/")]


def test_no_module_outside_backend_models_reads_or_hard_codes_the_context_length():
    files = _product_files()
    offenders = [o for p in files for o in offenders_in(p.read_text(), p.relative_to(ROOT).as_posix())]
    assert len(files) > 100 and not offenders, offenders


def test_the_check_catches_each_way_the_rule_was_applied_before():
    """The shapes issue 47 found (each once in the code base) are offenders, so the test above can fail."""
    cases = {
        "limit = context_limit(handle.model) or 4096": "calls context_limit",  # watermark/paraphrase.py
        "limit = getattr(handle.model.config, 'max_position_embeddings', None)": "names 'max_position_embeddings'",
        "n = model.config.n_positions": "reads .n_positions",
        "from backend.models.incremental import context_limit": "imports context_limit",
        "room = (limit or 4096) - n": "falls back on a hard-coded context size",
        "MAX_CONTEXT = 2048": "hard-codes a context size",
    }
    for source, expected in cases.items():
        assert any(expected in o for o in offenders_in(source, "x.py")), source
    assert offenders_in("n = room(model, len(ids))\nok = fits(model, 3, 4)", "x.py") == []
