"""The PAIR-BENCH metrics of one trajectory: per turn, then per instance.

These are the metric definitions of seed 000, Section IV-E (DESIGN.md section 3,
"Metrics"), with every edge-case decision the paper leaves open; ``docs/METRICS.md``
states them in words. Each one is a pure function of one :class:`~.trajectory.Trajectory`,
kept apart from the model-level averages of :mod:`.metrics` so that a new metric is one
function here plus its column. Two layers, each public so reports can show any of them:

* per turn (``t = 1..tau``): :func:`targeted_repair_success`, :func:`broader_repair_gain`,
  :func:`behaviour_preservation`, :func:`repair_rate`, :func:`preservation_rate`;
* per instance: :func:`progress_monotonicity`, :func:`hint_efficiency`,
  :func:`gap_closure`, :func:`turns_to_fix`, :func:`hinted_closed_coverage`, and
  :func:`instance_metrics`, which averages the turn-level ones within the instance.

A value that is undefined (an empty denominator) is ``None``, never NaN, and is left out
of every average; an average over nothing is ``None`` too. Sums use :func:`math.fsum`, so
a mean does not depend on the order of its inputs and equal inputs give equal floats
(rankings compare them exactly). Pure: synchronous, no I/O, no clock, no randomness.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import msgspec

from .trajectory import MAX_LEVEL, Trajectory

__all__ = [
    "InstanceMetrics",
    "behaviour_preservation",
    "broader_repair_gain",
    "first_fix_turn",
    "gap_closure",
    "hint_efficiency",
    "hinted_closed_coverage",
    "hinted_closed_coverage_shown",
    "instance_metrics",
    "pass_rates",
    "pass_retention",
    "preservation_rate",
    "progress_monotonicity",
    "repair_rate",
    "scenario_closures",
    "targeted_repair_success",
    "turns_to_fix",
]


# --------------------------------------------------------------------------- per turn


def last_turn(traj: Trajectory) -> int:
    """The last evaluated turn."""
    return len(traj.turns) - 1


def _passed(traj: Trajectory, t: int) -> frozenset[str]:
    return frozenset(traj.turns[t].passed)


def _failing(traj: Trajectory, t: int) -> frozenset[str]:
    return frozenset(traj.test_ids) - _passed(traj, t)


def _target(traj: Trajectory, t: int) -> frozenset[str] | None:
    tests = traj.turns[t].target_tests
    return None if tests is None else frozenset(tests)


def _check_turn(traj: Trajectory, t: int) -> None:
    if not 1 <= t <= last_turn(traj):
        raise ValueError(f"turn-level metrics are defined for t in 1..{last_turn(traj)}, got {t}")


def pass_rates(traj: Trajectory) -> list[float]:
    """p_0, ..., p_tau with p_t = |P_t| / |T|: the instance's pass-rate trajectory."""
    n = len(traj.test_ids)
    return [len(frozenset(turn.passed)) / n for turn in traj.turns]


def first_fix_turn(traj: Trajectory) -> int | None:
    """min{t : p_t = 1}, or ``None`` if no evaluated turn passes every test."""
    n = len(traj.test_ids)
    for outcome in traj.turns:
        if len(frozenset(outcome.passed)) == n:
            return outcome.turn
    return None


def targeted_repair_success(traj: Trajectory, t: int) -> float | None:
    """TRS_t = |G_t ∩ P_t| / |G_t|; ``None`` for a turn without a target."""
    _check_turn(traj, t)
    target = _target(traj, t)
    if target is None:
        return None
    return len(target & _passed(traj, t)) / len(target)


def broader_repair_gain(traj: Trajectory, t: int) -> float | None:
    """BRG_t = |(F_{t-1} \\ G_t) ∩ P_t| / |T|; ``None`` for a turn without a target."""
    _check_turn(traj, t)
    target = _target(traj, t)
    if target is None:
        return None
    return len((_failing(traj, t - 1) - target) & _passed(traj, t)) / len(traj.test_ids)


def behaviour_preservation(traj: Trajectory, t: int) -> float:
    """BP_t = 1 - |P_{t-1} ∩ F_t| / |T|: one minus the share of tests that regressed."""
    _check_turn(traj, t)
    return 1.0 - len(_passed(traj, t - 1) & _failing(traj, t)) / len(traj.test_ids)


