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


class _Hunk:
    """One fault's two sides as the rules below read them (each computed once)."""

    def __init__(self, fault: Fault, construct: str) -> None:
        self.where = f"{construct} ({line_span(fault.first, fault.last)})"
        self.cand, self.ref = "\n".join(fault.candidate), "\n".join(fault.reference)
        self.inserting = fault.kind == "insert"
        self.cand_conds, self.ref_conds = _conditions(self.cand), _conditions(self.ref)
        self.cand_ops, self.ref_ops = Counter(_OPERATOR.findall(self.cand)), Counter(_OPERATOR.findall(self.ref))
        self.bare_cand, self.bare_ref = _STRING.sub('""', self.cand), _STRING.sub('""', self.ref)
        self.cand_names, self.ref_names = _IDENT.findall(self.bare_cand), _IDENT.findall(self.bare_ref)
        self.squashed_cand, self.squashed_ref = _SPACE.sub("", self.bare_cand), _SPACE.sub("", self.bare_ref)

    def revise(self, result: str) -> str:
        if self.inserting:
            return f"Add a step near {self.where} so that the program {result}."
        return f"Revise {self.where} so that it {result}."


def _special_case(h: _Hunk) -> Advice | None:
    if len(h.ref_conds) <= len(h.cand_conds):
        return None
    known = {words for _, words in h.cand_conds}
    new = next((w for _, w in h.ref_conds if w is not None and w not in known), None)
    case = f"the case where {new}" if new else "a special case of these inputs"
    return Advice(
        f"The solution needs to distinguish {case}: for such inputs the general "
        "computation does not give the right answer.",
        f"Add a check {'near' if h.inserting else 'in'} {h.where} for {case}, and handle that "
        "case the way the problem statement describes.",
    )


def _repeated_check(h: _Hunk) -> Advice | None:
    if [k for k, _ in h.cand_conds] != ["if"] or [k for k, _ in h.ref_conds] != ["while"]:
        return None
    return Advice(
        "A single check is not enough here: the situation it tests can arise several "
        "times in a row, and every occurrence has to be dealt with.",
        f"Revise {h.where} so that it repeats while its condition holds, rather than testing "
        "it only once.",
    )


def _equality_boundary(h: _Hunk) -> Advice | None:
    boundary = (
        "Equal values are a boundary case here: when the two compared quantities are equal, "
        "the comparison decides the answer the wrong way."
    )
    cand_ops, ref_ops = h.cand_ops, h.ref_ops
    for strict, loose in (("<", "<="), (">", ">=")):
        if cand_ops[strict] > ref_ops[strict] and ref_ops[loose] > cand_ops[loose]:
            return Advice(boundary, f"Revise the comparison in {h.where} so that it also holds when both sides "
                                    "are equal.")
        if cand_ops[loose] > ref_ops[loose] and ref_ops[strict] > cand_ops[strict]:
            return Advice(boundary, f"Revise the comparison in {h.where} so that it no longer holds when both "
                                    "sides are equal.")
    return None


def _other_condition(h: _Hunk) -> Advice | None:
    ref_words = next((w for _, w in h.ref_conds if w is not None), None)
    if not h.ref_conds or h.cand_conds == h.ref_conds or ref_words is None:
        return None
    return Advice(
        f"The condition tested here is not the right one: what matters is whether {ref_words}.",
        f"Revise the condition in {h.where} so that it tests whether {ref_words}.",
    )


def _division(h: _Hunk) -> Advice | None:
    cand_ops, ref_ops = h.cand_ops, h.ref_ops
    if cand_ops["//"] > ref_ops["//"] and ref_ops["/"] > cand_ops["/"]:
        return Advice(
            "The answer is a fraction in general: rounding the division down loses its "
            "fractional part.",
            f"Revise {h.where} so that the division keeps its fractional part.",
        )
    if ref_ops["//"] > cand_ops["//"] and cand_ops["/"] > ref_ops["/"]:
        return Advice(
            "The quantity here is a whole number: the division has to round down.",
            f"Revise {h.where} so that the division rounds down to a whole number.",
        )
    return None


