"""The architecture, checked: wings import only downwards, and the pure core stays pure.

Wings, bottom to top (``docs/ARCHITECTURE.md``)::

    core < sandbox < cluster < protocol < runlog < models < datasets < runner < report < cli

A module may import its own wing and any wing below it, never one above, and no
wing imports the package root (the public door imports the wings, not the reverse).
Every import counts: top-level, inside functions, under ``TYPE_CHECKING``, relative or
absolute. The pure modules (the whole ``protocol`` wing, the data model, the record
schema and the report's arithmetic) may not import an event loop, network, process,
clock, file or randomness with hidden global state.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "pairbench_async"
WINGS = ("core", "sandbox", "cluster", "protocol", "runlog", "models", "datasets", "runner", "report", "cli")
RANK = {wing: i for i, wing in enumerate(WINGS)}
#: the package root and its entry point sit above every wing
TOP = len(WINGS)

#: pure besides the whole protocol wing
PURE_MODULES = (
    "core/errors.py",
    "core/types.py",
    "core/version.py",
    "cluster/placement.py",
    "runlog/records.py",
    "report/trajectory.py",
    "report/trajectory_metrics.py",
    "report/metrics.py",
    "report/ranking.py",
    "report/accuracy.py",
    "report/sensitivity.py",
    "report/edits.py",
    "report/bugs.py",
    "report/verdicts.py",
    "report/precision.py",
    "report/leaderboard.py",
    "report/cost.py",
    "report/bleu.py",
    "report/codebleu.py",
    "report/pass_at_k.py",
    "report/glossary.py",
    "report/registry.py",
    "report/tables.py",
    "report/transcript.py",
    "models/prices.py",
    "models/rules_code.py",
    "models/rules_evidence.py",
    "models/rules_words.py",
)
FORBIDDEN = frozenset({
    "asyncio", "aiohttp", "anyio", "uvloop", "aiolimiter", "socket", "ssl", "subprocess",
    "multiprocessing", "concurrent", "os", "shutil", "pathlib", "tempfile", "signal", "threading",
    "time", "importlib", "psutil", "requests", "urllib", "http",
})


def _module_of(path: Path) -> list[str]:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    return parts[:-1] if parts[-1] == "__init__" else parts


def _rank(module: list[str]) -> int:
    """Rank of a package-relative module path (``[]`` is the package root)."""
    if not module or module[0] not in RANK:
        return TOP
    return RANK[module[0]]


def package_imports(source: str, module: list[str], is_package: bool) -> list[tuple[int, list[str]]]:
    """(line, package-relative target) of every import of this package in ``source``."""
    found: list[tuple[int, list[str]]] = []
    base = module if is_package else module[:-1]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "pairbench_async":
                    found.append((node.lineno, parts[1:]))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                if node.level - 1 > len(base):
                    anchor = []
                target = [*anchor, *(node.module.split(".") if node.module else [])]
            elif node.module and node.module.split(".")[0] == "pairbench_async":
                target = node.module.split(".")[1:]
            else:
                continue
            # ``from . import x`` / ``from .. import wing``: each name may be a module
            if not node.module or (node.level and target == anchor):
                for alias in node.names:
                    found.append((node.lineno, [*target, alias.name] if target or alias.name in RANK else []))
            else:
                found.append((node.lineno, target))
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            name = getattr(node.func, "attr", getattr(node.func, "id", ""))
            value = node.args[0].value
            if name in ("__import__", "import_module") and isinstance(value, str) and value.startswith(
                    "pairbench_async"):
                found.append((node.lineno, value.split(".")[1:]))
    return found


def upward_imports(source: str, module: list[str], is_package: bool = False) -> list[str]:
    """Every import in ``source`` (the module ``module``) of a wing above its own."""
    own = _rank(module)
    return [f"line {line}: {'.'.join(module)} imports {'.'.join(target) or 'pairbench_async'}"
            for line, target in package_imports(source, module, is_package) if _rank(target) > own]


def _wing_files() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if _module_of(p) and _module_of(p)[0] in RANK)


@pytest.mark.parametrize("path", _wing_files(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_wing_imports_a_wing_above_it(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    assert upward_imports(source, _module_of(path), path.name == "__init__.py") == []


def test_every_module_lives_in_a_wing() -> None:
    loose = sorted(p.name for p in PACKAGE.glob("*.py") if p.name not in ("__init__.py", "__main__.py"))
    assert loose == [], f"modules outside the wings: {loose}"
    wings = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists())
    assert wings == sorted(WINGS)
    for wing in WINGS:
        doc = ast.get_docstring(ast.parse((PACKAGE / wing / "__init__.py").read_text()))
        assert doc and doc.startswith(f"{wing}:"), f"{wing}/__init__.py must say what the wing owns"


def test_the_sandbox_worker_imports_only_the_standard_library() -> None:
    """The worker runs as ``python -S`` with nothing of the package on its path."""
    tree = ast.parse((PACKAGE / "sandbox" / "worker.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"line {node.lineno}: relative import in the worker"
            names = [node.module or ""]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        for name in names:
            assert name.split(".")[0] in sys.stdlib_module_names, f"line {node.lineno}: {name}"


def _imports_of(path: Path) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
    return found


def test_only_the_ray_sandbox_imports_ray() -> None:
    """Ray is an optional extra, and a sandbox worker that has imported it forks ~10x slower
    (0.45 -> 3.4-5.3 ms per test): one module imports it, and only when a Ray sandbox starts."""
    importers = sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
                       for _, name in _imports_of(p) if name.split(".")[0] == "ray")
    assert set(importers) == {"cluster/ray_sandbox.py"}
    ray_sandbox = ast.parse((PACKAGE / "cluster" / "ray_sandbox.py").read_text(encoding="utf-8"))
    top = [n for n in ray_sandbox.body if isinstance(n, ast.Import | ast.ImportFrom)]
    assert not [n for n in top if "ray" in {a.name.split(".")[0] for a in n.names}
                or (isinstance(n, ast.ImportFrom) and (n.module or "").split(".")[0] == "ray")]


def test_importing_the_package_and_its_commands_never_imports_ray() -> None:
    import subprocess

    code = ("import sys, pairbench_async, pairbench_async.cli.main\n"
            "from pairbench_async.cluster.factory import make_sandbox\n"
            "import pairbench_async.cluster.ray_sandbox, pairbench_async.sandbox.pool\n"
            "make_sandbox('local')\n"
            "assert 'ray' not in sys.modules, 'ray imported'\n")
    subprocess.run([sys.executable, "-c", code], check=True)


# ------------------------------------------------------------------------- the checker itself


@pytest.mark.parametrize(
    ("source", "module", "is_package"),
    [
        ("from ..runner.evaluator import Evaluator", ["models", "specs"], False),
        ("from ..report import metrics", ["protocol", "hints"], False),
        ("from .. import __version__", ["runner", "evaluator"], False),
        ("from pairbench_async.cli.main import main", ["sandbox", "pool"], False),
        ("import pairbench_async.models.client", ["runlog", "store"], False),
        ("def f():\n    from ..datasets.files import load_dataset\n", ["models", "replay"], False),
        ("if TYPE_CHECKING:\n    from ..runner.episode import EpisodeSpec\n", ["protocol", "protocols"], False),
        ("from ...runner import episode", ["datasets", "importers", "jsonl"], False),
        ("from ..sandbox import pool", ["core"], True),
        ("importlib.import_module('pairbench_async.report.html')", ["models", "client"], False),
    ],
)
def test_the_checker_catches_each_kind_of_upward_import(source: str, module: list[str], is_package: bool) -> None:
    assert upward_imports(source, module, is_package)


@pytest.mark.parametrize(
    ("source", "module"),
    [
        ("from ..core.types import Test\nfrom .evidence import Evidence", ["protocol", "leakage"]),
        ("from ..protocol.context import TurnContext", ["models", "offline"]),
        ("from ...sandbox.pool import SandboxPool\nfrom .common import x", ["datasets", "importers", "jsonl"]),
        ("from ..runner.evaluator import Evaluator", ["cli", "run"]),
    ],
)
def test_the_checker_accepts_downward_and_sideways_imports(source: str, module: list[str]) -> None:
    assert upward_imports(source, module) == []


# ------------------------------------------------------------------------- purity


def _pure_files() -> list[Path]:
    return sorted({*(PACKAGE / "protocol").glob("*.py"), *(PACKAGE / m for m in PURE_MODULES)})


def violations(source: str) -> list[str]:
    """Every forbidden import or global-random call in ``source``."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] in FORBIDDEN or (parts[0] == "pairbench_async" and len(parts) > 1
                                             and parts[1] in ("sandbox", "runner", "cli", "datasets")):
                    found.append(f"line {node.lineno}: import {alias.name}")
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            parts = module.split(".")
            if node.level == 0 and parts[0] in FORBIDDEN:
                found.append(f"line {node.lineno}: from {module} import ...")
            elif (node.level > 0 or parts[0] == "pairbench_async") and (
                    {"sandbox", "runner", "cli", "datasets", "client", "endpoint", "store"} & set(parts)):
                found.append(f"line {node.lineno}: from {'.' * node.level}{module} import ...")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id == "__import__":
                found.append(f"line {node.lineno}: __import__()")
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "random"
            and node.attr != "Random"
        ):
            found.append(f"line {node.lineno}: random.{node.attr} (use random.Random(seed))")
    return found


@pytest.mark.parametrize("path", _pure_files(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_pure_module_has_no_forbidden_imports(path: Path) -> None:
    assert violations(path.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize(
    "source",
    [
        "import asyncio",
        "import os.path",
        "from time import monotonic",
        "from concurrent.futures import ThreadPoolExecutor",
        "from ..sandbox import pool",
        "from ..sandbox.worker import run",
        "from pairbench_async.models.client import OpenAIClient",
        "import pairbench_async.runner.evaluator",
        "from ..runlog.store import read_records",
        "mod = __import__('socket')",
        "import random\nx = random.random()",
        "import random\nrandom.shuffle([])",
    ],
)
def test_the_purity_checker_catches_each_kind_of_violation(source: str) -> None:
    assert violations(source)


def test_the_purity_checker_accepts_pure_code() -> None:
    source = "import random\nimport re\nfrom ..core.types import Test\nrng = random.Random(3)\n"
    assert violations(source) == []
