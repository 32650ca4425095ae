"""What private and public mean here, and the shape every module keeps.

An underscore name is private to its module: no ``__all__`` lists one and no other module
of the package imports one (a name two modules share is public, with a name that says
so). Every name a module exports exists; every error class of the tree is raised
somewhere; no two modules import each other, directly or around a loop (imports inside
functions and under ``TYPE_CHECKING`` included); no module is over 600 lines but the
worker, a one-file script by design.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "pairbench_async"
#: the one-file script a sandbox worker runs (``python -c <its source>``): one file by design
ONE_FILE_SCRIPTS = {"sandbox/worker.py"}
#: modules of data written by a tool, not code (the learned reading's fitted model, bench.train_leakage_model)
DATA_MODULES = {"protocol/leakage_model_data.py"}
MAX_LINES = 600


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _target(module: str, path: Path, node: ast.ImportFrom) -> str:
    """The absolute name of the module an ``import from`` reads."""
    if node.level == 0:
        return node.module or ""
    parts = module.split(".")
    if path.name != "__init__.py":
        parts = parts[:-1]
    parts = parts[: len(parts) - (node.level - 1)]
    return ".".join(parts + ([node.module] if node.module else []))


def _all_names(tree: ast.Module) -> list[str]:
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and node.value is not None:
                return [e.value for e in getattr(node.value, "elts", []) if isinstance(e, ast.Constant)]
    return []


def _imports(module: str, path: Path) -> list[tuple[str, str | None, int]]:
    """(module read, name taken or None, line) for every import of the module, wherever it is."""
    found: list[tuple[str, str | None, int]] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = _target(module, path, node)
            for alias in node.names:
                found.append((base, alias.name, node.lineno))
        elif isinstance(node, ast.Import):
            found.extend((alias.name, None, node.lineno) for alias in node.names)
    return found


def test_no_all_lists_an_underscore_name() -> None:
    bad = [f"{m}: {name}" for m, path in MODULES.items() for name in _all_names(ast.parse(path.read_text()))
           if name.startswith("_")]
    assert not bad, "underscore names in __all__:\n" + "\n".join(bad)


def test_no_module_imports_a_private_name_or_module_of_another() -> None:
    bad = []
    for module, path in MODULES.items():
        for base, name, line in _imports(module, path):
            if not base.startswith("pairbench_async"):
                continue
            inside = base.split(".")[1:]
            if name is not None and f"{base}.{name}" in MODULES:
                inside.append(name)  # `from . import module`
            elif name is not None and _private(name):
                bad.append(f"{path.relative_to(PACKAGE)}:{line}: {name} from {base}")
            if any(_private(part) for part in inside):
                bad.append(f"{path.relative_to(PACKAGE)}:{line}: the private module {base}")
    assert not bad, "private names or modules used across modules:\n" + "\n".join(dict.fromkeys(bad))


@pytest.mark.parametrize("module", [m for m, p in MODULES.items()
                                    if _all_names(ast.parse(p.read_text())) and "worker" not in m])
def test_every_exported_name_exists(module: str) -> None:
    loaded = importlib.import_module(module)
    missing = [name for name in loaded.__all__ if not hasattr(loaded, name)]
    assert not missing, f"{module} exports names it does not have: {missing}"


def test_every_error_of_the_tree_is_used_somewhere() -> None:
    # raised, or chosen to be raised (a table of failure kinds): named in the code of a
    # module other than the tree itself (an import alone does not count)
    from pairbench_async.core import errors

    used = {node.id for p in MODULES.values() if p.name != "errors.py"
            for node in ast.walk(ast.parse(p.read_text())) if isinstance(node, ast.Name)}
    unused = [name for name in errors.__all__
              if name not in ("PairbenchError", "SandboxNotice") and name not in used]  # the base; a warning
    assert not unused, f"error classes nothing raises: {unused}"


def test_no_import_cycle() -> None:
    graph: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        deps = set()
        for base, name, _ in _imports(module, path):
            if name is not None and f"{base}.{name}" in MODULES:
                deps.add(f"{base}.{name}")
            elif base in MODULES and base != "pairbench_async":
                deps.add(base)
        graph[module] = deps - {module}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    assert not cycles, f"modules that import each other: {cycles}"


def test_no_module_is_over_600_lines_but_the_worker_script() -> None:
    long = {str(p.relative_to(PACKAGE)): n for p in MODULES.values()
            if (n := len(p.read_text().splitlines())) > MAX_LINES
            and str(p.relative_to(PACKAGE)) not in ONE_FILE_SCRIPTS | DATA_MODULES}
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def test_the_checks_see_a_private_import_and_a_cycle(tmp_path: Path) -> None:
    """The scanners above are not vacuous: they find what they look for in a planted pair."""
    a = tmp_path / "a.py"
    a.write_text("from .b import _helper\n")
    found = _imports("pairbench_async.a", a)
    assert found == [("pairbench_async.b", "_helper", 1)] and _private("_helper") and not _private("__all__")
