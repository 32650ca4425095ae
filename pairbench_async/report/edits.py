"""Line edits of a repair, and line-proximity edit precision: where a repair edits the buggy program.

A pass rate says *whether* a repair works; an edit-level measure says *how*: a model
that rewrites the whole program to fix a one-line bug passes as often as one that edits
that line. Everything here is measured against the instance's buggy program, in its
line numbers: :func:`changed_lines` diffs two programs line by line
(whitespace-normalised) into an :class:`EditSet`; :func:`edit_precision` /
:func:`edit_recall` compare the candidate's edit with the reference's, with a line
tolerance (a proxy that runs nothing, not PDB's definition: PDB's fix-verified
precision and bug-level recall are :mod:`.bugs`'s); :func:`regenerated` flags wholesale
rewrites. The line diff is kept apart from the per-turn and per-model scoring of
:mod:`.precision`, which applies it to every turn. ``docs/PRECISION.md`` states every definition and edge case in words.

Pure and synchronous: no I/O, no clock, no randomness. An undefined value (an empty
denominator) is ``None``.
"""

from __future__ import annotations

import bisect
import difflib

import msgspec

from ..protocol.linediff import source_lines

__all__ = [
    "EditSet",
    "changed_lines",
    "edit_precision",
    "edit_recall",
    "nonblank_lines",
    "regenerated",
]


class EditSet(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Where an edit touches its base program, in the base's 1-based line numbers.

    ``changed`` holds the base lines the edit replaces or deletes; ``inserted`` the
    insertion points, each the number of the non-blank base line the inserted lines
    precede (one past the last non-blank line for an insertion at the end). ``lines``
    is the number of non-blank base lines, the denominator of :func:`regenerated`.
    """

    changed: frozenset[int]
    inserted: frozenset[int]
    lines: int

    @property
    def points(self) -> frozenset[int]:
        """Every base position the edit touches: changed lines and insertion points."""
        return self.changed | self.inserted

    @property
    def changed_share(self) -> float | None:
        """The share of non-blank base lines replaced or deleted; None for an empty base."""
        return len(self.changed) / self.lines if self.lines else None


def nonblank_lines(text: str) -> tuple[list[int], list[str]]:
    """The non-blank lines' numbers and comparison keys (the line without trailing whitespace):
    what :func:`changed_lines` compares, and :mod:`.bugs` too."""
    numbers: list[int] = []
    keys: list[str] = []
    for number, line in enumerate(source_lines(text), start=1):
        key = line.rstrip()
        if key:
            numbers.append(number)
            keys.append(key)
    return numbers, keys


def changed_lines(base: str, new: str) -> EditSet:
    """The line-level edit that turns ``base`` into ``new``, located in ``base``.

    Lines are compared after dropping trailing whitespace (spaces, tabs, ``\\r``, form
    feeds), and blank lines are left out of the comparison altogether, so adding,
    removing or resizing a run of blank lines is never an edit. Leading whitespace is
    compared exactly: re-indenting a line changes it, since indentation is Python syntax.
    The diff is :class:`difflib.SequenceMatcher`'s opcodes with ``autojunk=False`` (its
    popular-line heuristic would make long programs' diffs depend on line frequency).
    """
    numbers, base_keys = nonblank_lines(base)
    _, new_keys = nonblank_lines(new)
    end = numbers[-1] + 1 if numbers else 1
    changed: set[int] = set()
    inserted: set[int] = set()
    matcher = difflib.SequenceMatcher(None, base_keys, new_keys, autojunk=False)
    for tag, i1, i2, _j1, _j2 in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            changed.update(numbers[i1:i2])
        elif tag == "insert":
            inserted.add(numbers[i1] if i1 < len(numbers) else end)
    return EditSet(changed=frozenset(changed), inserted=frozenset(inserted), lines=len(numbers))


def check_tolerance(tolerance: int) -> None:
    if tolerance < 0:
        raise ValueError(f"tolerance must be >= 0 lines, got {tolerance}")


def _near_share(points: frozenset[int], others: frozenset[int], tolerance: int) -> float | None:
    """The share of ``points`` within ``tolerance`` lines of some point of ``others``."""
    if not points:
        return None
    ordered = sorted(others)
    near = 0
    for point in points:
        at = bisect.bisect_left(ordered, point - tolerance)
        if at < len(ordered) and ordered[at] <= point + tolerance:
            near += 1
    return near / len(points)


def set_precision(candidate: EditSet, reference: EditSet, tolerance: int) -> float | None:
    return _near_share(candidate.points, reference.points, tolerance)


def set_recall(candidate: EditSet, reference: EditSet, tolerance: int) -> float | None:
    return _near_share(reference.points, candidate.points, tolerance)


def edit_precision(buggy: str, candidate: str, reference: str, tolerance: int = 1) -> float | None:
    """How much of what the candidate changed lies near the reference's edit (line proximity;
    not PDB's edit-level precision, which :func:`.bugs.score_bugs` computes).

    The share of the candidate's edit points in ``buggy`` (changed lines and insertion
    points, :func:`changed_lines`) that lie within ``tolerance`` lines of a point the
    reference's edit also touches. ``None`` when the candidate changed nothing; 0 when
    the reference changes nothing but the candidate does.
    """
    check_tolerance(tolerance)
    return set_precision(changed_lines(buggy, candidate), changed_lines(buggy, reference), tolerance)


def edit_recall(buggy: str, candidate: str, reference: str, tolerance: int = 1) -> float | None:
    """How much of the needed edit the candidate made: the converse of :func:`edit_precision`.

    The share of the reference's edit points within ``tolerance`` lines of a point the
    candidate touched; ``None`` when the reference changes nothing.
    """
    check_tolerance(tolerance)
    return set_recall(changed_lines(buggy, candidate), changed_lines(buggy, reference), tolerance)


def check_threshold(threshold: float) -> None:
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be in [0, 1], got {threshold}")


def is_regenerated(edit: EditSet, threshold: float) -> bool:
    share = edit.changed_share
    return share is not None and share > threshold


def regenerated(buggy: str, candidate: str, threshold: float = 0.5) -> bool:
    """True when the candidate replaced or deleted more than ``threshold`` of the buggy lines.

    Counted over the buggy program's non-blank lines; insertions alone never make a
    regeneration (they leave every buggy line in place). An empty buggy program is
    never regenerated.
    """
    check_threshold(threshold)
    return is_regenerated(changed_lines(buggy, candidate), threshold)
