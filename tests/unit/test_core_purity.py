"""The protocol core stays pure: no event loop, network, processes, clock or sandbox.

Walks the AST of every pure module and fails on a forbidden import (``import x``,
``from x import y``, relative imports of the package's I/O modules, ``__import__`` and
``importlib``), and on module-level ``random`` functions, which use hidden global state
instead of a ``random.Random(seed)``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "pairbench_async"
PURE = (
    "_records",
    "_errors",
    "_shapes",
    "_scenarios",
    "_policy",
    "_hints",
    "_leakage",
    "_prompts",
    "_extract",
    "_metrics",
    "_ranking",
    "_precision",
    "_runlog",
    "_report",
    "_baselines",
    "_styles",
    "_context",
    "_linediff",
    "_rules_code",
    "_bleu",
)
#: Pure modules owned by other engineers; checked as soon as they exist.
OPTIONAL: tuple[str, ...] = ()
FORBIDDEN = frozenset(
    {
        "asyncio",
        "aiohttp",
        "anyio",
        "uvloop",
        "aiolimiter",
        "socket",
        "ssl",
        "subprocess",
        "multiprocessing",
        "concurrent",
        "os",
        "shutil",
        "pathlib",
        "tempfile",
        "signal",
        "threading",
        "time",
        "importlib",
        "psutil",
        "requests",
        "urllib",
        "http",
    }
)
IO_MODULES = frozenset(
    {
        "_pool",
        "_worker",
        "_client",
        "_helper",
        "_confine",
        "_offline",
        "_sim",
        "_rules",
        "_store",
        "_orchestrator",
        "_api",
        "_cli",
        "_traces",
        "_report",
        "sandbox",
    }
)


def _modules() -> list[str]:
    present = [name for name in OPTIONAL if (PACKAGE / f"{name}.py").exists()]
    return [*PURE, *present]


def violations(source: str) -> list[str]:
    """Every forbidden import or global-random call in ``source``."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] in FORBIDDEN or (
                    parts[0] == "pairbench_async" and set(parts) & IO_MODULES
                ):
                    found.append(f"line {node.lineno}: import {alias.name}")
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            parts = module.split(".")
            names = {alias.name for alias in node.names}
            if node.level == 0 and parts[0] in FORBIDDEN:
                found.append(f"line {node.lineno}: from {module} import ...")
            elif (node.level > 0 or parts[0] == "pairbench_async") and (
                set(parts) & IO_MODULES or names & IO_MODULES
            ):
                found.append(f"line {node.lineno}: from {'.' * node.level}{module} import {names}")
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


@pytest.mark.parametrize("module", _modules())
def test_pure_module_has_no_forbidden_imports(module: str) -> None:
    source = (PACKAGE / f"{module}.py").read_text(encoding="utf-8")
    assert violations(source) == []


@pytest.mark.parametrize(
    "source",
    [
        "import asyncio",
        "import os.path",
        "from time import monotonic",
        "from concurrent.futures import ThreadPoolExecutor",
        "from . import _pool",
        "from ._worker import run",
        "from pairbench_async._client import OpenAIClient",
        "import pairbench_async._orchestrator",
        "mod = __import__('socket')",
        "import random\nx = random.random()",
        "import random\nrandom.shuffle([])",
    ],
)
def test_the_checker_catches_each_kind_of_violation(source: str) -> None:
    assert violations(source)


def test_the_checker_accepts_pure_code() -> None:
    source = "import random\nimport re\nfrom ._records import Test\nrng = random.Random(3)\n"
    assert violations(source) == []