def repair_rate(traj: Trajectory, t: int) -> float:
    """RepairRate_t = |F_{t-1} ∩ P_t| / |T| (seed 000, Section V-B: divided by |T|)."""
    _check_turn(traj, t)
    return len(_failing(traj, t - 1) & _passed(traj, t)) / len(traj.test_ids)


def preservation_rate(traj: Trajectory, t: int) -> float:
    """PreservationRate_t = 1 - |P_{t-1} ∩ F_t| / |T|: Table V's "Preserve. Rate".

    Seed 000, Section V-B defines only its companion, "the turn-level Repair Rate ...
    RepairRate_{i,t} = |F_{i,t-1} ∩ P_{i,t}| / |T_i|", normalised by the whole suite;
    and Table V's Preservation values equal Table III's Behavior Preservation (this
    formula) within 0.1 points for all eight models. So the same |T| normalisation,
    for every protocol, and never undefined. The ratio of previously passing tests
    kept is :func:`pass_retention`, under its own name.
    """
    _check_turn(traj, t)
    return 1.0 - len(_passed(traj, t - 1) & _failing(traj, t)) / len(traj.test_ids)


def pass_retention(traj: Trajectory, t: int) -> float | None:
    """PassRetention_t = |P_{t-1} ∩ P_t| / |P_{t-1}|; ``None`` when P_{t-1} is empty.

    Not a paper metric (it was this package's PreservationRate until the paper's was
    matched): the share of the previously passing tests still passing, undefined with
    nothing to retain. Library users may still want it; the reports do not show it.
    """
    _check_turn(traj, t)
    before = _passed(traj, t - 1)
    if not before:
        return None
    return len(before & _passed(traj, t)) / len(before)


# --------------------------------------------------------------------------- per instance


def progress_monotonicity(traj: Trajectory) -> float | None:
    """PMR = (1/tau) Σ_{t=1..tau} 1[p_t >= p_{t-1}]; ``None`` when tau = 0.

    Compares passing counts (integers), so equal pass rates are never split by rounding.
    """
    tau = last_turn(traj)
    if tau == 0:
        return None
    counts = [len(frozenset(turn.passed)) for turn in traj.turns]
    kept = sum(1 for t in range(1, tau + 1) if counts[t] >= counts[t - 1])
    return kept / tau


def scenario_closures(traj: Trajectory) -> dict[str, int | None]:
    """Each attempted scenario's closing level, or ``None`` if it ended unresolved.

    A scenario is a distinct ``target_id`` within the episode; it is attempted when some
    turn targets it. Its outcome is decided by its *last* targeted turn t: closed at
    level ℓ_t if every test of G_t passes after turn t (TRS_t = 1), else unresolved. So
    a scenario closed, reopened by a regression and closed again counts at the later
    level; one reopened and then left unresolved counts as unresolved; one closed and
    never targeted again stays closed (later regressions are BP's business). Keys are in
    order of first attempt.
    """
    outcome: dict[str, int | None] = {}
    for t in range(1, last_turn(traj) + 1):
        turn = traj.turns[t]
        target = _target(traj, t)
        if turn.target_id is None or target is None or turn.level is None:
            continue
        outcome[turn.target_id] = turn.level if target <= _passed(traj, t) else None
    return outcome


def hint_efficiency(traj: Trajectory) -> float | None:
    """HE = mean over attempted scenarios of (7 - ℓ_closed) if closed, else 0.

    ``None`` when no scenario was attempted (tau = 0, or a baseline without targets).
    Range [0, 6]: 6 means every scenario closed at L1.
    """
    closures = scenario_closures(traj)
    if not closures:
        return None
    scores = [0 if level is None else MAX_LEVEL + 1 - level for level in closures.values()]
    return sum(scores) / len(scores)


def gap_closure(traj: Trajectory) -> float | None:
    """GC = (b - p_0) / (1 - p_0) with b = max_{0<=t<=tau} p_t; ``None`` when p_0 = 1.

    b includes p_0, so GC is in [0, 1]; an initially failing instance with tau = 0 has
    GC = 0. It uses the best turn, not the last one.
    """
    n = len(traj.test_ids)
    counts = [len(frozenset(turn.passed)) for turn in traj.turns]
    if counts[0] == n:
        return None
    return (max(counts) - counts[0]) / (n - counts[0])


def turns_to_fix(traj: Trajectory) -> int | None:
    """min{t : p_t = 1} for an initially failing, eventually fixed instance, else ``None``."""
    first = first_fix_turn(traj)
    return None if first is None or first == 0 else first


