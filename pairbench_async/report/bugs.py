"""PDB's bug-level recall and fix-verified edit-level precision of one final program (seed 003).

PDB (Precise Debugging Benchmark) scores a repair bug by bug: "For each bug i, a
pseudo-fixed version is constructed—retaining ground-truth fixes for all other bugs and
only using the model's fix for bug i—to see if unit tests pass"; recall is the share of
bugs whose pseudo-fixed version passes, and precision the share of the model's edited lines
that belong to a bug so fixed. This module builds those programs and scores them, given a
verdict for each program (``verdict(program)``: does it pass every hidden test, None if
unknown). Running programs is I/O, so the caller supplies the verdicts, as
:mod:`.precision` gets CodeBLEU from a scorer passed in: :func:`bug_programs` lists the
programs a score needs, :func:`score_bugs` scores once their verdicts are known.

Our instances carry no bug annotations, only a buggy program and a reference: the bugs
are derived from the buggy -> reference line diff (:func:`hunks`), each contiguous hunk one
candidate bug, kept as a bug only when the tests need it (the reference with that hunk
alone put back fails), as PDB's "Unit test verifies bug failure" keeps only failing bugs.
``docs/PRECISION.md`` states the definitions, our reading and every edge case.

Pure and synchronous: no I/O, no clock, no randomness.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence

import msgspec

from ..protocol.linediff import source_lines
from .edits import check_tolerance, nonblank_lines

__all__ = [
    "BugScore",
    "Hunk",
    "Verdict",
    "apply_hunks",
    "bug_programs",
    "canonical",
    "hunks",
    "score_bugs",
]

#: Does a program pass every hidden test of the instance? None when unknown (not run).
Verdict = Callable[[str], bool | None]


class Hunk(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One contiguous change of a base program: its non-blank lines ``start:end`` (indices
    among the base's non-blank lines; ``start == end`` for a pure insertion) become ``lines``.

    ``first``..``last`` are the base line numbers (1-based) the hunk spans, for distances; an
    insertion spans the one line it precedes (one past the last non-blank line at the end).
    """

    start: int
    end: int
    first: int
    last: int
    #: the replacement, as written (blank lines inside it kept)
    lines: tuple[str, ...]
    #: the replacement's non-blank lines
    added: int

    @property
    def size(self) -> int:
        """Edited lines: max(lines removed, lines added), so a line replaced counts once."""
        return max(self.end - self.start, self.added)


