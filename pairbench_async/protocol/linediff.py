"""Line diffs between two programs: the hunks both offline models reason about.

Pure module: :mod:`..models.sim` applies the reference's side of hunks, :mod:`..models.rules_code`
locates the fault in them, :mod:`..report.edits` and :mod:`..report.bleu` number lines as the
compiler does (:func:`source_lines`).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

__all__ = ["diff_opcodes", "reference_lines", "source_lines"]


def diff_opcodes(a: Sequence[str], b: Sequence[str]) -> Sequence[tuple[str, int, int, int, int]]:
    """Line diff opcodes (no autojunk: short programs repeat lines that matter)."""
    return difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()


def reference_lines(j1: int, j2: int, size: int) -> set[int]:
    """1-based reference lines of a hunk; for a gap in the reference, its two neighbours."""
    if j2 > j1:
        return set(range(j1 + 1, j2 + 1))
    return {line for line in (j1, j1 + 1) if 1 <= line <= size}


def source_lines(text: str) -> list[str]:
    """Lines as the compiler numbers them: only ``\\n``, ``\\r\\n`` and ``\\r`` end a line."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines
