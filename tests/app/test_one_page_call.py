"""Every page computation goes through app.ui.run (run_verb, start_in_background): no page or widget draws a
status box or starts a thread of its own, and no module keeps a server-wide registry of running work."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUN_MODULE = ROOT / "app" / "ui" / "run.py"
MODEL_LOADING = ROOT / "app" / "ui" / "model_picker.py"  # a model load is not a computation: no Stop, own box


def _page_code() -> list[Path]:
    return sorted([*ROOT.glob("pages/*.py"), *ROOT.glob("app/**/*.py")])


def _calls(path: Path) -> set[str]:
    """The dotted names called in the file (st.status, threading.Thread, ...)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call):
            parts, func = [], node.func
            while isinstance(func, ast.Attribute):
                parts.append(func.attr)
                func = func.value
            if isinstance(func, ast.Name):
                names.add(".".join([func.id, *reversed(parts)]))
    return names


def test_only_the_run_module_draws_a_status_box_or_starts_a_thread():
    found = {str(path.relative_to(ROOT)): sorted(_calls(path) & {"st.status", "threading.Thread", "Thread"})
             for path in _page_code() if path not in (RUN_MODULE, MODEL_LOADING)}
    assert not {path: calls for path, calls in found.items() if calls}


def _empty_mutable(value: ast.expr | None) -> bool:
    """`{}`, `set()`, `dict()`, `[]`: a container a module fills at run time."""
    if isinstance(value, (ast.Dict, ast.List)):
        return not (value.keys if isinstance(value, ast.Dict) else value.elts)
    return (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
            and value.func.id in ("dict", "set", "list") and not value.args and not value.keywords)


def module_level_containers(source: str) -> list[str]:
    found = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.AnnAssign):
            targets, value = [node.target], node.value
        elif isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        else:
            continue
        found += [t.id for t in targets if isinstance(t, ast.Name) and _empty_mutable(value)]
    return found


def test_no_module_level_registry_of_running_work():
    """A container an app module (imported once per server; a page script runs afresh each time) fills at run time
    is shared by every browser session (the corpus jobs' `_running: dict[str, dict] = {}` gave every session one
    progress and Stop slot)."""
    assert module_level_containers("_running: dict[str, dict] = {}\nLIMIT = 3\n_seen = set()\n") == ["_running",
                                                                                                     "_seen"]
    shared = {str(path.relative_to(ROOT)): module_level_containers(path.read_text())
              for path in sorted(ROOT.glob("app/**/*.py"))}
    assert not {path: names for path, names in shared.items() if names}