def hunks(base: str, new: str) -> list[Hunk]:
    """The hunks of the line diff ``base`` -> ``new``, in base order.

    The same diff as :func:`.edits.changed_lines` (trailing whitespace and blank lines
    ignored, ``difflib.SequenceMatcher`` without autojunk); each non-equal opcode is one
    hunk, and two hunks are always separated by at least one unchanged line.
    """
    numbers, keys = nonblank_lines(base)
    new_numbers, new_keys = nonblank_lines(new)
    new_lines = source_lines(new)
    after = numbers[-1] + 1 if numbers else 1
    out: list[Hunk] = []
    matcher = difflib.SequenceMatcher(None, keys, new_keys, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        text = tuple(new_lines[new_numbers[j1] - 1:new_numbers[j2 - 1]]) if j2 > j1 else ()
        if i2 > i1:
            first, last = numbers[i1], numbers[i2 - 1]
        else:
            first = last = numbers[i1] if i1 < len(numbers) else after
        out.append(Hunk(start=i1, end=i2, first=first, last=last, lines=text, added=j2 - j1))
    return out


def _conflict(a: Hunk, b: Hunk) -> bool:
    """Do two hunks of the same base touch the same lines (so cannot both be applied)?"""
    if a.start == a.end and b.start == b.end:
        return a.start == b.start
    if a.start == a.end:
        return b.start < a.start < b.end
    if b.start == b.end:
        return a.start < b.start < a.end
    return max(a.start, b.start) < min(a.end, b.end)


def _near(a: Hunk, b: Hunk, tolerance: int) -> bool:
    """Are two hunks within ``tolerance`` base lines of each other (0: they overlap)?"""
    return max(0, b.first - a.last, a.first - b.last) <= tolerance


def apply_hunks(base: str, chosen: Sequence[Hunk]) -> str:
    """``base`` with the hunks applied (hunks of diffs of ``base``; they must not conflict).

    Lines outside the hunks, blank ones included, stay as in ``base``; the result ends with
    a newline unless empty. ValueError for two hunks that touch the same lines.
    """
    lines = source_lines(base)
    numbers, _ = nonblank_lines(base)
    ordered = sorted(chosen, key=lambda h: (h.start, h.end))
    for i, a in enumerate(ordered):
        for b in ordered[i + 1:]:
            if _conflict(a, b):
                raise ValueError(f"hunks at base lines {a.first}-{a.last} and "
                                 f"{b.first}-{b.last} conflict")
    out: list[str] = []
    at = 1  # the next base line number to copy
    for h in ordered:
        begin = numbers[h.start] if h.start < len(numbers) else len(lines) + 1
        out.extend(lines[at - 1:begin - 1])
        out.extend(h.lines)
        at = numbers[h.end - 1] + 1 if h.end > h.start else begin
    out.extend(lines[at - 1:])
    return "\n".join(out) + "\n" if out else ""


def canonical(program: str) -> str:
    """A program's non-blank lines without trailing whitespace: two programs with the same
    canonical text differ only where the line diff does not look, and share a verdict."""
    return "\n".join(nonblank_lines(program)[1])


class BugScore(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """PDB's scores of one final program against its instance's bugs."""

    #: hunks of the buggy -> reference diff
    candidates: int
    #: those the tests need (the reference with that hunk put back fails): PDB's k
    bugs: int
    #: bugs whose pseudo-fixed program passes every hidden test
    fixed: int
    #: fixed / bugs; None when bugs = 0
    recall: float | None
    #: |Ê|: the final program's edited lines (:attr:`Hunk.size` summed over its hunks)
    edited: int
    #: the edited lines credited to fixed bugs (PDB's numerator)
    credited: int
    #: credited / edited; None when edited = 0
    precision: float | None


class _Plan(msgspec.Struct, frozen=True):
    """The programs one score needs, before any verdict."""

    bugs: list[Hunk]
    #: per candidate bug: the reference with that hunk put back (the bug alone left in)
    reverts: list[str]
    edits: list[Hunk]
    #: per candidate bug: the indices of the final program's hunks mapped to it
    mapped: list[list[int]]
    #: per candidate bug: its pseudo-fixed program, None when no edit is mapped to it
    pseudo: list[str | None]


def _plan(buggy: str, reference: str, final: str, tolerance: int) -> _Plan:
    bugs = hunks(buggy, reference)
    edits = hunks(buggy, final)
    reverts = [apply_hunks(buggy, [b for j, b in enumerate(bugs) if j != i])
               for i in range(len(bugs))]
    mapped: list[list[int]] = []
    pseudo: list[str | None] = []
    for i, bug in enumerate(bugs):
        mine = [e for e, edit in enumerate(edits) if _near(edit, bug, tolerance)]
        mapped.append(mine)
        if not mine:
            pseudo.append(None)
            continue
        model = [edits[e] for e in mine]
        others = [b for j, b in enumerate(bugs)
                  if j != i and not any(_conflict(b, m) for m in model)]
        pseudo.append(apply_hunks(buggy, [*model, *others]))
    return _Plan(bugs, reverts, edits, mapped, pseudo)


def bug_programs(buggy: str, reference: str, final: str, tolerance: int = 1) -> list[str]:
    """Every program :func:`score_bugs` asks a verdict of (distinct canonical texts, in order)."""
    check_tolerance(tolerance)
    plan = _plan(buggy, reference, final, tolerance)
    out: dict[str, str] = {}
    for program in [*plan.reverts, *(p for p in plan.pseudo if p is not None)]:
        out.setdefault(canonical(program), program)
    return list(out.values())


def _components(plan: _Plan, real: list[int], tolerance: int) -> list[tuple[list[int], list[int]]]:
    """Connected groups of (edits, real bugs) under "mapped to": an edit near two bugs
    joins them."""
    parent = list(range(len(plan.edits) + len(plan.bugs)))

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for i in real:
        for e in plan.mapped[i]:
            parent[root(e)] = root(len(plan.edits) + i)
    groups: dict[int, tuple[list[int], list[int]]] = {}
    for e in range(len(plan.edits)):
        groups.setdefault(root(e), ([], []))[0].append(e)
    for i in real:
        groups.setdefault(root(len(plan.edits) + i), ([], []))[1].append(i)
    return list(groups.values())


def score_bugs(buggy: str, reference: str, final: str, verdict: Verdict,
               tolerance: int = 1) -> BugScore | None:
    """PDB's bug-level recall and fix-verified edit-level precision of ``final``.

    ``verdict(program)`` says whether a program passes every hidden test (None: unknown);
    every program is asked, the reference too (a fix written as the reference's is verified
    like any other). Returns None when a verdict the score needs is unknown. A candidate
    bug is a bug when its revert fails; it is fixed when some edit of ``final`` lies within
    ``tolerance`` lines of it and its pseudo-fixed program passes. Each group of edits and
    bugs joined by that mapping is credited min(its edited lines, sum over its fixed bugs
    of (the bug's reference lines + tolerance)); precision is the credit over all edited
    lines.
    """
    check_tolerance(tolerance)
    plan = _plan(buggy, reference, final, tolerance)
    real: list[int] = []
    for i, revert in enumerate(plan.reverts):
        ok = verdict(revert)
        if ok is None:
            return None
        if not ok:  # the tests need this hunk: a bug
            real.append(i)
    fixed: set[int] = set()
    for i in real:
        program = plan.pseudo[i]
        if program is None:  # nothing mapped: the pseudo-fixed program is the revert, which fails
            continue
        ok = verdict(program)
        if ok is None:
            return None
        if ok:
            fixed.add(i)
    edited = sum(e.size for e in plan.edits)
    credited = 0
    for edits, bugs in _components(plan, real, tolerance):
        done = [i for i in bugs if i in fixed]
        if done:
            credited += min(sum(plan.edits[e].size for e in edits),
                            sum(plan.bugs[i].size + tolerance for i in done))
    return BugScore(
        candidates=len(plan.bugs), bugs=len(real), fixed=len(fixed),
        recall=len(fixed) / len(real) if real else None,
        edited=edited, credited=credited, precision=credited / edited if edited else None,
    )
