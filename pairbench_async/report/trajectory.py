"""The input of the trajectory metrics: one episode's pass/fail history, validated.

A :class:`Trajectory` is a self-contained description of one episode (which tests passed
after each turn, which scenario each hint targeted, at which level), so that metrics do
not depend on how records are stored: the record store or the report turns its records
into trajectories and hands them to :mod:`.trajectory_metrics` and :mod:`.metrics`. It
is a module of its own because every invariant the metric formulas rely on (turns
numbered without a gap, passing sets inside T, each target G_t inside F_{t-1}) is
checked here, once, on construction and on decoding. Pure: no I/O, no clock, no
randomness.
"""

from __future__ import annotations

from typing import Final

import msgspec

__all__ = [
    "MAX_LEVEL",
    "Trajectory",
    "TurnOutcome",
]

#: The deepest hint level (Table II: L1 symptom ... L6 repair direction).
MAX_LEVEL: Final = 6


class TurnOutcome(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What turn ``turn`` of an episode targeted and which hidden tests passed after it.

    ``passed`` is P_t. A hinted PAIR-BENCH turn names its scenario: ``target_id`` (the
    scenario's identity, stable across turns within the episode), ``target_tests`` (G_t,
    the scenario's failing tests when it was selected, a non-empty subset of F_{t-1})
    and ``level`` (the hint level 1..6 given at this turn). Turn 0 and baseline turns
    (no-hint, vanilla feedback) have no target: the three fields are all ``None``.
    Constructing or decoding an inconsistent turn raises ``ValueError`` (decoding:
    ``msgspec.ValidationError``).
    """

    turn: int
    passed: frozenset[str]
    target_id: str | None = None
    target_tests: list[str] | None = None
    level: int | None = None
    #: the sampled representatives of G_t the hint was grounded in ("up to m representative
    #: failing test cases"); None when not recorded. Only the second HCC reading uses it.
    shown_tests: list[str] | None = None

    def __post_init__(self) -> None:
        if self.turn < 0:
            raise ValueError(f"turn must be >= 0, got {self.turn}")
        given = (self.target_id is not None, self.target_tests is not None, self.level is not None)
        if any(given) and not all(given):
            raise ValueError(
                f"turn {self.turn}: target_id, target_tests and level go together or not at all"
            )
        if self.target_id is None:
            if self.shown_tests is not None:
                raise ValueError(f"turn {self.turn}: shown tests without a target")
            return
        if self.turn == 0:
            raise ValueError("turn 0 is the zero-hint repair and has no target")
        if self.level is not None and not 1 <= self.level <= MAX_LEVEL:
            raise ValueError(f"turn {self.turn}: level must be in 1..{MAX_LEVEL}, got {self.level}")
        if not self.target_tests:
            raise ValueError(f"turn {self.turn}: a targeted scenario has at least one test")
        if self.shown_tests is not None and not set(self.shown_tests) <= set(self.target_tests):
            raise ValueError(f"turn {self.turn}: shown tests lie outside the targeted scenario")


class Trajectory(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One episode of one model on one instance: turn 0 first, then turns 1..tau in order.

    ``test_ids`` is the whole hidden suite T. ``protocol`` (e.g. ``"pairbench"``,
    ``"vanilla"``, ``"nohint"``) and ``run`` (the repeated-run index) only group
    trajectories; the metrics read ``test_ids`` and ``turns``. Validation on
    construction and decoding: T is non-empty without duplicates, turns are numbered
    0, 1, 2, ... with no gap, every passing set lies in T, and every target lies in the
    failing set of the turn before (G_t subset of F_{t-1}).
    """

    instance_id: str
    model: str
    protocol: str | None = None
    run: int = 0
    test_ids: list[str]
    turns: list[TurnOutcome]
    #: turn 0 is the erroneous program as given, not an unhinted repair (FeedbackEval's
    #: protocols): InitialFix is undefined for it, and Repair@k counts k feedback rounds
    given_start: bool = False

    def __post_init__(self) -> None:
        where = f"trajectory {self.instance_id!r} ({self.model})"
        tests = frozenset(self.test_ids)
        if not tests:
            raise ValueError(f"{where}: the hidden test suite is empty")
        if len(tests) != len(self.test_ids):
            raise ValueError(f"{where}: duplicate test ids")
        if not self.turns:
            raise ValueError(f"{where}: no turns (turn 0 is required)")
        failing_before: frozenset[str] = frozenset()
        for index, outcome in enumerate(self.turns):
            if outcome.turn != index:
                raise ValueError(f"{where}: turn {outcome.turn} at position {index}")
            passed = frozenset(outcome.passed)
            if not passed <= tests:
                raise ValueError(f"{where}: turn {index} passes tests outside T")
            if (
                outcome.target_tests is not None
                and not frozenset(outcome.target_tests) <= failing_before
            ):
                raise ValueError(
                    f"{where}: turn {index} targets tests that did not fail at turn {index - 1}"
                )
            failing_before = tests - passed