def _calls(h: _Hunk) -> Advice | None:
    cand_calls = Counter(re.findall(r"([A-Za-z_]\w*)\s*\(", h.cand))
    ref_calls = Counter(re.findall(r"([A-Za-z_]\w*)\s*\(", h.ref))
    for name in sorted(ref_calls - cand_calls):
        if name in _ADDED_CALLS:
            concept, result = _ADDED_CALLS[name]
            return Advice(concept, h.revise(result))
    for name in sorted(cand_calls - ref_calls):
        if name in _REMOVED_CALLS:
            concept, result = _REMOVED_CALLS[name]
            return Advice(concept, h.revise(result))
    return None


def _modulo(h: _Hunk) -> Advice | None:
    if not (h.ref_ops["%"] > h.cand_ops["%"] or (h.ref_ops["%"] and h.ref.count("(") != h.cand.count("("))):
        return None
    return Advice(
        "The result is defined modulo the given number, and the reduction has to apply to "
        "the whole intermediate value at every step.",
        f"Revise {h.where} so that the whole intermediate value is reduced modulo the given "
        "number at each step.",
    )


def _fixed_text(h: _Hunk) -> Advice | None:
    if h.bare_cand != h.bare_ref or h.cand == h.ref:
        return None
    return Advice(
        "A fixed text produced here does not match what the problem statement prescribes.",
        f"Revise the fixed text in {h.where} so that it matches the problem statement exactly.",
    )


def _swapped_order(h: _Hunk) -> Advice | None:
    if not _swapped(h.cand_names, h.ref_names):
        return None
    return Advice(
        "The order of the quantities matters here, and the current program takes them "
        "the other way round.",
        f"Swap the two quantities that are exchanged in {h.where}.",
    )


def _off_by_one(h: _Hunk) -> Advice | None:
    ones = re.compile(r"[+-]1\b")
    if len(ones.findall(h.squashed_cand)) == len(ones.findall(h.squashed_ref)):
        return None
    return Advice(
        "The computation is off by one at a boundary: the first or last position of the "
        "range is treated differently from what the problem defines.",
        f"Shift the boundary in {h.where} by one position, so that the range covers exactly "
        "the positions the problem defines.",
    )


def _constant(h: _Hunk) -> Advice | None:
    digits = re.compile(r"\b\d+\b")
    if digits.sub("0", h.squashed_cand) != digits.sub("0", h.squashed_ref):
        return None
    return Advice(
        "A constant here does not match the limits or rules stated in the problem.",
        f"Revise the constant in {h.where} so that it matches what the problem defines.",
    )


def _other_quantity(h: _Hunk) -> Advice | None:
    added = sorted(set(h.ref_names) - set(h.cand_names) - _KEYWORDS)
    removed = sorted(set(h.cand_names) - set(h.ref_names) - _KEYWORDS)
    if not (added and removed):
        return None
    return Advice(
        f"The quantity computed here depends on {added[0]} rather than on {removed[0]}.",
        f"Revise {h.where} so that it uses {added[0]} where it now uses {removed[0]}.",
    )


#: The rules of :func:`advise`, most specific first: the first that fits speaks.
_RULES: Final = (_special_case, _repeated_check, _equality_boundary, _other_condition, _division, _calls,
                 _modulo, _fixed_text, _swapped_order, _off_by_one, _constant, _other_quantity)


def advise(fault: Fault, construct: str) -> Advice:
    """The concept and repair direction a hunk implies, in words only (first rule that fits)."""
    if fault.kind == "delete":
        return Advice(
            "Part of the current computation has no basis in the problem statement: the "
            "correct answer for these inputs does not involve it.",
            f"Remove {construct} ({line_span(fault.first, fault.last)}); the answer for these inputs does not "
            "involve that step.",
        )
    hunk = _Hunk(fault, construct)
    for rule in _RULES:
        advice = rule(hunk)
        if advice is not None:
            return advice
    return Advice(
        "The computation here does not follow the rule the problem defines for these inputs.",
        f"Rewrite {hunk.where} so that it follows the rule of the problem for inputs like these.",
    )
