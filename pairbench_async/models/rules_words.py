"""The ``rules`` feedback model's words for code: expressions, conditions, statements.

:func:`describe_construct` names the candidate's construct at a line (the L4 region)
from its syntax tree, and :func:`truth` says a condition in plain words, which
:mod:`.rules_code` reuses for the conditions of a diff hunk (L5-L6). Kept apart from
the diff reading so that each stays small; pure, like :mod:`.rules_code`.
"""

from __future__ import annotations

import ast
from typing import Final

__all__ = ["truth", "describe_construct"]


_COMPARE_WORDS: Final = {
    ast.Lt: "is less than",
    ast.LtE: "is at most",
    ast.Gt: "is greater than",
    ast.GtE: "is at least",
    ast.Eq: "equals",
    ast.NotEq: "differs from",
    ast.In: "occurs in",
    ast.NotIn: "does not occur in",
    ast.Is: "is",
    ast.IsNot: "is not",
}
_BINOP_WORDS: Final = {
    ast.Add: "plus",
    ast.Sub: "minus",
    ast.Mult: "times",
    ast.Div: "divided by",
    ast.FloorDiv: "divided (rounding down) by",
    ast.Mod: "modulo",
    ast.Pow: "to the power",
}


def _words(node: ast.AST, depth: int = 0) -> str | None:
    """An expression in plain words, or ``None`` when it is too involved to say."""
    if depth > 4:
        return None
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or node.value is None:
            return str(node.value)
        if isinstance(node.value, (int, float)):
            return str(node.value)
        if node.value == "":
            return "the empty text"
        if isinstance(node.value, str) and len(node.value) <= 3 and node.value.isprintable():
            return f'the text "{node.value}"'
        return "a fixed text" if isinstance(node.value, str) else None
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        items = [_words(element, depth + 1) for element in node.elts]
        if not items or len(items) > 4 or any(item is None for item in items):
            return None
        return " or ".join(item for item in items if item is not None)
    if isinstance(node, ast.Attribute):
        inner = _words(node.value, depth + 1)
        return None if inner is None else f"the {node.attr} of {inner}"
    if isinstance(node, ast.Subscript):
        inner = _words(node.value, depth + 1)
        return None if inner is None else f"an item of {inner}"
    if isinstance(node, ast.Call):
        name = _call_name(node)
        if name == "len" and len(node.args) == 1:
            inner = _words(node.args[0], depth + 1)
            return None if inner is None else f"the length of {inner}"
        return None if name is None else f"the result of {name}"
    if isinstance(node, ast.UnaryOp):
        if isinstance(node.op, ast.Not):
            return truth(node, depth)
        inner = _words(node.operand, depth + 1)
        return f"minus {inner}" if inner is not None and isinstance(node.op, ast.USub) else None
    if isinstance(node, ast.BinOp):
        left, right = _words(node.left, depth + 1), _words(node.right, depth + 1)
        op = _BINOP_WORDS.get(type(node.op))
        return None if None in (left, right, op) else f"{left} {op} {right}"
    if isinstance(node, ast.BoolOp):
        parts = [truth(value, depth + 1) for value in node.values]
        if any(part is None for part in parts):
            return None
        joiner = " and " if isinstance(node.op, ast.And) else " or "
        return joiner.join(part for part in parts if part is not None)
    if isinstance(node, ast.Compare):
        parts = [_words(node.left, depth + 1)]
        for cmp, operand in zip(node.ops, node.comparators, strict=True):
            word = _COMPARE_WORDS.get(type(cmp))
            if isinstance(operand, (ast.Tuple, ast.List, ast.Set)) and word in _MEMBERSHIP:
                word = _MEMBERSHIP[word]
            parts += [word, _words(operand, depth + 1)]
        if any(part is None for part in parts):
            return None
        return " ".join(part for part in parts if part is not None)
    return None


_MEMBERSHIP: Final = {"occurs in": "is", "does not occur in": "is neither"}


def truth(node: ast.AST, depth: int = 0) -> str | None:
    """A condition in words, reading a bare value as "is non-empty" and ``not x`` as "is empty"."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = _words(node.operand, depth + 1)
        if inner is None:
            return None
        if isinstance(node.operand, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)):
            return f"{inner} is empty"
        return f"it is not the case that {inner}"
    words = _words(node, depth)
    if words is not None and isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)):
        return f"{words} is non-empty"
    return words


def _call_name(node: ast.Call) -> str | None:
    if isinstance(node.func, ast.Name):
        return node.func.id
    if isinstance(node.func, ast.Attribute):
        return node.func.attr
    return None


def _target_words(node: ast.AST) -> str:
    if isinstance(node, (ast.Tuple, ast.List)):
        return " and ".join(_target_words(element) for element in node.elts)
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Subscript):
        return f"an item of {_target_words(node.value)}"
    if isinstance(node, ast.Attribute):
        return f"the {node.attr} of {_target_words(node.value)}"
    return "a value"


def _describe(node: ast.stmt, header: bool) -> str:
    """A statement as "the ..." words: what an L4 hint may point at."""
    if isinstance(node, (ast.For, ast.AsyncFor)):
        it = node.iter
        if isinstance(it, ast.Call) and _call_name(it) == "range":
            what = "a range of positions"
        elif isinstance(it, (ast.Tuple, ast.List, ast.Set)):
            what = "a fixed collection of values"
        elif isinstance(it, ast.Subscript):
            what = f"a slice of {_target_words(it.value)}"
        elif isinstance(it, ast.Call) and _call_name(it) is not None:
            what = f"the result of {_call_name(it)}"
        else:
            what = _target_words(it)
        loop = f"the loop over {what}"
        return f"the header of {loop}" if header else loop
    if isinstance(node, ast.While):
        return "the while-loop and its condition" if header else "the while-loop"
    if isinstance(node, ast.If):
        words = truth(node.test)
        return f"the check whether {words}" if words and len(words) <= 80 else "the conditional"
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return f"the definition of {node.name}" if header else f"the function {node.name}"
    if isinstance(node, ast.AugAssign):
        return f"the update of {_target_words(node.target)}"
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return f"the computation of {' and '.join(_target_words(t) for t in targets)}"
    if isinstance(node, ast.Return):
        return "the returned value"
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        name = _call_name(node.value)
        if name == "print":
            return "the output step"
        return f"the call of {name}" if name else "the call"
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return "the imports"
    if isinstance(node, (ast.Break, ast.Continue)):
        return "the early exit"
    return "the statement"


_BLOCKS: Final = (ast.For, ast.AsyncFor, ast.While, ast.If, ast.With, ast.Try)
_FUNCTIONS: Final = (ast.FunctionDef, ast.AsyncFunctionDef)


def describe_construct(program: str, line: int) -> str:
    """The innermost statement at ``line`` with its enclosing block and function, in words."""
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError):
        return "this part of the program"
    chain = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.stmt) and node.lineno <= line <= (node.end_lineno or node.lineno)
    ]
    if not chain:
        return "this part of the program"
    chain.sort(key=lambda node: (node.end_lineno or node.lineno) - node.lineno)
    inner = chain[0]
    text = _describe(inner, header=inner.lineno == line)
    block = next((n for n in chain[1:] if isinstance(n, _BLOCKS)), None)
    if block is not None:
        text += f" inside {_describe(block, header=False)}"
    function = next((n for n in chain[1:] if isinstance(n, _FUNCTIONS)), None)
    if function is not None and not isinstance(inner, _FUNCTIONS):
        text += f" in the function {function.name}"
    return text
