"""The candidate model's prompts: the turn-0 repair and the hinted revisions.

The candidate sees ⟨problem, current program, hint, history⟩ and nothing else (seed
000, Section IV): never hidden tests, expected outputs, oracle traces or the reference.
These builders take an :class:`Instance` for convenience but read only its public
fields (``problem``, ``context``, ``kind``, ``entry_point``); history is the earlier hints, which
passed the leakage validator, and one line per earlier reply saying whether it held
code and changed the program. The candidate's own earlier prose is left out to keep
prompts short and identical across models. Public example tests are assumed to be
part of the problem statement and are not repeated. Pure module: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import msgspec

from ..core.types import Instance, Message

__all__ = ["TurnSummary", "fence_for", "fenced", "initial_prompt", "turn_prompt"]

_SYSTEM = (
    "You are an expert Python programmer. You repair programs so that they solve the "
    "given problem correctly on every valid input, including inputs you have not seen."
)


class TurnSummary(msgspec.Struct, frozen=True, kw_only=True):
    """One earlier revision turn as the candidate's history shows it.

    ``hint`` is the validated hint of that turn (``None`` or empty: none was given).
    """

    turn: int
    hint: str | None = None
    code_found: bool = True
    changed: bool = True


def fence_for(text: str) -> str:
    """A backtick fence longer than any backtick run inside ``text`` (so it cannot close early)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def fenced(code: str) -> str:
    """``code`` in a python fence longer than any backtick run inside it."""
    fence = fence_for(code)
    return f"{fence}python\n{code.rstrip()}\n{fence}"


def _contract(instance: Instance) -> str:
    if instance.kind == "call":
        name = instance.entry_point or "the entry-point function"
        return (
            f"The program must define the function `{name}` and keep its name and "
            "signature: it is called with each test's arguments and its return value is "
            "checked. Do not read input or print the result."
        )
    return "The program reads from standard input and writes the answer to standard output."


def _answer_format() -> str:
    return (
        "Reply with the complete repaired program in a single ```python fenced code block. "
        "You may explain briefly before the block."
    )


def _task(instance: Instance) -> list[str]:
    """The problem, then the project context when the instance has one (FeedbackEval's
    "@@Context" part of its repair prompt, Fig. 5)."""
    parts = [f"## Problem\n{instance.problem.strip()}"]
    if instance.context.strip():
        parts.append(f"## Context\n{instance.context.strip()}")
    return parts


def initial_prompt(instance: Instance) -> list[Message]:
    """Turn 0: the problem (and its project context) and the buggy program, with no hint."""
    user = "\n\n".join(
        (
            *_task(instance),
            f"## Program\n{fenced(instance.buggy)}",
            "The program above may be incorrect. Repair it so that it solves the problem. "
            + _contract(instance),
            _answer_format(),
        )
    )
    return [Message(role="system", content=_SYSTEM), Message(role="user", content=user)]


def _history(history: Sequence[TurnSummary]) -> str:
    lines: list[str] = []
    for entry in history:
        hint = (entry.hint or "").strip()
        lines.append(f"Turn {entry.turn} feedback: {hint or '(no feedback was given)'}")
        if not entry.code_found:
            lines.append(f"Turn {entry.turn} reply: no code block found; the program was kept.")
        elif not entry.changed:
            lines.append(f"Turn {entry.turn} reply: the program was returned unchanged.")
        else:
            lines.append(f"Turn {entry.turn} reply: a revised program (shown below if latest).")
    return "\n".join(lines)


def turn_prompt(
    instance: Instance, program: str, hint: str | None, history: Sequence[TurnSummary] = ()
) -> list[Message]:
    """Turn t ≥ 1: the problem, the current program, this turn's hint and the history.

    ``hint`` is ``None`` or empty for a no-hint turn (a baseline, or an omitted hint).
    """
    parts = _task(instance)
    if history:
        parts.append(f"## Earlier turns\n{_history(history)}")
    parts.append(f"## Current program\n{fenced(program)}")
    hint = (hint or "").strip()
    if hint:
        parts.append(
            "## Feedback\nThe current program still fails some hidden tests. Feedback "
            f"about one group of failures:\n{hint}"
        )
    else:
        parts.append(
            "## Feedback\nThe current program may still fail some hidden tests; no further "
            "feedback is available. Check it against the problem statement."
        )
    parts.append("Revise the program. " + _contract(instance))
    parts.append(_answer_format())
    return [
        Message(role="system", content=_SYSTEM),
        Message(role="user", content="\n\n".join(parts)),
    ]
