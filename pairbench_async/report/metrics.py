"""PAIR-BENCH trajectory metrics: one episode's pass/fail history in, progress metrics out.

This module owns the metric definitions of seed 000, Section IV-E (DESIGN.md section 3,
"Metrics") and every edge-case decision the paper leaves open; ``docs/METRICS.md`` states
them in words. It is part of the pure protocol core: synchronous, no I/O, no clock, no
randomness. Its input is a :class:`Trajectory`, a self-contained description of one
episode (which tests passed after each turn, which scenario each hint targeted, at
which level), so that metrics do not depend on how records are stored: the record
store or the report turns its records into trajectories and calls
:func:`compute_metrics` / :func:`metrics_by_model`.

Three layers, each public so reports can show any of them:

* per turn (``t = 1..tau``): :func:`targeted_repair_success`, :func:`broader_repair_gain`,
  :func:`behaviour_preservation`, :func:`repair_rate`, :func:`preservation_rate`;
* per instance: :func:`progress_monotonicity`, :func:`hint_efficiency`,
  :func:`gap_closure`, :func:`turns_to_fix`, :func:`hinted_closed_coverage`, and
  :func:`instance_metrics`, which averages the turn-level ones within the instance;
* per model: :func:`aggregate` / :func:`compute_metrics` average across initially failing
  instances (InitialFix and FinalFix across all instances).

A value that is undefined (an empty denominator) is ``None``, never NaN, and is left out
of every average; an average over nothing is ``None`` too. Sums use :func:`math.fsum`, so
a mean does not depend on the order of its inputs and equal inputs give equal floats
(rankings compare them exactly).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Final

import msgspec

__all__ = [
    "MAX_LEVEL",
    "METRIC_NAMES",
    "ClosureDistribution",
    "InstanceMetrics",
    "ModelMetrics",
    "Trajectory",
    "TurnOutcome",
    "aggregate",
    "behaviour_preservation",
    "broader_repair_gain",
    "closure_distribution",
    "compute_metrics",
    "cumulative_final_fix",
    "first_fix_turn",
    "gap_closure",
    "group_key",
    "hint_efficiency",
    "hinted_closed_coverage",
    "instance_metrics",
    "metrics_by_model",
    "metrics_by_run",
    "pass_rate_trajectories",
    "pass_rates",
    "preservation_rate",
    "progress_monotonicity",
    "repair_at_k",
    "repair_rate",
    "scenario_closures",
    "targeted_repair_success",
    "turns_to_fix",
]

#: The deepest hint level (Table II: L1 symptom ... L6 repair direction).
MAX_LEVEL: Final = 6

#: The metrics of :class:`ModelMetrics`, in table order.
METRIC_NAMES: Final = (
    "InitialFix",
    "TRS",
    "BRG",
    "BP",
    "PMR",
    "HE",
    "GC",
    "FinalFix",
    "TurnsToFix",
    "HCC",
    "RepairRate",
    "PreservationRate",
)


# --------------------------------------------------------------------------- inputs


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

    def __post_init__(self) -> None:
        if self.turn < 0:
            raise ValueError(f"turn must be >= 0, got {self.turn}")
        given = (self.target_id is not None, self.target_tests is not None, self.level is not None)
        if any(given) and not all(given):
            raise ValueError(
                f"turn {self.turn}: target_id, target_tests and level go together or not at all"
            )
        if self.target_id is None:
            return
        if self.turn == 0:
            raise ValueError("turn 0 is the zero-hint repair and has no target")
        if self.level is not None and not 1 <= self.level <= MAX_LEVEL:
            raise ValueError(f"turn {self.turn}: level must be in 1..{MAX_LEVEL}, got {self.level}")
        if not self.target_tests:
            raise ValueError(f"turn {self.turn}: a targeted scenario has at least one test")


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


# --------------------------------------------------------------------------- per turn


def _tau(traj: Trajectory) -> int:
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
    if not 1 <= t <= _tau(traj):
        raise ValueError(f"turn-level metrics are defined for t in 1..{_tau(traj)}, got {t}")


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


def preservation_rate(traj: Trajectory, t: int) -> float | None:
    """PreservationRate_t = |P_{t-1} ∩ P_t| / |P_{t-1}|; ``None`` when P_{t-1} is empty.

    With nothing passing before the turn there is nothing to preserve; such a turn is
    left out of the instance's average rather than counted as 0 or 1.
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
    tau = _tau(traj)
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
    for t in range(1, _tau(traj) + 1):
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
    for t in range(1, _tau(traj) + 1):
        target = _target(traj, t)
        if target is not None:
            hinted |= target
    if not failing0 or not hinted:
        return None
    return len(failing0 & hinted & _passed(traj, _tau(traj))) / len(failing0)


def _mean(values: Iterable[float | None]) -> float | None:
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


def instance_metrics(traj: Trajectory) -> InstanceMetrics:
    """Every per-instance value of ``traj``: the first averaging stage."""
    tau = _tau(traj)
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
    )
    if first == 0:
        return base
    turns = range(1, tau + 1)
    return msgspec.structs.replace(
        base,
        TRS=_mean(targeted_repair_success(traj, t) for t in turns),
        BRG=_mean(broader_repair_gain(traj, t) for t in turns),
        BP=_mean(behaviour_preservation(traj, t) for t in turns),
        PMR=progress_monotonicity(traj),
        HE=hint_efficiency(traj),
        GC=gap_closure(traj),
        TurnsToFix=turns_to_fix(traj),
        HCC=hinted_closed_coverage(traj),
        RepairRate=_mean(repair_rate(traj, t) for t in turns),
        PreservationRate=_mean(preservation_rate(traj, t) for t in turns),
    )


# --------------------------------------------------------------------------- per model


class ModelMetrics(msgspec.Struct, frozen=True, kw_only=True):
    """The model-level metrics of one group of trajectories (a Table III row).

    Rates are fractions in [0, 1] (not percentages), HE is in [0, 6], TurnsToFix is a
    mean number of turns. ``None`` means undefined: no instance contributed a value
    (for example no initially failing instance, or no targeted turn at all).
    ``instances`` counts all episodes, ``initially_failing`` those with p_0 < 1 and
    ``fixed`` those with p_t = 1 at some turn (turn 0 included).
    """

    InitialFix: float | None = None
    TRS: float | None = None
    BRG: float | None = None
    BP: float | None = None
    PMR: float | None = None
    HE: float | None = None
    GC: float | None = None
    FinalFix: float | None = None
    TurnsToFix: float | None = None
    HCC: float | None = None
    RepairRate: float | None = None
    PreservationRate: float | None = None
    instances: int = 0
    initially_failing: int = 0
    fixed: int = 0


def aggregate(rows: Sequence[InstanceMetrics]) -> ModelMetrics:
    """The second averaging stage: across instances, each counted once.

    InitialFix and FinalFix average over all rows; every other metric over the
    initially failing rows that define it (TurnsToFix: those eventually fixed).
    """
    if not rows:
        return ModelMetrics()
    failing = [row for row in rows if not row.initially_fixed]
    n_fixed = sum(1 for row in rows if row.fixed)
    return ModelMetrics(
        InitialFix=sum(1 for row in rows if row.initially_fixed) / len(rows),
        TRS=_mean(row.TRS for row in failing),
        BRG=_mean(row.BRG for row in failing),
        BP=_mean(row.BP for row in failing),
        PMR=_mean(row.PMR for row in failing),
        HE=_mean(row.HE for row in failing),
        GC=_mean(row.GC for row in failing),
        FinalFix=n_fixed / len(rows),
        TurnsToFix=_mean(
            None if row.TurnsToFix is None else float(row.TurnsToFix) for row in failing
        ),
        HCC=_mean(row.HCC for row in failing),
        RepairRate=_mean(row.RepairRate for row in failing),
        PreservationRate=_mean(row.PreservationRate for row in failing),
        instances=len(rows),
        initially_failing=len(failing),
        fixed=n_fixed,
    )


def _check_unique(trajectories: Sequence[Trajectory]) -> None:
    seen: set[tuple[str, str | None, int, str]] = set()
    for traj in trajectories:
        key = (traj.model, traj.protocol, traj.run, traj.instance_id)
        if key in seen:
            raise ValueError(f"duplicate trajectory for {key}: each episode must appear once")
        seen.add(key)


def compute_metrics(trajectories: Iterable[Trajectory]) -> ModelMetrics:
    """The model-level metrics of ``trajectories`` (normally one model, protocol and run).

    Trajectories of several runs are pooled: each (run, instance) episode is one unit.
    The same episode given twice is a ``ValueError``.
    """
    items = list(trajectories)
    _check_unique(items)
    return aggregate([instance_metrics(traj) for traj in items])


