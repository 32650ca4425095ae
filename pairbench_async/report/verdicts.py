"""FixEval's verdict mix (seed 004): the share of each verdict, with compile errors as CE.

The sandbox reports a program that does not compile as a runtime error on every test;
FixEval counts it as a compile error. :func:`compiles` makes that check without running
anything, and :func:`verdict_mix` turns a turn's verdict counts into shares with the RE
tests of such a program moved to CE. It is a module of its own because the verdict
reading is independent of the edit measures (:mod:`.edits`) and of how
:mod:`.precision` averages turns. ``docs/PRECISION.md`` states the definitions.

Pure and synchronous: no I/O, no clock, no randomness.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Final

from ..runlog.records import TurnRecord

__all__ = [
    "VERDICT_KEYS",
    "compiles",
    "verdict_mix",
]

#: The verdicts of a mix, in table order: the sandbox's seven plus FixEval's CE.
VERDICT_KEYS: Final = ("AC", "WA", "TLE", "RE", "MLE", "CE", "OLE", "SF")


def compiles(program: str) -> bool:
    """Whether Python compiles ``program`` (FixEval's compilation check, without running it).

    ``compile(program, "<candidate>", "exec")`` failing with SyntaxError (IndentationError
    and TabError included), ValueError (null bytes on some Python versions), or
    RecursionError / MemoryError (nesting too deep for the parser or compiler) is a compile
    error: the sandboxed interpreter fails the same way before running anything. Warnings are
    silenced for the call: under ``-W error`` a SyntaxWarning would otherwise turn a
    program that runs into a "compile error".
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(program, "<candidate>", "exec", dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
    return True


def verdict_shares(verdicts: Mapping[str, int], compiled: bool) -> dict[str, float]:
    counts = dict.fromkeys(VERDICT_KEYS, 0)
    for key, count in verdicts.items():
        if key not in counts:
            raise ValueError(f"unknown verdict {key!r}; expected one of {', '.join(VERDICT_KEYS)}")
        if count < 0:
            raise ValueError(f"verdict {key!r} has a negative count {count}")
        counts[key] += count
    total = sum(counts.values())
    if total == 0:
        return {}
    if not compiled:
        counts["CE"] += counts["RE"]
        counts["RE"] = 0
    return {key: counts[key] / total for key in VERDICT_KEYS}


def verdict_mix(record: TurnRecord) -> dict[str, float]:
    """The shares of each verdict over a turn's hidden tests, with FixEval's CE.

    Keys are :data:`VERDICT_KEYS` in order and the shares sum to 1. When the turn's
    program does not compile (:func:`compiles`) every RE test is counted as CE: the
    sandbox reports a syntax error as a runtime error on each test. A turn without
    verdict counts gives ``{}``, left out of every average.
    """
    return verdict_shares(record.verdicts, compiles(record.program))
