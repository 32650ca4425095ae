"""The progressive and adaptive hint policy (Algorithm 1 of seed 000) as a state machine.

Each turn the caller asks :func:`plan` what to hint (or whether to stop), runs the hint
and the candidate's revision, and reports which tests pass with :func:`observe`. The
whole policy memory is a :class:`PolicyState` Struct, so a run can be resumed from its
records: decode the last state and call :func:`plan` again. It is pure: no I/O, and its
only randomness is the seeded sampling of representatives.

Resolutions of what the paper leaves open (``docs/PROTOCOL.md`` states them too):

* **Scenario identity.** A scenario is its grouping level and signature key (hence its
  ``id``) together with its test set. Once selected, a scenario stays the target until
  it is completed or deferred (the paper's "continues on the same scenario"); on each
  later turn its target set G_t is the tests *of its original selection* that failed on
  the previous turn. Regrouping does not move the target; tests that newly fail are
  grouped and selected later.
* **Completion** is "G_t ∩ F_t = ∅" (Algorithm 1, line 12): every targeted test passes.
  The completed scenario is stored with G_t.
* **Deferral** stores the scenario with its original selection. A regrouped scenario is
  *not selectable* when every one of its tests belongs to deferred scenarios whose keys
  are compatible with its own (equal once both keys are cut down to the coarser of the
  two grouping levels). Same id with the same or a subset of tests therefore stays
  deferred, and so does a back-off regrouping of deferred regions; a scenario that
  gained a test no deferred region held is a changed region and is selectable again.
* **Reopening.** A completed scenario any of whose tests fails after a later revision
  leaves ``completed`` (its id is appended to ``reopened``); its failing tests are
  regrouped like any others and it gets a fresh per-scenario turn budget if selected.
* **ℓ after deferral** stays where it is by default (``after_deferral="stay"``):
  Algorithm 1 changes ℓ only on success (−1) and on a non-deferring failure (+1), and
  the text's ``min(6, ℓ+1)`` is consistent with that since the +1 branch is only taken
  below the top level. The next scenario thus starts at the depth the model last needed.
  ``"escalate"`` (the staircase reading: any failure is +1, capped) and ``"reset"``
  (back to L1) are options (``run --after-deferral``, a ``--sweep`` axis).
* **β** counts the consecutive turns of one selection (an *attempt*): deferral when
  ℓ = ``max_level`` or the attempt has used ``scenario_turns`` turns.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Literal

import msgspec

from ..core.errors import ConfigError
from ..core.types import TestResult
from .hints import EvidenceReading
from .scenarios import (
    Grouping,
    GroupingLevel,
    Scenario,
    ScenarioConfig,
    group_failures,
    keys_compatible,
    sample_representatives,
    with_tests,
)
from .shapes import Shape

__all__ = [
    "AfterDeferral",
    "Attempt",
    "AttemptOutcome",
    "Plan",
    "PolicyConfig",
    "PolicyState",
    "Stop",
    "StopReason",
    "is_deferred",
    "observe",
    "plan",
    "selectable",
    "start",
]

StopReason = Literal["all_pass", "nothing_selectable", "budget"]
AfterDeferral = Literal["stay", "escalate", "reset"]
AttemptOutcome = Literal["open", "completed", "deferred", "unresolved"]


class PolicyConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Policy parameters: α (``turns``), β (``scenario_turns``), the top hint level."""

    turns: int = 10
    scenario_turns: int = 3
    max_level: int = 6
    after_deferral: AfterDeferral = "stay"
    scenarios: ScenarioConfig = ScenarioConfig()
    #: what the feedback model sees of the programs (:data:`.hints.EvidenceReading`)
    evidence_reading: EvidenceReading = "section-iv"

    def __post_init__(self) -> None:
        if self.turns < 0:
            raise ConfigError(f"turns (alpha) must be >= 0, got {self.turns}")
        if self.scenario_turns < 1:
            raise ConfigError(f"scenario_turns (beta) must be >= 1, got {self.scenario_turns}")
        if not 1 <= self.max_level <= 6:
            raise ConfigError(f"max_level must be in 1..6, got {self.max_level}")