def group_key(model: str, protocol: str | None) -> str:
    """The key of a (model, protocol) group: the model, then ``|protocol`` if one is given."""
    return model if protocol is None else f"{model}|{protocol}"


def _groups(trajectories: Iterable[Trajectory]) -> dict[str, list[Trajectory]]:
    groups: dict[str, list[Trajectory]] = {}
    for traj in trajectories:
        groups.setdefault(group_key(traj.model, traj.protocol), []).append(traj)
    return {key: groups[key] for key in sorted(groups)}


def metrics_by_model(trajectories: Iterable[Trajectory]) -> dict[str, ModelMetrics]:
    """:func:`compute_metrics` per :func:`group_key` (model, and protocol where given).

    Runs are pooled within a group; use :func:`metrics_by_run` for per-run tables.
    """
    return {key: compute_metrics(items) for key, items in _groups(trajectories).items()}


def metrics_by_run(trajectories: Iterable[Trajectory]) -> dict[int, dict[str, ModelMetrics]]:
    """``{run: metrics_by_model(that run's trajectories)}``, the input of run statistics."""
    runs: dict[int, list[Trajectory]] = {}
    for traj in trajectories:
        runs.setdefault(traj.run, []).append(traj)
    return {run: metrics_by_model(runs[run]) for run in sorted(runs)}


# --------------------------------------------------------------------------- distributions


class ClosureDistribution(msgspec.Struct, frozen=True, kw_only=True):
    """How many attempted scenarios closed at each hint level, and how many did not (Fig. 3)."""

    L1: int = 0
    L2: int = 0
    L3: int = 0
    L4: int = 0
    L5: int = 0
    L6: int = 0
    unresolved: int = 0

    @property
    def attempted(self) -> int:
        return self.L1 + self.L2 + self.L3 + self.L4 + self.L5 + self.L6 + self.unresolved

    def shares(self) -> dict[str, float] | None:
        """Each count over all attempted scenarios (unresolved included); ``None`` if none."""
        total = self.attempted
        if total == 0:
            return None
        counts = msgspec.structs.asdict(self)
        return {name: count / total for name, count in counts.items()}


def closure_distribution(trajectories: Iterable[Trajectory]) -> ClosureDistribution:
    """Pool :func:`scenario_closures` of every trajectory into level counts."""
    counts = dict.fromkeys(("L1", "L2", "L3", "L4", "L5", "L6", "unresolved"), 0)
    for traj in trajectories:
        for level in scenario_closures(traj).values():
            counts["unresolved" if level is None else f"L{level}"] += 1
    return ClosureDistribution(**counts)


def cumulative_final_fix(
    trajectories: Iterable[Trajectory], alpha: int | None = None
) -> list[float]:
    """The share of instances fixed at or before turn t, for t = 0..alpha (Fig. 6).

    ``alpha`` defaults to the largest tau among the trajectories; an episode that ended
    earlier keeps its state. The entry at t = 0 is InitialFix; the last one is FinalFix
    when alpha covers every episode. Empty input gives ``[]``.
    """
    items = list(trajectories)
    if not items:
        return []
    horizon = max(_tau(traj) for traj in items) if alpha is None else alpha
    if horizon < 0:
        raise ValueError(f"alpha must be >= 0, got {horizon}")
    firsts = [first_fix_turn(traj) for traj in items]
    return [
        sum(1 for first in firsts if first is not None and first <= t) / len(items)
        for t in range(horizon + 1)
    ]


def repair_at_k(trajectories: Iterable[Trajectory], k: int) -> float | None:
    """FeedbackEval's Repair@k: the share of episodes whose program passes every test after
    at most ``k`` feedback rounds (None without episodes).

    Turn 0 is the unhinted attempt, so Repair@k counts the fixes at turns 0..k: the
    ``k``-th entry of :func:`cumulative_final_fix`. ``--turns 1`` is FeedbackEval's
    single-round setting, larger budgets its iterative one.
    """
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    series = cumulative_final_fix(trajectories, k)
    return series[k] if series else None


def pass_rate_trajectories(trajectories: Iterable[Trajectory]) -> dict[str, list[float]]:
    """``{instance_id: [p_0, ..., p_tau]}`` for one model's run (Fig. 5).

    Instance ids must be unique in the input (pass one group and run at a time).
    """
    out: dict[str, list[float]] = {}
    for traj in trajectories:
        if traj.instance_id in out:
            raise ValueError(f"instance {traj.instance_id!r} appears twice; pass one model and run")
        out[traj.instance_id] = pass_rates(traj)
    return out
