"""Issue 55 §2: no remote page writes the watermark registry, anywhere. The page verbs that can write identities or
keys are found in the code (every backend function that reaches a write of the registry's tables or of the secret
file, followed through the imports; then the pages that reference one). Each such page is walked as a remote
session (a server reachable from other machines, no DASH_ADMIN): every tab opened and every button on it clicked.
The registry (its tables and the secret file) is byte-identical after."""
from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

from tests.app.helpers import ROOT, private_identities, run_page

WRITES = re.compile(r"(INSERT INTO|DELETE FROM|UPDATE)\s+wm_\w+")  # SQL writing the registry's tables
SECRET_WRITES = re.compile(r"os\.O_CREAT")  # creating the master secret file (backend/watermark/keys.py)
REGISTRY_TABLES = ("wm_models", "wm_users", "wm_demo_state")


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _parse(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imports, imported = set(), {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imports |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            imports.add(node.module)
            for a in node.names:
                imports.add(f"{node.module}.{a.name}")
                imported[a.asname or a.name] = (node.module, a.name)
    functions = {n.name: n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    # a module-level verb (`x_verb = register(Verb(..., compute, ...))`) reaches what its compute reaches
    functions |= {n.targets[0].id: n for n in tree.body if isinstance(n, ast.Assign) and len(n.targets) == 1
                  and isinstance(n.targets[0], ast.Name) and isinstance(n.value, ast.Call)}
    return tree, imports, imported, functions


def _names(node) -> set[str]:
    return {n.attr if isinstance(n, ast.Attribute) else n.id for n in ast.walk(node)
            if isinstance(n, (ast.Attribute, ast.Name))}


def _segment(lines: list[bytes], node) -> str:
    """`ast.get_source_segment` on lines split once per file (it splits the whole file at every call: most of this
    walk's time when it was called per function)."""
    first, last = node.lineno - 1, node.end_lineno - 1
    if first == last:
        return lines[first][node.col_offset:node.end_col_offset].decode()
    return b"".join([lines[first][node.col_offset:], *lines[first + 1:last],
                     lines[last][:node.end_col_offset]]).decode()


@cache  # one walk of the tree for the file's tests (it reads and parses every backend module)
def registry_writers() -> frozenset[tuple[str, str]]:
    """(module, function) of every backend function that writes the registry or reaches one that does, through the
    names it references and the modules it imports (a package re-exporting one counts as well)."""
    modules = {_module(p): (p.read_bytes().splitlines(keepends=True), *_parse(p))
               for p in (ROOT / "backend").rglob("*.py")}
    reached = {(m, name) for m, (lines, _, _, _, functions) in modules.items() for name, node in functions.items()
               if WRITES.search(_segment(lines, node))
               or (m == "backend.watermark.keys" and SECRET_WRITES.search(_segment(lines, node)))}
    used = {(m, name): _names(node) for m, (_, _, _, _, functions) in modules.items()
            for name, node in functions.items()}
    grown = True
    while grown:
        grown = False
        for m, (_, _, imports, imported, functions) in modules.items():
            for name in functions:
                if (m, name) not in reached and any(f in used[m, name] and (n == m or n in imports)
                                                    for n, f in reached):
                    reached.add((m, name))
                    grown = True
            for local, target in imported.items():
                if target in reached and (m, local) not in reached:
                    reached.add((m, local))
                    grown = True
    return frozenset(reached)


@cache
def page_verbs() -> dict[str, frozenset[str]]:
    """pages/<script> -> the registry-writing functions it references."""
    writers = registry_writers()
    found = {}
    for page in sorted((ROOT / "pages").glob("*.py")):
        tree, imports, _, _ = _parse(page)
        used = _names(tree)
        verbs = frozenset(f"{m}.{f}" for m, f in writers if f in used and m in imports)
        if verbs:
            found[page.name] = verbs
    return found


def test_the_enumeration_finds_the_known_writers():
    """The walk below is only as good as this list: it must see the verbs a reader of the page knows about."""
    verbs = page_verbs()
    assert {"backend.watermark.identities.add_model", "backend.watermark.identities.bulk_add_users",
            "backend.watermark.demo.ensure_demo", "backend.watermark.demo.remove_demo",
            "backend.watermark.evaluate_verb", "backend.watermark.make_request"} <= verbs["watermark.py"]
    assert ("backend.watermark.keys", "_create_file") in registry_writers()


def _snapshot(secret: Path) -> bytes:
    """The registry as bytes: every row of its tables (timestamps included) and the secret file."""
    from backend.store.db import connect

    parts = []
    with connect() as con:
        present = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        for table in REGISTRY_TABLES:
            if table in present:
                parts.append(repr(con.execute(f"SELECT * FROM {table} ORDER BY ALL").fetchall()).encode())
    return b"\n".join(parts) + b"\nsecret:" + (secret.read_bytes() if secret.exists() else b"<none>")


def _small_evaluation():
    """The page's EvalConfig() at a size a test can run (the verb and the page are the same)."""
    from backend.watermark import EvalConfig, SamplingConfig

    return lambda: EvalConfig(n_prompts=1, n_users=2, attacks=(("word_deletion", 0.1),),
                              sampling=SamplingConfig(max_sentences=2, max_sentence_tokens=16))


@pytest.fixture
def remote_registry(tmp_path, monkeypatch, exposed):
    identities = private_identities(tmp_path, monkeypatch)
    from backend.watermark import demo, keys

    model = identities.add_model("acme-llm")
    identities.bulk_add_users(model.address, 3)
    demo.add_demo()
    keys.master_key()  # the secret exists, as on any server that has detected once
    monkeypatch.setattr("backend.watermark.EvalConfig", _small_evaluation())
    return tmp_path / "secret.key"


def _tab_key(page: str) -> str:
    """The key of the page's tabs (app/ui/tabs.lazy_tabs), read from its source."""
    source = (ROOT / "pages" / page).read_text(encoding="utf-8")
    return re.search(r'lazy_tabs\([^)]*?key="([^"]+)"', source, re.S).group(1)


def test_walking_every_remote_page_verb_leaves_the_registry_byte_identical(remote_registry):
    from backend.store import list_runs

    before = _snapshot(remote_registry)
    clicked = []
    for page in page_verbs():
        at, key = run_page(page), _tab_key(page)
        for label in [t.label for t in at.tabs]:
            at.session_state[key] = label
            at.run()
            for i in range(len(at.button)):  # each button of the open tab, the tab reopened after each click
                button = at.button[i]
                if button.disabled:
                    continue
                clicked.append((page, label, button.label))
                button.click()
                at.run()
                assert not at.exception, [e.value for e in at.exception]
                at.session_state[key] = label
                at.run()
    assert any("Run the evaluation" in b for _, _, b in clicked), clicked
    runs = list_runs()
    assert "evaluate" in set(runs["action"])  # the evaluation ran for the remote session
    assert _snapshot(remote_registry) == before, clicked


def test_a_remote_page_on_a_fresh_registry_adds_no_demo_identity(tmp_path, monkeypatch, exposed):
    """The demo identity is added on a fresh registry for the server's own user only (or by its operator:
    `watermark identity add-demo`); a remote page load wrote it before."""
    identities = private_identities(tmp_path, monkeypatch)
    run_page("watermark.py")
    assert identities.list_models() == []
    monkeypatch.delenv("DASH_ADMIN", raising=False)
    from streamlit import config

    config.set_option("server.address", "127.0.0.1")
    run_page("watermark.py")
    assert [m.name for m in identities.list_models()] == ["demo model (public demo secret)"]