class Attempt(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One selection of a scenario and the turns spent on it until it ended.

    ``scenario`` is the scenario as selected (its original test set); ``levels`` the
    hint level of each of its turns; ``closed_level`` the level of the completing turn.
    ``unresolved`` marks an attempt still open when the episode stopped.
    """

    scenario: Scenario
    first_turn: int
    turns: int = 0
    levels: tuple[int, ...] = ()
    outcome: AttemptOutcome = "open"
    closed_level: int | None = None


class PolicyState(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Everything the policy remembers; ``turn`` is the number of hinted turns used."""

    level: int = 1
    turn: int = 0
    completed: tuple[Scenario, ...] = ()
    deferred: tuple[Scenario, ...] = ()
    attempts: tuple[Attempt, ...] = ()
    reopened: tuple[str, ...] = ()
    stop: StopReason | None = None

    @property
    def target(self) -> Attempt | None:
        """The open attempt, if a scenario is being worked on."""
        if self.attempts and self.attempts[-1].outcome == "open":
            return self.attempts[-1]
        return None

    @property
    def scenario_turns(self) -> dict[str, int]:
        """Turns used per scenario id, summed over all its attempts."""
        used: dict[str, int] = {}
        for attempt in self.attempts:
            used[attempt.scenario.id] = used.get(attempt.scenario.id, 0) + attempt.turns
        return used


class Plan(msgspec.Struct, frozen=True, kw_only=True, tag="plan"):
    """What turn ``turn`` does: a level-``level`` hint on ``scenario`` (G_t).

    ``representatives`` are the sampled tests the hint is grounded in; ``grouping`` is
    the level the failing set was grouped at this turn, over ``scenario_count`` groups.
    """

    turn: int
    level: int
    scenario: Scenario
    representatives: tuple[str, ...]
    continued: bool
    grouping: GroupingLevel
    scenario_count: int


class Stop(msgspec.Struct, frozen=True, kw_only=True, tag="stop"):
    """The episode ends after ``turns`` hinted turns, for ``reason``."""

    reason: StopReason
    turns: int


def start() -> PolicyState:
    """The initial state: ℓ = 1, nothing completed or deferred, no turn used."""
    return PolicyState()


def is_deferred(state: PolicyState, scenario: Scenario) -> bool:
    """Whether every test of ``scenario`` lies in compatible deferred scenarios."""
    covered: set[str] = set()
    for deferred in state.deferred:
        if keys_compatible(scenario, deferred):
            covered.update(deferred.tests)
    return bool(scenario.tests) and set(scenario.tests) <= covered


def selectable(state: PolicyState, grouping: Grouping) -> list[Scenario]:
    """The grouping's selectable scenarios, in selection order."""
    return [scenario for scenario in grouping.scenarios if not is_deferred(state, scenario)]


def _turn_seed(seed: int, turn: int) -> int:
    digest = hashlib.sha256(f"{seed}:{turn}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def _reopen(state: PolicyState, failing: Callable[[str], bool]) -> PolicyState:
    kept: list[Scenario] = []
    reopened = list(state.reopened)
    for scenario in state.completed:
        if any(failing(test) for test in scenario.tests):
            reopened.append(scenario.id)
        else:
            kept.append(scenario)
    if len(kept) == len(state.completed):
        return state
    return msgspec.structs.replace(state, completed=tuple(kept), reopened=tuple(reopened))


def _halt(state: PolicyState, reason: StopReason) -> tuple[PolicyState, Stop]:
    attempts = state.attempts
    if state.target is not None:
        attempts = (*attempts[:-1], msgspec.structs.replace(attempts[-1], outcome="unresolved"))
    state = msgspec.structs.replace(state, stop=reason, attempts=attempts)
    return state, Stop(reason=reason, turns=state.turn)


def plan(
    config: PolicyConfig,
    state: PolicyState,
    failing: Iterable[str],
    results: Mapping[str, TestResult],
    traces: Mapping[str, Sequence[int]],
    shapes: Mapping[str, Shape],
    seed: int,
) -> tuple[PolicyState, Plan | Stop]:
    """Decide turn ``state.turn + 1`` from F_{t-1} (``failing``) and its results.

    Returns the state to keep and the decision. A :class:`Stop` is final: the state
    records its reason and further calls return it again. A new selection opens an
    :class:`Attempt` in the returned state.
    """
    if state.stop is not None:
        return state, Stop(reason=state.stop, turns=state.turn)
    failing_set = frozenset(failing)
    state = _reopen(state, failing_set.__contains__)
    if not failing_set:
        return _halt(state, "all_pass")
    if state.turn >= config.turns:
        return _halt(state, "budget")
    turn = state.turn + 1
    grouping = group_failures(failing_set, results, traces, shapes, config.scenarios)
    target = state.target
    if target is not None:
        still_failing = failing_set.intersection(target.scenario.tests)
        if not still_failing:
            raise ConfigError(
                f"turn {turn}: scenario {target.scenario.id} is the open target but none of "
                "its tests fails; the failing set disagrees with the last observe()"
            )
        scenario = with_tests(target.scenario, still_failing, traces)
        continued = True
    else:
        candidates = selectable(state, grouping)
        if not candidates:
            return _halt(state, "nothing_selectable")
        scenario = candidates[0]
        continued = False
        attempt = Attempt(scenario=scenario, first_turn=turn)
        state = msgspec.structs.replace(state, attempts=(*state.attempts, attempt))
    representatives = sample_representatives(
        scenario, config.scenarios.representatives, _turn_seed(seed, turn)
    )
    decision = Plan(
        turn=turn,
        level=state.level,
        scenario=scenario,
        representatives=representatives,
        continued=continued,
        grouping=grouping.level,
        scenario_count=len(grouping.scenarios),
    )
    return state, decision


def observe(
    config: PolicyConfig, state: PolicyState, decision: Plan, passed_after: Iterable[str]
) -> PolicyState:
    """Apply Algorithm 1's update after the turn ``decision`` planned was evaluated.

    ``passed_after`` is P_t, the tests passing after the revision. Completed: ℓ =
    max(1, ℓ−1). Else deferred when ℓ is the top level or the attempt used β turns
    (ℓ per ``after_deferral``). Else ℓ+1 on the same scenario. Completed scenarios
    with a failing test are reopened.
    """
    target = state.target
    if state.stop is not None:
        raise ConfigError(f"the episode already stopped ({state.stop})")
    if target is None or decision.turn != state.turn + 1:
        raise ConfigError(f"plan for turn {decision.turn} does not belong to this state")
    if decision.scenario.id != target.scenario.id or decision.level != state.level:
        raise ConfigError(f"plan for turn {decision.turn} does not match the open target")
    passed = frozenset(passed_after)
    state = _reopen(state, lambda test: test not in passed)
    turns = target.turns + 1
    levels = (*target.levels, decision.level)
    completed = state.completed
    deferred = state.deferred
    level = state.level
    if passed.issuperset(decision.scenario.tests):
        attempt = msgspec.structs.replace(
            target, turns=turns, levels=levels, outcome="completed", closed_level=decision.level
        )
        completed = (*completed, decision.scenario)
        level = max(1, level - 1)
    elif level >= config.max_level or turns >= config.scenario_turns:
        attempt = msgspec.structs.replace(target, turns=turns, levels=levels, outcome="deferred")
        deferred = (*deferred, target.scenario)
        if config.after_deferral == "escalate":
            level = min(config.max_level, level + 1)
        elif config.after_deferral == "reset":
            level = 1
    else:
        attempt = msgspec.structs.replace(target, turns=turns, levels=levels)
        level = level + 1
    return msgspec.structs.replace(
        state,
        level=level,
        turn=decision.turn,
        completed=completed,
        deferred=deferred,
        attempts=(*state.attempts[:-1], attempt),
    )
