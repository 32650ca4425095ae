"""Docstrings taken out of a program or a problem statement (FeedbackEval's RQ4
"docstring" ablation, seed 001 §7: "the removal of docstrings"). Pure module."""

from __future__ import annotations

import ast

__all__ = ["strip_docstrings", "without_docstring"]


def strip_docstrings(code: str) -> str:
    """``code`` without its docstrings (module, class, function); unparsable code as it is.

    A body whose only statement is its docstring keeps it (removing it would leave an
    empty body, which does not parse)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return code
    lines = code.splitlines(keepends=True)
    spans = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str) and len(node.body) > 1:
                spans.append((first.lineno, first.end_lineno or first.lineno))
    for start, end in sorted(spans, reverse=True):
        del lines[start - 1:end]
    return "".join(lines)


def _is_code(text: str) -> bool:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) for n in tree.body)


def without_docstring(problem: str) -> str:
    """The problem statement with its docstring removed (RQ4's "docstring" ablation).

    A problem given as code (HumanEval's prompt: a signature and its docstring) keeps
    its code without the docstrings (a function whose body was only its docstring gets
    ``...``); a problem in prose *is* the description, so nothing of it is left.
    """
    text = problem.strip()
    if not _is_code(text):
        return ""
    stripped = strip_docstrings(text)
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    bare = []  # functions whose only statement is the docstring: replace it by `...`
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and len(node.body) == 1:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                bare.append(first)
    if not bare:
        return stripped.strip()
    for first in sorted(bare, key=lambda n: n.lineno, reverse=True):
        indent = " " * first.col_offset
        lines[first.lineno - 1:first.end_lineno or first.lineno] = [f"{indent}...\n"]
    return strip_docstrings("".join(lines)).strip()
