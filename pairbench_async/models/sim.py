"""The seeded simulated candidate ``sim:SKILL``.

**sim:SKILL[?latency=S][&loop=P]** (``SimCandidate``), SKILL in [0, 1]. One call = one revision:

1. ``context.program`` and ``context.instance.reference`` are split into lines and
   diffed with ``difflib.SequenceMatcher(autojunk=False)``; every non-equal opcode is a
   hunk. A hunk *touches the target* when ``context.target_lines`` is non-empty and
   holds one of the hunk's reference lines (``j1+1..j2``; for a hunk the reference
   lacks, the reference lines on either side of the gap).
2. Hunks are visited in order, one uniform draw each; a hunk is replaced by the
   reference's lines with probability ``p = clamp(SKILL * f(level) * g, 0, 1)``, where
   ``f(None) = 0.10`` (turn 0 and no-hint turns), ``f(1..6) = 0.20, 0.30, 0.45, 0.60,
   0.80, 1.00`` and ``g = 1.5`` for a hunk touching the target, else ``g = 1``.
3. Then one more draw: with probability ``0.05 * (1 - SKILL)`` the revision regresses.
   If some region where the buggy program differs from the reference currently equals
   the reference (a fixed hunk, possibly fixed this very turn), one of them, chosen
   uniformly, gets the buggy program's version back; otherwise one non-blank line of
   a region equal to the reference, chosen uniformly, is deleted. Trajectories are
   therefore not monotone for SKILL < 1.

So ``sim:1.0`` fixes every hunk in one level-6 turn and ``sim:0.0`` only ever
regresses (5 % of calls). The generator is ``random.Random`` seeded with a SHA-256 of
(``context.seed``, turn, instance id, the model name without its ``?options``), so
adding latency never changes a trajectory. The reply is one line of prose and the
full program in a fenced python block (so the code-extraction path is exercised).
``?latency=S`` sleeps ``S * jitter`` seconds, jitter uniform in [0.8, 1.2] from a
second seeded generator; ``latency_ms`` reports that simulated delay, not the wall
clock, so records stay identical across runs.
``?loop=P`` (P in [0, 1]) makes a revision a looping program with probability P, drawn
from a third seeded generator: ``LOOP_LINE`` (``while True: pass``) first, so every test
of it runs to its time limit. The next call revises the program without that line, so
apart from the looping turns a trajectory is the one without ``?loop`` (the workload of
``bench.loop_sweep``).
"""

from __future__ import annotations

import asyncio
import math
import random
from collections.abc import Sequence
from typing import Final, Literal

import msgspec

from ..core.errors import ClientError, ConfigError
from ..core.types import Completion, Message
from ..protocol.context import TurnContext, estimate_usage, stable_seed
from ..protocol.linediff import diff_opcodes, reference_lines
from ..protocol.prompts import fenced
from .interface import ContextOnly

__all__ = [
    "LEVEL_FACTORS",
    "LOOP_LINE",
    "MAX_LATENCY",
    "REGRESSION_RATE",
    "TARGET_FACTOR",
    "SimCandidate",
    "SimRevision",
]

#: f(level) of the apply probability; ``None`` is turn 0 or a no-hint turn.
LEVEL_FACTORS: Final[dict[int | None, float]] = {
    None: 0.10,
    1: 0.20,
    2: 0.30,
    3: 0.45,
    4: 0.60,
    5: 0.80,
    6: 1.00,
}
#: g for a hunk whose reference lines meet the targeted scenario's trace.
TARGET_FACTOR: Final = 1.5
#: Regression probability per call is ``REGRESSION_RATE * (1 - skill)``.
REGRESSION_RATE: Final = 0.05
_JITTER: Final = (0.8, 1.2)
MAX_LATENCY: Final = 3600.0


Regression = Literal["", "revert", "drop"]


class SimRevision(msgspec.Struct, frozen=True, kw_only=True):
    """What one simulated revision did: the program, the hunks it found and applied,
    and the regression it made ("" for none)."""

    program: str
    hunks: int
    applied: int
    regression: Regression = ""


def _text(lines: Sequence[str]) -> str:
    return "\n".join(lines) + "\n" if lines else ""


#: Diffs a sim model keeps (a few MB at most).
_DIFF_MEMO: Final = 4096


def _check_skill(skill: float) -> float:
    if not (isinstance(skill, (int, float)) and math.isfinite(skill) and 0.0 <= skill <= 1.0):
        raise ConfigError(f"sim skill must be a number in [0, 1], got {skill!r}")
    return float(skill)


def _check_latency(latency: float) -> float:
    if not (isinstance(latency, (int, float)) and math.isfinite(latency)):
        raise ConfigError(f"sim latency must be a finite number of seconds, got {latency!r}")
    if not 0.0 <= latency <= MAX_LATENCY:
        raise ConfigError(f"sim latency must be in [0, {MAX_LATENCY:g}] seconds, got {latency}")
    return float(latency)


