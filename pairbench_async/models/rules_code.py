"""The ``rules`` feedback model's reading of code: where the fault is and what to say.

From the diff between the candidate and the reference, :func:`find_fault` picks the hunk
the hint is about, :func:`describe_construct` names the candidate's construct there in words,
and :func:`advise` turns the hunk into a concept (L5) and a repair direction (L6)
without quoting either program (see :mod:`.rules`).
"""

from __future__ import annotations

import ast
import keyword
import re
from collections import Counter
from typing import Final, NamedTuple

from ..protocol.linediff import diff_opcodes, reference_lines

__all__ = ["Advice", "Fault", "advise", "describe_construct", "find_fault", "line_span"]

class Fault(NamedTuple):
    kind: str  # replace | insert | delete
    first: int  # 1-based candidate lines (for an insert: the lines around the gap)
    last: int
    candidate: list[str]
    reference: list[str]


def find_fault(program: str, reference: str, targets: set[int]) -> Fault | None:
    """The candidate/reference hunk most related to the target lines (else the first)."""
    a, b = program.splitlines(), reference.splitlines()
    best: tuple[int, int] | None = None
    chosen: Fault | None = None
    for index, (tag, i1, i2, j1, j2) in enumerate(diff_opcodes(a, b)):
        if tag == "equal":
            continue
        if i2 > i1:
            first, last = i1 + 1, i2
        else:
            first, last = max(1, i1), min(max(1, len(a)), i1 + 1)
        fault = Fault(tag, first, last, a[i1:i2], b[j1:j2])
        score = (len(targets & reference_lines(j1, j2, len(b))), -index)
        if best is None or score > best:
            best, chosen = score, fault
    return chosen


def line_span(first: int, last: int) -> str:
    return f"line {first}" if first == last else f"lines {first}-{last}"


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
            return _truth(node, depth)
        inner = _words(node.operand, depth + 1)
        return f"minus {inner}" if inner is not None and isinstance(node.op, ast.USub) else None
    if isinstance(node, ast.BinOp):
        left, right = _words(node.left, depth + 1), _words(node.right, depth + 1)
        op = _BINOP_WORDS.get(type(node.op))
        return None if None in (left, right, op) else f"{left} {op} {right}"
    if isinstance(node, ast.BoolOp):
        parts = [_truth(value, depth + 1) for value in node.values]
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


def _truth(node: ast.AST, depth: int = 0) -> str | None:
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
        words = _truth(node.test)
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


#: Call name → (concept when the reference adds it, what the repaired code then does).
_ADDED_CALLS: Final = {
    "abs": (
        "Only the magnitude of the value matters for this quantity, not its sign.",
        "works with the absolute value",
    ),
    "sorted": (
        "The computation relies on the values being in order, which the input does not guarantee.",
        "works on the values in sorted order",
    ),
    "sort": (
        "The computation relies on the values being in order, which the input does not guarantee.",
        "works on the values in sorted order",
    ),
    "lower": (
        "Letter case carries no meaning in the comparison the problem asks for.",
        "treats text regardless of letter case",
    ),
    "upper": (
        "Letter case carries no meaning in the comparison the problem asks for.",
        "treats text regardless of letter case",
    ),
    "max": (
        "The largest of the values involved is what matters here, not an arbitrary one.",
        "takes the largest of the values into account",
    ),
    "min": (
        "The smallest of the values involved is what matters here, not an arbitrary one.",
        "takes the smallest of the values into account",
    ),
    "Counter": (
        "How many times each value occurs matters: repeated values are not interchangeable.",
        "counts the occurrences of each value",
    ),
    "set": (
        "Repeated values count only once for this quantity.",
        "considers each distinct value only once",
    ),
    "heappush": (
        "Items are to be processed by priority, not in the order they arrive.",
        "takes items in priority order with a heap",
    ),
    "heappop": (
        "Items are to be processed by priority, not in the order they arrive.",
        "takes items in priority order with a heap",
    ),
    "reversed": (
        "The direction in which the values are visited matters here.",
        "walks the values in the opposite direction",
    ),
    "len": (
        "The number of items is part of the rule here.",
        "takes the number of items into account",
    ),
}
_REMOVED_CALLS: Final = {
    "float": (
        "Exact integer arithmetic is needed: a floating-point conversion loses precision on "
        "very large values.",
        "no longer passes the values through a floating-point conversion",
    ),
    "popleft": (
        "Items are to be processed by priority, not in the order they arrive.",
        "takes items in priority order rather than first come, first served",
    ),
}
_OPERATOR: Final = re.compile(r"<=|>=|==|!=|//|\*\*|[<>+\-*/%]")
_IDENT: Final = re.compile(r"[A-Za-z_]\w*")
_STRING: Final = re.compile(
    r"""(?i)(?<!\w)[rbfu]{0,2}(?:"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')"""
)
_CONDITION: Final = re.compile(r"^\s*(if|elif|while)\s+(.+?):\s*(?:#.*)?$")
_SPACE: Final = re.compile(r"\s+")
_KEYWORDS: Final = frozenset(keyword.kwlist)


