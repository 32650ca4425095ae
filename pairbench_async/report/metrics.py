"""PAIR-BENCH metrics per model: trajectories in, a Table III row and the figures' series out.

The record store or the report turns its records into trajectories
(:class:`~.trajectory.Trajectory`) and calls :func:`compute_metrics` /
:func:`metrics_by_model`. This module is the last of the three layers of seed 000,
Section IV-E (``docs/METRICS.md``): per turn and per instance are
:mod:`.trajectory_metrics`; here :func:`aggregate` / :func:`compute_metrics` average
across initially failing instances (InitialFix and FinalFix across all instances), and
the distributions behind the figures pool trajectories (closing levels, cumulative
FinalFix, Repair@k, pass-rate trajectories). It holds what takes many trajectories, so
grouping and each-episode-once checks live in one place.

An undefined value is ``None`` and is left out of every average; sums use
:func:`math.fsum` (via the instance layer's mean). Pure: synchronous, no I/O, no clock,
no randomness.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

import msgspec

from .registry import BY_NAME
from .trajectory import Trajectory
from .trajectory_metrics import (
    InstanceMetrics,
    first_fix_turn,
    instance_metrics,
    last_turn,
    mean_of_defined,
    pass_rates,
    scenario_closures,
)

__all__ = [
    "METRIC_NAMES",
    "ClosureDistribution",
    "ModelMetrics",
    "aggregate",
    "check_unique",
    "closure_distribution",
    "compute_metrics",
    "cumulative_final_fix",
    "group_key",
    "metrics_by_model",
    "metrics_by_run",
    "pass_rate_trajectories",
    "repair_at_k",
]

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
    HCCShown: float | None = None
    instances: int = 0
    initially_failing: int = 0
    fixed: int = 0


#: The metrics of :class:`ModelMetrics` (the registry's per-model ones), in its field order:
#: the order of ``report --json``'s ``models`` and of the export's metric rows.
METRIC_NAMES: Final[tuple[str, ...]] = tuple(
    name for name in ModelMetrics.__struct_fields__ if name in BY_NAME)


def aggregate(rows: Sequence[InstanceMetrics]) -> ModelMetrics:
    """The second averaging stage: across instances, each counted once.

    InitialFix and FinalFix average over all rows; every other metric over the
    initially failing rows that define it (TurnsToFix: those eventually fixed).
    InitialFix is "fixed by the unhinted turn 0": rows whose turn 0 is the erroneous
    program as given (FeedbackEval's protocols) have no such turn and are left out of
    it (None when every row is such a row).
    """
    if not rows:
        return ModelMetrics()
    failing = [row for row in rows if not row.initially_fixed]
    n_fixed = sum(1 for row in rows if row.fixed)
    unhinted = [row for row in rows if not row.given_start]
    return ModelMetrics(
        InitialFix=(sum(1 for row in unhinted if row.initially_fixed) / len(unhinted)
                    if unhinted else None),
        TRS=mean_of_defined(row.TRS for row in failing),
        BRG=mean_of_defined(row.BRG for row in failing),
        BP=mean_of_defined(row.BP for row in failing),
        PMR=mean_of_defined(row.PMR for row in failing),
        HE=mean_of_defined(row.HE for row in failing),
        GC=mean_of_defined(row.GC for row in failing),
        FinalFix=n_fixed / len(rows),
        TurnsToFix=mean_of_defined(
            None if row.TurnsToFix is None else float(row.TurnsToFix) for row in failing
        ),
        HCC=mean_of_defined(row.HCC for row in failing),
        RepairRate=mean_of_defined(row.RepairRate for row in failing),
        PreservationRate=mean_of_defined(row.PreservationRate for row in failing),
        HCCShown=mean_of_defined(row.HCCShown for row in failing),
        instances=len(rows),
        initially_failing=len(failing),
        fixed=n_fixed,
    )


def check_unique(trajectories: Sequence[Trajectory]) -> None:
    """``ValueError`` when one (model, protocol, run, instance) episode appears twice."""
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
    check_unique(items)
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
    horizon = max(last_turn(traj) for traj in items) if alpha is None else alpha
    if horizon < 0:
        raise ValueError(f"alpha must be >= 0, got {horizon}")
    firsts = [first_fix_turn(traj) for traj in items]
    return [
        sum(1 for first in firsts if first is not None and first <= t) / len(items)
        for t in range(horizon + 1)
    ]


def repair_at_k(trajectories: Iterable[Trajectory], k: int) -> float | None:
    """FeedbackEval's Repair@k: the share of episodes whose program passes every test after
    ``k`` feedback rounds (None without episodes).

    Seed 001 §6: "the LLMs were provided with the initial erroneous code and corresponding
    feedback, after which they performed a repair iteration ... Repair@k ... measures the
    pass rate of the code after k repair iterations". Turn t is the t-th feedback round
    and an episode stops once every test passes (its program then stays), so "passes
    after k rounds" is "fixed at some turn <= k": the ``k``-th entry of
    :func:`cumulative_final_fix`. For FeedbackEval's protocols turn 0 is the erroneous
    program itself (no model call), so this is exactly the paper's Repair@k; for a
    protocol whose turn 0 is PAIR-BENCH's unhinted repair, that attempt precedes the k
    rounds and its fixes count too (``docs/METRICS.md``). ``--turns 1`` is
    FeedbackEval's single-round setting, ``--turns 3`` its iterative one.
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
