"""The ``rules`` feedback model's reading of code: where the fault is and what to say.

From the diff between the candidate and the reference, :func:`find_fault` picks the hunk
the hint is about, :func:`~.rules_words.describe_construct` names the candidate's construct
there in words, and :func:`advise` turns the hunk into a concept (L5) and a repair direction
(L6) without quoting either program (see :mod:`.rules`).
"""

from __future__ import annotations

import ast
import keyword
import re
from collections import Counter
from typing import Final, NamedTuple

from ..protocol.linediff import diff_opcodes, reference_lines
from .rules_words import truth

__all__ = ["Advice", "Fault", "advise", "find_fault", "line_span"]

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
            words = truth(ast.parse(match.group(2).strip(), mode="eval").body)
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
