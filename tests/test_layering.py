"""The architecture's one direction of flow: backend never imports streamlit, pages never import torch."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_backend_never_imports_streamlit():
    offenders = [p for p in (ROOT / "backend").rglob("*.py") if "streamlit" in _imports(p)]
    assert not offenders


def test_pages_and_figures_never_import_torch_or_transformers():
    files = [*(ROOT / "pages").glob("*.py"), *(ROOT / "app").rglob("*.py")]
    offenders = [p for p in files if _imports(p) & {"torch", "transformers"}]
    assert files and not offenders