def hinted_closed_coverage(traj: Trajectory) -> float | None:
    """HCC = |F_0 ∩ H ∩ P_tau| / |F_0|, H = the union of every targeted G_t.

    H holds every test of every scenario selected for a hint (all of G_t, not only the
    sampled representatives); P_tau is the passing set of the last evaluated turn.
    ``None`` when F_0 is empty or no turn had a target (no hinted scenario at all).
    """
    failing0 = _failing(traj, 0)
    hinted: set[str] = set()
    for t in range(1, last_turn(traj) + 1):
        target = _target(traj, t)
        if target is not None:
            hinted |= target
    if not failing0 or not hinted:
        return None
    return len(failing0 & hinted & _passed(traj, last_turn(traj))) / len(failing0)


def hinted_closed_coverage_shown(traj: Trajectory) -> float | None:
    """HCC under its other reading: H = the tests the hints were grounded in.

    Seed 000 §V-A.4 defines "H ... the set of failing tests selected for hints". The main
    HCC reads "selected" as the selected scenarios G_t; "the sampled tests" are the up to
    m representatives of G_t the feedback model was shown ("These sampled tests are used
    only for hint generation", §IV-D.1). This reading gives
    |F_0 ∩ (∪ shown_t) ∩ P_tau| / |F_0| ≤ HCC. ``None`` when F_0 is empty or no targeted
    turn recorded its shown tests.
    """
    failing0 = _failing(traj, 0)
    shown: set[str] = set()
    recorded = False
    for outcome in traj.turns[1:]:
        if outcome.shown_tests is not None:
            recorded = True
            shown |= set(outcome.shown_tests)
    if not failing0 or not recorded:
        return None
    return len(failing0 & shown & _passed(traj, last_turn(traj))) / len(failing0)


def mean_of_defined(values: Iterable[float | None]) -> float | None:
    """The mean of the defined values; ``None`` if there are none."""
    defined = [v for v in values if v is not None]
    if not defined:
        return None
    return math.fsum(defined) / len(defined)


class InstanceMetrics(msgspec.Struct, frozen=True, kw_only=True):
    """One instance's metrics: turn-level ones already averaged over its turns 1..tau.

    Every progress metric is ``None`` for an instance fixed at turn 0: it never enters
    the interactive stage, and the model-level averages run over initially failing
    instances only.
    """

    instance_id: str
    model: str
    protocol: str | None = None
    run: int = 0
    tau: int
    initially_fixed: bool
    fixed: bool
    #: turn 0 was the erroneous program as given (no unhinted repair: no InitialFix)
    given_start: bool = False
    pass_rates: list[float]
    TRS: float | None = None
    BRG: float | None = None
    BP: float | None = None
    PMR: float | None = None
    HE: float | None = None
    GC: float | None = None
    TurnsToFix: int | None = None
    HCC: float | None = None
    RepairRate: float | None = None
    PreservationRate: float | None = None
    HCCShown: float | None = None


def instance_metrics(traj: Trajectory) -> InstanceMetrics:
    """Every per-instance value of ``traj``: the first averaging stage."""
    tau = last_turn(traj)
    first = first_fix_turn(traj)
    base = InstanceMetrics(
        instance_id=traj.instance_id,
        model=traj.model,
        protocol=traj.protocol,
        run=traj.run,
        tau=tau,
        initially_fixed=first == 0,
        fixed=first is not None,
        pass_rates=pass_rates(traj),
        given_start=traj.given_start,
    )
    if first == 0:
        return base
    turns = range(1, tau + 1)
    return msgspec.structs.replace(
        base,
        TRS=mean_of_defined(targeted_repair_success(traj, t) for t in turns),
        BRG=mean_of_defined(broader_repair_gain(traj, t) for t in turns),
        BP=mean_of_defined(behaviour_preservation(traj, t) for t in turns),
        PMR=progress_monotonicity(traj),
        HE=hint_efficiency(traj),
        GC=gap_closure(traj),
        TurnsToFix=turns_to_fix(traj),
        HCC=hinted_closed_coverage(traj),
        RepairRate=mean_of_defined(repair_rate(traj, t) for t in turns),
        PreservationRate=mean_of_defined(preservation_rate(traj, t) for t in turns),
        HCCShown=hinted_closed_coverage_shown(traj),
    )
