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
from .docstrings import strip_docstrings, without_docstring

__all__ = ["PromptParts", "TurnSummary", "fence_for", "fenced", "initial_prompt", "turn_prompt"]

_PERSONA = "You are an expert Python programmer."
_SYSTEM = (
    f"{_PERSONA} You repair programs so that they solve the "
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


class PromptParts(msgspec.Struct, frozen=True, kw_only=True):
    """Which optional parts of the candidate's prompt are shown (FeedbackEval's RQ4
    ablations, chosen by :func:`..styles.prompt_parts`). They are left out here, where the
    prompt is assembled, never cut out of the finished text afterwards: a program, a hint
    or a context may itself hold a line that looks like a section heading."""

    #: the project context (``nocontext`` drops it)
    context: bool = True
    #: the earlier turns' feedback and outcomes (``nohistory`` drops them)
    history: bool = True
    #: the interface contract and the answer format (``noguidelines`` drops them)
    guidelines: bool = True
    #: the problem's docstring, and the program's (``nodocstring`` drops them, seed 001 §7)
    docstring: bool = True
    #: the persona sentence of the prompt (``persona`` drops it, seed 001 §7: "Excluding
    #: the persona prompt")
    persona: bool = True


ALL_PARTS = PromptParts()


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


def _task(instance: Instance, parts: PromptParts) -> list[str]:
    """The problem, then the project context when the instance has one (FeedbackEval's
    "@@Context" part of its repair prompt, Fig. 5)."""
    problem = instance.problem.strip() if parts.docstring else without_docstring(instance.problem)
    out = [f"## Problem\n{problem}"] if problem else []
    if parts.context and instance.context.strip():
        out.append(f"## Context\n{instance.context.strip()}")
    return out


def _system(parts: PromptParts) -> Message:
    return Message(role="system", content=_SYSTEM if parts.persona else _SYSTEM.removeprefix(_PERSONA).strip())


def _program(code: str, parts: PromptParts) -> str:
    return fenced(code if parts.docstring else strip_docstrings(code))


def initial_prompt(instance: Instance, parts: PromptParts = ALL_PARTS) -> list[Message]:
    """Turn 0: the problem (and its project context) and the buggy program, with no hint."""
    ask = "The program above may be incorrect. Repair it so that it solves the problem."
    user = "\n\n".join(
        (
            *_task(instance, parts),
            f"## Program\n{_program(instance.buggy, parts)}",
            *((ask + " " + _contract(instance), _answer_format()) if parts.guidelines else (ask,)),
        )
    )
    return [_system(parts), Message(role="user", content=user)]


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
    instance: Instance, program: str, hint: str | None, history: Sequence[TurnSummary] = (),
    parts: PromptParts = ALL_PARTS,
) -> list[Message]:
    """Turn t ≥ 1: the problem, the current program, this turn's hint and the history.

    ``hint`` is ``None`` or empty for a no-hint turn (a baseline, or an omitted hint).
    """
    sections = _task(instance, parts)
    if history and parts.history:
        sections.append(f"## Earlier turns\n{_history(history)}")
    sections.append(f"## Current program\n{_program(program, parts)}")
    hint = (hint or "").strip()
    if hint:
        sections.append(
            "## Feedback\nThe current program still fails some hidden tests. Feedback "
            f"about one group of failures:\n{hint}"
        )
    else:
        sections.append(
            "## Feedback\nThe current program may still fail some hidden tests; no further "
            "feedback is available. Check it against the problem statement."
        )
    if parts.guidelines:
        sections.append("Revise the program. " + _contract(instance))
        sections.append(_answer_format())
    else:
        sections.append("Revise the program.")
    return [_system(parts), Message(role="user", content="\n\n".join(sections))]
