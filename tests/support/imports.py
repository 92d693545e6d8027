"""The project's import graph, read from the source with ast (function-level imports included), for the layering
tests: which module imports which, resolved to the project's own modules."""
from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Edge:
    importer: str  # dotted module name ("backend.mt.heads")
    imported: str  # the project module it names, or the top-level name of a third-party one
    line: int

    def __str__(self) -> str:
        return f"{self.importer}:{self.line} -> {self.imported}"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def project_modules() -> dict[str, Path]:
    files = [p for top in ("backend", "app", "pages", "bench", "training") if (ROOT / top).is_dir()
             for p in (ROOT / top).rglob("*.py")]
    return {module_name(p): p for p in files}


def _resolve(name: str) -> str:
    """The project module `name` refers to (a name inside a module resolves to the module), else its top level."""
    modules = project_modules()
    probe = name
    while probe and probe not in modules:
        probe = probe.rpartition(".")[0]
    return probe or name.split(".")[0]


@cache
def _attributes_bound_by(package: str) -> frozenset[str]:
    """Names a package's __init__ binds to objects that are not modules (`from .sweep import sweep` makes
    `pkg.sweep` the function): `from pkg import sweep` then reads the __init__, not the submodule."""
    path = project_modules().get(package)
    if path is None or path.name != "__init__.py":
        return frozenset()
    bound = set()
    for node in parsed(path).body:
        if isinstance(node, ast.ImportFrom) and node.module and node.module != package:
            bound.update(a.asname or a.name for a in node.names if f"{node.module}.{a.name}" not in project_modules())
    return frozenset(bound)


@cache
def exported_submodules(package: str) -> frozenset[str]:
    """The submodules a package's __init__ exports as part of its face (imported there and listed in __all__)."""
    path = project_modules().get(package)
    if path is None or path.name != "__init__.py":
        return frozenset()
    exported = set()
    for node in parsed(path).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            exported = {e.value for e in node.value.elts if isinstance(e, ast.Constant)}
    return frozenset(f"{package}.{name}" for name in exported if f"{package}.{name}" in project_modules())


@cache  # the layering tests walk the same few hundred files again and again: each is read and parsed once
def parsed(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), str(path))


@cache
def imports_of(path: Path) -> tuple[Edge, ...]:
    """Every import in the file, at any depth. `from pkg import name` reads `pkg`'s namespace, so it names `pkg`
    (for a package: its __init__, which must have run), and `pkg.name` too when that is a submodule."""
    importer = module_name(path) if path.is_relative_to(ROOT) else path.stem
    package = importer if path.name == "__init__.py" else importer.rpartition(".")[0]
    edges = []
    for node in _executed(parsed(path)):
        if isinstance(node, ast.Import):
            edges += [Edge(importer, _resolve(alias.name), node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            edges.append(Edge(importer, _resolve(base), node.lineno))
            edges += [Edge(importer, _resolve(f"{base}.{alias.name}"), node.lineno) for alias in node.names
                      if alias.name not in _attributes_bound_by(base)]
    return tuple(e for e in edges if e.imported != importer)


def _executed(tree: ast.AST):
    """Every node, less the bodies of `if TYPE_CHECKING:` (imports for annotations, never run)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                stack.extend(child.orelse)
            else:
                stack.append(child)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def graph(prefix: str) -> dict[str, set[str]]:
    """Module -> the project modules it imports, for the modules under `prefix` ("backend")."""
    inside = {m: p for m, p in project_modules().items() if m == prefix or m.startswith(prefix + ".")}
    return {m: {e.imported for e in imports_of(p) if e.imported in inside} for m, p in inside.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found