class SimCandidate(ContextOnly):
    """The seeded simulated candidate ``sim:SKILL``; see the module docstring."""

    def __init__(self, skill: float, *, latency: float = 0.0, loop: float = 0.0,
                 name: str | None = None) -> None:
        self.skill = _check_skill(skill)
        self.latency = _check_latency(latency)
        if not (isinstance(loop, (int, float)) and 0.0 <= loop <= 1.0):
            raise ConfigError(f"sim loop must be a probability in [0, 1], got {loop!r}")
        self.loop = float(loop)
        self.name = name if name is not None else f"sim:{self.skill:g}"
        #: The name without options: what seeds the draws.
        self.key = self.name.split("?", 1)[0]
        self._closed = False
        #: (program, reference) -> opcodes: episodes of one instance revisit the same
        #: programs (runs, protocols, resumed turns); bounded, cleared when full
        self._diffs: dict[tuple[str, str], Sequence[tuple[str, int, int, int, int]]] = {}

    def _diff(self, program: str, reference: str) -> Sequence[tuple[str, int, int, int, int]]:
        key = (program, reference)
        found = self._diffs.get(key)
        if found is None:
            if len(self._diffs) >= _DIFF_MEMO:
                self._diffs.clear()
            found = self._diffs[key] = tuple(diff_opcodes(program.splitlines(), reference.splitlines()))
        return found

    def __repr__(self) -> str:
        return (f"SimCandidate(skill={self.skill}, latency={self.latency}, loop={self.loop}, "
                f"name={self.name!r})")

    def revise(self, context: TurnContext) -> SimRevision:
        """The revised program for ``context`` (pure and deterministic)."""
        rng = random.Random(
            stable_seed("sim", context.seed, context.turn, context.instance.id, self.key)
        )
        reference = context.instance.reference.splitlines()
        # a loop this candidate wrote in an earlier turn is gone again: only the turns
        # drawn below loop, and every other program is the one sim:SKILL would write
        program = _without_loop(context.program)
        current = program.splitlines()
        factor = LEVEL_FACTORS.get(context.level)
        if factor is None:
            raise ConfigError(f"hint level must be None or 1..6, got {context.level!r}")
        targets = set(context.target_lines)
        out: list[str] = []
        hunks = applied = 0
        for tag, i1, i2, j1, j2 in self._diff(program, context.instance.reference):
            if tag == "equal":
                out.extend(current[i1:i2])
                continue
            hunks += 1
            touches = bool(targets & reference_lines(j1, j2, len(reference)))
            p = min(1.0, max(0.0, self.skill * factor * (TARGET_FACTOR if touches else 1.0)))
            if rng.random() < p:
                out.extend(reference[j1:j2])
                applied += 1
            else:
                out.extend(current[i1:i2])
        regression: Regression = ""
        if rng.random() < REGRESSION_RATE * (1.0 - self.skill):
            out, regression = _regress(out, reference, context.instance.buggy.splitlines(), rng)
        text = _text(out)
        if self.loop > 0 and random.Random(
                stable_seed("loop", context.seed, context.turn, context.instance.id, self.key)
        ).random() < self.loop:
            text = LOOP_LINE + text
        return SimRevision(program=text, hunks=hunks, applied=applied, regression=regression)

    async def complete_in_context(self, messages: Sequence[Message], context: TurnContext) -> Completion:
        """Revise ``context.program``."""
        if self._closed:
            raise ClientError(f"{self!r} is closed")
        revision = self.revise(context)
        changed = sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2
                      in self._diff(context.program, revision.program) if tag != "equal")
        if changed:
            prose = f"I revised the program ({changed} line{'s' if changed != 1 else ''} changed)."
        else:
            prose = "I reviewed the program and kept it as it is."
        text = f"{prose}\n\n{fenced(revision.program)}\n"
        delay = 0.0
        if self.latency > 0:
            jitter = random.Random(
                stable_seed("latency", context.seed, context.turn, context.instance.id, self.key)
            ).uniform(*_JITTER)
            delay = self.latency * jitter
        await asyncio.sleep(delay)
        return Completion(
            text=text,
            model=self.name,
            usage=estimate_usage(messages, text),
            latency_ms=delay * 1000.0,
            attempts=1,
        )

    async def aclose(self) -> None:
        """Mark the model closed; nothing else is held."""
        self._closed = True


#: What ``?loop=P`` puts first in a looping revision: every test of it runs until its
#: time limit (the module's first statement, before any input is read).
LOOP_LINE: Final = "while True:  # sim: loop\n    pass\n"


def _without_loop(program: str) -> str:
    return program[len(LOOP_LINE):] if program.startswith(LOOP_LINE) else program


def _regress(
    lines: list[str], reference: list[str], buggy: list[str], rng: random.Random
) -> tuple[list[str], Regression]:
    """Undo one fixed hunk (back to the buggy version), else drop one reference-equal line."""
    position: dict[int, int] = {}
    for tag, i1, i2, j1, _j2 in diff_opcodes(lines, reference):
        if tag == "equal":
            position.update((j1 + k, i1 + k) for k in range(i2 - i1))
    fixed: list[tuple[int, int, list[str]]] = []
    for tag, j1, j2, k1, k2 in diff_opcodes(reference, buggy):
        if tag == "equal":
            continue
        if j2 > j1:
            spots = [position.get(j) for j in range(j1, j2)]
            if None in spots:
                continue
            first = spots[0]
            assert first is not None
            if spots == list(range(first, first + len(spots))):
                fixed.append((first, first + len(spots), buggy[k1:k2]))
        else:
            before = position.get(j1 - 1) if j1 > 0 else -1
            after = position.get(j1) if j1 < len(reference) else len(lines)
            if before is not None and after is not None and after == before + 1:
                fixed.append((after, after, buggy[k1:k2]))
    if fixed:
        start, stop, replacement = rng.choice(fixed)
        return lines[:start] + replacement + lines[stop:], "revert"
    equal = [position[j] for j in sorted(position) if reference[j].strip()]
    if not equal:
        return lines, ""
    drop = rng.choice(equal)
    return lines[:drop] + lines[drop + 1 :], "drop"
