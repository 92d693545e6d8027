"""bench/drilldown_clicks.py times every drill-down the app declares: each `Drilldown(...)` in app/ or pages/ has a
first-view row in bench/drilldown_targets.py (a new drill-down cannot be forgotten), and no row names one the app
does not declare."""
from __future__ import annotations

import ast
from pathlib import Path

from bench.drilldown_targets import TARGETS

ROOT = Path(__file__).resolve().parents[2]


def declared_names(root: Path = ROOT) -> set[str]:
    """The name of every `Drilldown(name, ...)` written in the app's code; of an f-string name, its constant
    prefix (e.g. one drill-down per site of the patching map)."""
    names = set()
    for path in [*(root / "app").rglob("*.py"), *(root / "pages").rglob("*.py")]:
        for call in ast.walk(ast.parse(path.read_text(), str(path))):
            if not (isinstance(call, ast.Call) and getattr(call.func, "id", None) == "Drilldown" and call.args):
                continue
            first = call.args[0]
            if isinstance(first, ast.Constant):
                names.add(first.value)
            elif isinstance(first, ast.JoinedStr) and isinstance(first.values[0], ast.Constant):
                names.add(first.values[0].value)
            else:
                raise AssertionError(f"{path}:{call.lineno}: a Drilldown whose name the bench cannot read")
    return names


def test_the_app_declares_drilldowns_where_the_scan_looks():
    names = declared_names()
    assert {"mt-drill-head", "fp8-head", "wm-sentence", "inspect-patch-cell-"} <= names


def test_every_declared_drilldown_is_clicked_on_a_first_view():
    first_view = {t.drilldown for t in TARGETS if t.view == "first"}
    assert declared_names() - first_view == set(), "add a Target to bench/drilldown_targets.py"


def test_every_row_names_a_declared_drilldown():
    assert {t.drilldown for t in TARGETS} - declared_names() == set()


def test_a_new_drilldown_is_noticed(tmp_path):
    (tmp_path / "app").mkdir()
    (tmp_path / "pages").mkdir()
    (tmp_path / "pages" / "new.py").write_text('X = Drilldown("new-thing", (HEAD,))\n'
                                               'def f(s):\n    return Drilldown(f"per-{s}", (HEAD,))\n')
    assert declared_names(tmp_path) == {"new-thing", "per-"}