class Advice(NamedTuple):
    concept: str  # an L5 sentence
    direction: str  # an L6 sentence, with where it applies


def _conditions(text: str) -> list[tuple[str, str | None]]:
    """(keyword, condition in words) of every ``if``/``elif``/``while`` line in ``text``."""
    found: list[tuple[str, str | None]] = []
    for line in text.splitlines():
        match = _CONDITION.match(line)
        if match is None:
            continue
        try:
            words = _truth(ast.parse(match.group(2).strip(), mode="eval").body)
        except SyntaxError:
            words = None
        found.append((match.group(1), words if words and len(words) <= 120 else None))
    return found


def _swapped(a: list[str], b: list[str]) -> bool:
    """Whether ``b`` is ``a`` with exactly two items exchanged."""
    if len(a) != len(b):
        return False
    diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
    return len(diff) == 2 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]


def advise(fault: Fault, construct: str) -> Advice:
    """The concept and repair direction a hunk implies, in words only (first rule that fits)."""
    where = f"{construct} ({line_span(fault.first, fault.last)})"
    cand, ref = "\n".join(fault.candidate), "\n".join(fault.reference)
    if fault.kind == "delete":
        return Advice(
            "Part of the current computation has no basis in the problem statement: the "
            "correct answer for these inputs does not involve it.",
            f"Remove {where}; the answer for these inputs does not involve that step.",
        )
    inserting = fault.kind == "insert"

    def revise(result: str) -> str:
        if inserting:
            return f"Add a step near {where} so that the program {result}."
        return f"Revise {where} so that it {result}."

    cand_conds, ref_conds = _conditions(cand), _conditions(ref)
    if len(ref_conds) > len(cand_conds):
        known = {words for _, words in cand_conds}
        new = next((w for _, w in ref_conds if w is not None and w not in known), None)
        case = f"the case where {new}" if new else "a special case of these inputs"
        return Advice(
            f"The solution needs to distinguish {case}: for such inputs the general "
            "computation does not give the right answer.",
            f"Add a check {'near' if inserting else 'in'} {where} for {case}, and handle that "
            "case the way the problem statement describes.",
        )
    if [k for k, _ in cand_conds] == ["if"] and [k for k, _ in ref_conds] == ["while"]:
        return Advice(
            "A single check is not enough here: the situation it tests can arise several "
            "times in a row, and every occurrence has to be dealt with.",
            f"Revise {where} so that it repeats while its condition holds, rather than testing "
            "it only once.",
        )
    cand_ops, ref_ops = Counter(_OPERATOR.findall(cand)), Counter(_OPERATOR.findall(ref))
    boundary = (
        "Equal values are a boundary case here: when the two compared quantities are equal, "
        "the comparison decides the answer the wrong way."
    )
    for strict, loose in (("<", "<="), (">", ">=")):
        if cand_ops[strict] > ref_ops[strict] and ref_ops[loose] > cand_ops[loose]:
            return Advice(
                boundary,
                f"Revise the comparison in {where} so that it also holds when both sides are "
                "equal.",
            )
        if cand_ops[loose] > ref_ops[loose] and ref_ops[strict] > cand_ops[strict]:
            return Advice(
                boundary,
                f"Revise the comparison in {where} so that it no longer holds when both sides "
                "are equal.",
            )
    ref_words = next((w for _, w in ref_conds if w is not None), None)
    if ref_conds and cand_conds != ref_conds and ref_words is not None:
        return Advice(
            f"The condition tested here is not the right one: what matters is whether {ref_words}.",
            f"Revise the condition in {where} so that it tests whether {ref_words}.",
        )
    if cand_ops["//"] > ref_ops["//"] and ref_ops["/"] > cand_ops["/"]:
        return Advice(
            "The answer is a fraction in general: rounding the division down loses its "
            "fractional part.",
            f"Revise {where} so that the division keeps its fractional part.",
        )
    if ref_ops["//"] > cand_ops["//"] and cand_ops["/"] > ref_ops["/"]:
        return Advice(
            "The quantity here is a whole number: the division has to round down.",
            f"Revise {where} so that the division rounds down to a whole number.",
        )
    cand_calls = Counter(re.findall(r"([A-Za-z_]\w*)\s*\(", cand))
    ref_calls = Counter(re.findall(r"([A-Za-z_]\w*)\s*\(", ref))
    for name in sorted(ref_calls - cand_calls):
        if name in _ADDED_CALLS:
            concept, result = _ADDED_CALLS[name]
            return Advice(concept, revise(result))
    for name in sorted(cand_calls - ref_calls):
        if name in _REMOVED_CALLS:
            concept, result = _REMOVED_CALLS[name]
            return Advice(concept, revise(result))
    if ref_ops["%"] > cand_ops["%"] or (ref_ops["%"] and ref.count("(") != cand.count("(")):
        return Advice(
            "The result is defined modulo the given number, and the reduction has to apply to "
            "the whole intermediate value at every step.",
            f"Revise {where} so that the whole intermediate value is reduced modulo the given "
            "number at each step.",
        )
    bare_cand, bare_ref = _STRING.sub('""', cand), _STRING.sub('""', ref)
    if bare_cand == bare_ref and cand != ref:
        return Advice(
            "A fixed text produced here does not match what the problem statement prescribes.",
            f"Revise the fixed text in {where} so that it matches the problem statement exactly.",
        )
    cand_names, ref_names = _IDENT.findall(bare_cand), _IDENT.findall(bare_ref)
    if _swapped(cand_names, ref_names):
        return Advice(
            "The order of the quantities matters here, and the current program takes them "
            "the other way round.",
            f"Swap the two quantities that are exchanged in {where}.",
        )
    ones = re.compile(r"[+-]1\b")
    squashed_cand, squashed_ref = _SPACE.sub("", bare_cand), _SPACE.sub("", bare_ref)
    if len(ones.findall(squashed_cand)) != len(ones.findall(squashed_ref)):
        return Advice(
            "The computation is off by one at a boundary: the first or last position of the "
            "range is treated differently from what the problem defines.",
            f"Shift the boundary in {where} by one position, so that the range covers exactly "
            "the positions the problem defines.",
        )
    digits = re.compile(r"\b\d+\b")
    if digits.sub("0", squashed_cand) == digits.sub("0", squashed_ref):
        return Advice(
            "A constant here does not match the limits or rules stated in the problem.",
            f"Revise the constant in {where} so that it matches what the problem defines.",
        )
    added = sorted(set(ref_names) - set(cand_names) - _KEYWORDS)
    removed = sorted(set(cand_names) - set(ref_names) - _KEYWORDS)
    if added and removed:
        return Advice(
            f"The quantity computed here depends on {added[0]} rather than on {removed[0]}.",
            f"Revise {where} so that it uses {added[0]} where it now uses {removed[0]}.",
        )
    return Advice(
        "The computation here does not follow the rule the problem defines for these inputs.",
        f"Rewrite {where} so that it follows the rule of the problem for inputs like these.",
    )
