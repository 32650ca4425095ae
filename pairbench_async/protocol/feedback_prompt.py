"""The feedback model's prompt for one hint: the level's rules, its example, masked evidence.

The prompt is where a level's limits are stated to the feedback model (the rules every
level shares, those below L4 and below L6) and where the evidence is rendered as text
(each input and output clipped, code with line numbers, traces as line ranges). It is
kept apart from the level table (:mod:`.hints`) and the evidence (:mod:`.evidence`):
the baselines' prompts reuse :func:`render_evidence` without any level, and
:func:`build_feedback_prompt` masks the evidence again itself, so no caller can widen
what a level sees. Pure module: no I/O, no randomness.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from ..core.types import Message
from .evidence import Evidence, bound_program_text
from .hints import EvidenceReading, hint_level, mask_evidence

__all__ = [
    "build_feedback_prompt",
    "render_evidence",
]

#: Characters of one input or expected output shown to the feedback model (a program's
#: output is bounded by :func:`.evidence.bound_program_text`, to as many).
_SHOW_CHARS: Final = 1500


_RULES_ALL = (
    "Never write code, pseudocode, a patch or a code block. Never quote a test input, an "
    "expected output, the program's output on a hidden test or the reference solution; "
    "describe them in words instead."
)
_RULES_BELOW_4 = (
    "Do not mention line numbers, variable or function names of the program, or its "
    "loops, branches and statements."
)
_RULES_BELOW_6 = (
    "Do not tell the programmer what to do: no instructions or imperatives (change, "
    "replace, use, add, remove, initialise, ...), and no 'should', 'must be' or 'instead'."
)

_SYSTEM = (
    "You write feedback hints for a programmer repairing a program. The programmer sees "
    "the problem statement and their program, but never the hidden tests, their expected "
    "outputs or the reference solution. Your hint must reveal exactly what level {level} "
    "({name}: {description}) allows and nothing more. Reply with the hint text only."
)


def _clip(text: str) -> str:
    if len(text) <= _SHOW_CHARS:
        return text
    return text[:_SHOW_CHARS] + f"\n... ({len(text) - _SHOW_CHARS} more characters)"


def _numbered(source: str) -> str:
    return "\n".join(f"{i:4d} | {line}" for i, line in enumerate(source.splitlines(), start=1))


def _ranges(lines: Sequence[int]) -> str:
    """``[1, 2, 3, 7, 9, 10]`` → ``"1-3, 7, 9-10"``."""
    runs: list[list[int]] = []
    for line in sorted(set(lines)):
        if runs and runs[-1][1] == line - 1:
            runs[-1][1] = line
        else:
            runs.append([line, line])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs) or "none"


def render_evidence(evidence: Evidence) -> str:
    """The (masked) evidence as the sections of a prompt; absent fields are left out."""
    parts: list[str] = []
    if evidence.problem is not None:
        parts.append(f"## Problem statement\n{evidence.problem.strip()}")
    for index, test in enumerate(evidence.tests, start=1):
        block = [f"## Failing test {index}", f"Symptom: {test.summary}"]
        if test.input is not None:
            block.append(f"Input:\n{_clip(test.input)}")
        if test.expected is not None:
            block.append(f"Expected output:\n{_clip(test.expected)}")
        if test.actual is not None:
            block.append(f"Program output:\n{bound_program_text(test.actual)}")
        if test.trace is not None:
            block.append(f"Reference lines executed: {_ranges(test.trace)}")
        parts.append("\n".join(block))
    if evidence.candidate_code is not None:
        parts.append(
            f"## Current program (line numbers added)\n{_numbered(evidence.candidate_code)}"
        )
    if evidence.reference_code is not None:
        parts.append(
            f"## Reference solution (line numbers added)\n{_numbered(evidence.reference_code)}"
        )
    return "\n\n".join(parts)


def build_feedback_prompt(level: int, evidence: Evidence, scenario: str,
                          reading: EvidenceReading = "table-ii") -> list[Message]:
    """The feedback model's messages for a level-``level`` hint on ``scenario``.

    The evidence is masked again here (under ``reading``), so passing unmasked evidence
    cannot widen what the level sees.
    """
    row = hint_level(level)
    masked = mask_evidence(level, evidence, reading)
    rules = [_RULES_ALL]
    if level < 4:
        rules.append(_RULES_BELOW_4)
    if level < 6:
        rules.append(_RULES_BELOW_6)
    system = _SYSTEM.format(level=level, name=row.name, description=row.description)
    system += "\n\n" + "\n".join(f"- {rule}" for rule in rules)
    system += f"\n\nExample of a level-{level} hint: {row.example}"
    user = row.template.format(
        scenario=scenario, evidence=render_evidence(masked), level=level, name=row.name
    )
    return [Message(role="system", content=system), Message(role="user", content=user)]
