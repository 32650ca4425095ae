"""Hand-worked and property tests of the PAIR-BENCH trajectory metrics.

The code: report/trajectory.py (the input), report/trajectory_metrics.py (per turn and
instance), report/metrics.py (per model).

Every expected value below is computed by hand from the formula in a comment, with the
sets written out, so that altering any formula (a different denominator, a strict
comparison, the last turn instead of the best one, ...) breaks at least one test. The
comment "mutation:" names the altered formula a test is there to catch.
"""

from __future__ import annotations

import ast
import math
import pathlib

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pairbench_async.report.metrics import (
    METRIC_NAMES,
    ClosureDistribution,
    ModelMetrics,
    aggregate,
    closure_distribution,
    compute_metrics,
    cumulative_final_fix,
    group_key,
    metrics_by_model,
    metrics_by_run,
    pass_rate_trajectories,
    repair_at_k,
)
from pairbench_async.report.trajectory import Trajectory, TurnOutcome
from pairbench_async.report.trajectory_metrics import (
    behaviour_preservation,
    broader_repair_gain,
    first_fix_turn,
    gap_closure,
    hint_efficiency,
    hinted_closed_coverage,
    hinted_closed_coverage_shown,
    instance_metrics,
    pass_rates,
    pass_retention,
    preservation_rate,
    progress_monotonicity,
    repair_rate,
    scenario_closures,
    targeted_repair_success,
    turns_to_fix,
)

Target = tuple[str, str, int]  # (scenario id, its tests as letters, hint level)


def turn(t: int, passed: str, target: Target | None = None) -> TurnOutcome:
    """A turn whose passing tests and target tests are written as letters: "ab" = {a, b}."""
    if target is None:
        return TurnOutcome(turn=t, passed=frozenset(passed))
    sid, tests, level = target
    return TurnOutcome(
        turn=t, passed=frozenset(passed), target_id=sid, target_tests=sorted(tests), level=level
    )


def trajectory(
    tests: str,
    *turns: tuple[str, Target | None],
    instance: str = "i",
    model: str = "m",
    protocol: str | None = None,
    run: int = 0,
) -> Trajectory:
    return Trajectory(
        instance_id=instance,
        model=model,
        protocol=protocol,
        run=run,
        test_ids=list(tests),
        turns=[turn(t, passed, target) for t, (passed, target) in enumerate(turns)],
    )


# X: T = {a,b,c,d}, four evaluations, two scenarios.
#   t=0  P_0 = {a}        F_0 = {b,c,d}                      p_0 = 1/4
#   t=1  G_1 = {b,c} (s1, L1)  P_1 = {b,d}  F_1 = {a,c}      p_1 = 2/4
#   t=2  G_2 = {c}   (s1, L2)  P_2 = {a,b,c} F_2 = {d}       p_2 = 3/4
#   t=3  G_3 = {d}   (s2, L1)  P_3 = {a,b}  F_3 = {c,d}      p_3 = 2/4   (tau = 3)
X = trajectory(
    "abcd",
    ("a", None),
    ("bd", ("s1", "bc", 1)),
    ("abc", ("s1", "c", 2)),
    ("ab", ("s2", "d", 1)),
    instance="X",
)

# Y: T = {a,b,c}; fixed at turn 1 by the hint on s1 plus a broader repair of c.
#   t=0  P_0 = {a}        F_0 = {b,c}                        p_0 = 1/3
#   t=1  G_1 = {b} (s1, L1)  P_1 = {a,b,c}  F_1 = {}         p_1 = 1     (tau = 1)
Y = trajectory("abc", ("a", None), ("abc", ("s1", "b", 1)), instance="Y")

# V: T = {a,b}; fixed by the zero-hint repair: P_0 = {a,b}, tau = 0.
V = trajectory("ab", ("ab", None), instance="V")

# Z: a no-hint baseline (no targets) that keeps revising after the fix.
#   T = {a,b}; P_0 = {}, P_1 = {a}, P_2 = {a,b}, P_3 = {a,b};  p = 0, 1/2, 1, 1  (tau = 3)
Z = trajectory("ab", ("", None), ("a", None), ("ab", None), ("ab", None), instance="Z")

# W: a no-hint baseline fixed at turn 1 that regresses at turn 2.
#   T = {a,b}; P_0 = {a}, P_1 = {a,b}, P_2 = {a};  p = 1/2, 1, 1/2  (tau = 2)
W = trajectory("ab", ("a", None), ("ab", None), ("a", None), instance="W")


# --------------------------------------------------------------------------- per turn


def test_pass_rates_and_first_fix() -> None:
    assert pass_rates(X) == [0.25, 0.5, 0.75, 0.5]
    assert first_fix_turn(X) is None
    assert first_fix_turn(Y) == 1
    assert first_fix_turn(V) == 0
    assert first_fix_turn(Z) == 2


def test_trs_by_hand() -> None:
    # TRS_1 = |G_1 ∩ P_1| / |G_1| = |{b,c} ∩ {b,d}| / |{b,c}| = |{b}| / 2 = 1/2
    #   (mutation: dividing by |T| would give 1/4)
    assert targeted_repair_success(X, 1) == pytest.approx(1 / 2)
    # TRS_2 = |{c} ∩ {a,b,c}| / |{c}| = 1
    assert targeted_repair_success(X, 2) == pytest.approx(1.0)
    # TRS_3 = |{d} ∩ {a,b}| / |{d}| = 0
    assert targeted_repair_success(X, 3) == pytest.approx(0.0)
    # A turn without a target has no TRS.
    assert targeted_repair_success(Z, 1) is None


def test_brg_by_hand() -> None:
    # BRG_1 = |(F_0 \ G_1) ∩ P_1| / |T| = |({b,c,d} \ {b,c}) ∩ {b,d}| / 4 = |{d}| / 4 = 1/4
    #   (mutation: dividing by |F_0| = 3 would give 1/3; forgetting "\ G_1" gives 2/4)
    assert broader_repair_gain(X, 1) == pytest.approx(1 / 4)
    # BRG_2 = |({a,c} \ {c}) ∩ {a,b,c}| / 4 = |{a}| / 4 = 1/4
    assert broader_repair_gain(X, 2) == pytest.approx(1 / 4)
    # BRG_3 = |({c,d} \ {d}) ∩ {a,b}| / 4 = 0
    assert broader_repair_gain(X, 3) == pytest.approx(0.0)
    # Y: BRG_1 = |({b,c} \ {b}) ∩ {a,b,c}| / 3 = |{c}| / 3 = 1/3
    assert broader_repair_gain(Y, 1) == pytest.approx(1 / 3)
    assert broader_repair_gain(W, 1) is None


def test_bp_by_hand() -> None:
    # BP_1 = 1 - |P_0 ∩ F_1| / |T| = 1 - |{a} ∩ {a,c}| / 4 = 1 - 1/4 = 3/4
    #   (mutation: dividing by |P_0| = 1 would give 0)
    assert behaviour_preservation(X, 1) == pytest.approx(3 / 4)
    # BP_2 = 1 - |{b,d} ∩ {d}| / 4 = 3/4
    assert behaviour_preservation(X, 2) == pytest.approx(3 / 4)
    # BP_3 = 1 - |{a,b,c} ∩ {c,d}| / 4 = 1 - 1/4 = 3/4
    assert behaviour_preservation(X, 3) == pytest.approx(3 / 4)
    # W: BP_2 = 1 - |{a,b} ∩ {b}| / 2 = 1/2 (a baseline turn has BP too)
    assert behaviour_preservation(W, 2) == pytest.approx(1 / 2)


def test_repair_rate_by_hand() -> None:
    # RR_1 = |F_0 ∩ P_1| / |T| = |{b,c,d} ∩ {b,d}| / 4 = 2/4
    #   (mutation: dividing by |F_0| = 3 would give 2/3)
    assert repair_rate(X, 1) == pytest.approx(2 / 4)
    # RR_2 = |{a,c} ∩ {a,b,c}| / 4 = 2/4
    assert repair_rate(X, 2) == pytest.approx(2 / 4)
    # RR_3 = |{d} ∩ {a,b}| / 4 = 0
    assert repair_rate(X, 3) == pytest.approx(0.0)
    # Y: RR_1 = |{b,c} ∩ {a,b,c}| / 3 = 2/3
    assert repair_rate(Y, 1) == pytest.approx(2 / 3)


def test_preservation_rate_by_hand() -> None:
    # Table V's Preservation Rate, normalised by |T| like Section V-B's Repair Rate:
    # PR_t = 1 - |P_{t-1} ∩ F_t| / |T|.
    # PR_1 = 1 - |{a} ∩ {a,c}| / 4 = 3/4
    #   (mutations: the old ratio |P_0 ∩ P_1| / |P_0| = |{a} ∩ {b,d}| / 1 gives 0;
    #    dividing the regressions by |P_0| = 1 gives 1 - 1 = 0)
    assert preservation_rate(X, 1) == pytest.approx(3 / 4)
    # PR_2 = 1 - |{b,d} ∩ {d}| / 4 = 3/4   (old ratio: |{b,d} ∩ {a,b,c}| / 2 = 1/2)
    assert preservation_rate(X, 2) == pytest.approx(3 / 4)
    # PR_3 = 1 - |{a,b,c} ∩ {c,d}| / 4 = 3/4   (old ratio: 2/3)
    assert preservation_rate(X, 3) == pytest.approx(3 / 4)
    # Z: P_0 = {} is no longer undefined: PR_1 = 1 - |{} ∩ {b}| / 2 = 1
    assert preservation_rate(Z, 1) == pytest.approx(1.0)
    # W (a baseline): PR_2 = 1 - |{a,b} ∩ {b}| / 2 = 1/2, equal to BP_2 for every protocol
    assert preservation_rate(W, 2) == pytest.approx(1 / 2)
    assert all(preservation_rate(traj, t) == behaviour_preservation(traj, t)
               for traj in (X, Y, Z, W) for t in range(1, len(traj.turns)))


def test_pass_retention_by_hand() -> None:
    # The old ratio, under its own name: PassRetention_t = |P_{t-1} ∩ P_t| / |P_{t-1}|
    # X: PT_1 = |{a} ∩ {b,d}| / |{a}| = 0;  PT_2 = |{b,d} ∩ {a,b,c}| / 2 = 1/2;
    #    PT_3 = |{a,b,c} ∩ {a,b}| / 3 = 2/3
    assert pass_retention(X, 1) == pytest.approx(0.0)
    assert pass_retention(X, 2) == pytest.approx(1 / 2)
    assert pass_retention(X, 3) == pytest.approx(2 / 3)
    # Z: P_0 = {} -> undefined; PT_2 = |{a} ∩ {a,b}| / 1 = 1
    assert pass_retention(Z, 1) is None
    assert pass_retention(Z, 2) == pytest.approx(1.0)


def test_turn_level_metrics_reject_turns_outside_1_to_tau() -> None:
    for t in (0, 4):
        with pytest.raises(ValueError, match="1..3"):
            repair_rate(X, t)
    with pytest.raises(ValueError):
        behaviour_preservation(V, 1)


# --------------------------------------------------------------------------- per instance


def test_pmr_by_hand() -> None:
    # X: PMR = (1/3)(1[2/4 >= 1/4] + 1[3/4 >= 2/4] + 1[2/4 >= 3/4]) = (1 + 1 + 0)/3 = 2/3
    #   (mutation: dividing by tau + 1 gives 2/4)
    assert progress_monotonicity(X) == pytest.approx(2 / 3)
    # Z: (1/3)(1[1/2 >= 0] + 1[1 >= 1/2] + 1[1 >= 1]) = 1
    #   (mutation: a strict > gives 2/3 because p_3 = p_2)
    assert progress_monotonicity(Z) == pytest.approx(1.0)
    # W: (1/2)(1[1 >= 1/2] + 1[1/2 >= 1]) = 1/2
    assert progress_monotonicity(W) == pytest.approx(1 / 2)
    # tau = 0: undefined
    assert progress_monotonicity(V) is None


def test_scenario_closures_and_he_by_hand() -> None:
    # X: s1 targeted at t=1 (L1, TRS 1/2) and t=2 (L2, G_2 = {c} ⊆ P_2): closed at L2.
    #    s2 targeted at t=3 (L1, {d} ⊄ P_3): unresolved.
    assert scenario_closures(X) == {"s1": 2, "s2": None}
    # HE = mean(7 - 2, 0) = 5/2
    #   (mutations: 6 - ℓ gives 2; averaging over closed scenarios only gives 5;
    #    using the first attempt's level L1 gives 3)
    assert hint_efficiency(X) == pytest.approx(5 / 2)
    # Y: s1 closed at L1 -> HE = 7 - 1 = 6
    assert hint_efficiency(Y) == pytest.approx(6.0)
    # No attempted scenario: undefined (baseline, or tau = 0).
    assert hint_efficiency(Z) is None
    assert hint_efficiency(V) is None


def test_he_reopened_scenario_is_decided_by_its_last_attempt() -> None:
    # T = {a,b,c}; s1 = {b} closed at L1 (t=1), b regresses at t=2 (while s2 = {c} is
    # hinted at L1 and fails), s1 reopened and retargeted at L1 at t=3 and fails again.
    #   P_0 = {a}, P_1 = {a,b}, P_2 = {a}, P_3 = {a}
    traj = trajectory(
        "abc",
        ("a", None),
        ("ab", ("s1", "b", 1)),
        ("a", ("s2", "c", 1)),
        ("a", ("s1", "b", 2)),
    )
    # s1's last attempt (t=3, L2) did not close it; s2 never closed: HE = mean(0, 0) = 0
    assert scenario_closures(traj) == {"s1": None, "s2": None}
    assert hint_efficiency(traj) == 0.0
    # Closed, reopened, closed again at L3: counts at L3 -> HE = 7 - 3 = 4.
    again = trajectory(
        "ab", ("a", None), ("ab", ("s1", "b", 1)), ("a", None), ("ab", ("s1", "b", 3))
    )
    assert scenario_closures(again) == {"s1": 3}
    assert hint_efficiency(again) == pytest.approx(4.0)


def test_gc_by_hand() -> None:
    # X: b = max(1/4, 2/4, 3/4, 2/4) = 3/4; GC = (3/4 - 1/4) / (1 - 1/4) = (1/2)/(3/4) = 2/3
    #   (mutation: using the last p_3 = 2/4 gives 1/3)
    assert gap_closure(X) == pytest.approx(2 / 3)
    # W: b = 1; GC = (1 - 1/2)/(1 - 1/2) = 1 even though the last turn regressed
    assert gap_closure(W) == pytest.approx(1.0)
    # Z: (1 - 0)/(1 - 0) = 1
    assert gap_closure(Z) == pytest.approx(1.0)
    # p_0 = 1: undefined
    assert gap_closure(V) is None
    # initially failing with tau = 0: b = p_0 -> GC = 0
    assert gap_closure(trajectory("ab", ("a", None))) == 0.0


def test_turns_to_fix_by_hand() -> None:
    # Y: min{t : p_t = 1} = 1
    assert turns_to_fix(Y) == 1
    # Z: p = 0, 1/2, 1, 1 -> min{t : p_t = 1} = 2 (mutation: the last turn tau = 3)
    assert turns_to_fix(Z) == 2
    # W: p = 1/2, 1, 1/2 -> 1
    assert turns_to_fix(W) == 1
    # never fixed, and fixed at turn 0 (not initially failing): undefined
    assert turns_to_fix(X) is None
    assert turns_to_fix(V) is None


def test_hcc_by_hand() -> None:
    # X: F_0 = {b,c,d}; H = {b,c} ∪ {c} ∪ {d} = {b,c,d}; P_T = P_3 = {a,b}
    #    HCC = |{b,c,d} ∩ {b,c,d} ∩ {a,b}| / |{b,c,d}| = |{b}| / 3 = 1/3
    #    (mutation: P at the best turn, P_2 = {a,b,c}, gives 2/3)
    assert hinted_closed_coverage(X) == pytest.approx(1 / 3)
    # Y: F_0 = {b,c}; H = {b}; P_T = {a,b,c}: |{b,c} ∩ {b} ∩ {a,b,c}| / 2 = 1/2
    #    (mutation: leaving out H gives |F_0 ∩ P_T| / |F_0| = 1)
    assert hinted_closed_coverage(Y) == pytest.approx(1 / 2)
    # No hinted scenario (baseline) or F_0 = {}: undefined.
    assert hinted_closed_coverage(Z) is None
    assert hinted_closed_coverage(V) is None


def test_instance_metrics_average_within_the_instance() -> None:
    row = instance_metrics(X)
    assert (row.tau, row.initially_fixed, row.fixed) == (3, False, False)
    # TRS = (1/2 + 1 + 0)/3 = 1/2;   BRG = (1/4 + 1/4 + 0)/3 = 1/6;   BP = (3/4 ·3)/3 = 3/4
    assert row.TRS == pytest.approx(1 / 2)
    assert row.BRG == pytest.approx(1 / 6)
    assert row.BP == pytest.approx(3 / 4)
    # RR = (2/4 + 2/4 + 0)/3 = 1/3;  PR = (3/4 + 3/4 + 3/4)/3 = 3/4 (the old ratio gave 7/18)
    assert row.RepairRate == pytest.approx(1 / 3)
    assert row.PreservationRate == pytest.approx(3 / 4)
    assert (row.PMR, row.HE, row.GC, row.HCC) == pytest.approx((2 / 3, 5 / 2, 2 / 3, 1 / 3))
    assert row.TurnsToFix is None
    # Z: nothing regresses: PR_1 = PR_2 = PR_3 = 1 - 0/2, PR = 1.
    # RR = (1/2 + 1/2 + 0)/3 = 1/3; no targets, so no TRS/BRG/HE/HCC.
    z = instance_metrics(Z)
    assert z.PreservationRate == pytest.approx(1.0)
    assert z.RepairRate == pytest.approx(1 / 3)
    assert (z.TRS, z.BRG, z.HE, z.HCC) == (None, None, None, None)
    # An instance fixed at turn 0 carries no progress metric at all.
    v = instance_metrics(V)
    assert (v.initially_fixed, v.fixed, v.tau) == (True, True, 0)
    assert all(getattr(v, name) is None for name in ("TRS", "BP", "PMR", "GC", "HCC", "HE"))


# --------------------------------------------------------------------------- aggregation


def test_aggregation_within_then_across_by_hand() -> None:
    # Instances X, Y (initially failing) and V (fixed at turn 0).
    m = compute_metrics([X, Y, V])
    assert (m.instances, m.initially_failing, m.fixed) == (3, 2, 2)
    # InitialFix = mean(0, 0, 1) = 1/3;  FinalFix = mean(0, 1, 1) = 2/3 over ALL instances
    #   (mutation: FinalFix over initially failing only gives 1/2)
    assert m.InitialFix == pytest.approx(1 / 3)
    assert m.FinalFix == pytest.approx(2 / 3)
    # TurnsToFix over S = {Y} = 1 (mutation: counting V's t = 0 gives 1/2)
    assert m.TurnsToFix == pytest.approx(1.0)
    # TRS = mean(X 1/2, Y 1) = 3/4 (mutation: pooling the 4 turns gives (1/2+1+0+1)/4 = 5/8)
    assert m.TRS == pytest.approx(3 / 4)
    # BRG = mean(1/6, 1/3) = 1/4 (pooled: (1/4+1/4+0+1/3)/4 = 5/24)
    assert m.BRG == pytest.approx(1 / 4)
    # BP = mean(3/4, 1) = 7/8 (pooled: (3/4·3 + 1)/4 = 13/16)
    assert m.BP == pytest.approx(7 / 8)
    # RepairRate = mean(1/3, 2/3) = 1/2 (pooled: (2/4+2/4+0+2/3)/4 = 5/12)
    assert m.RepairRate == pytest.approx(1 / 2)
    # PreservationRate = mean(3/4, 1) = 7/8, equal to BP (the old ratio gave mean(7/18, 1) = 25/36)
    assert m.PreservationRate == pytest.approx(7 / 8)
    # Per-instance ones over X and Y: PMR = mean(2/3, 1) = 5/6; HE = mean(5/2, 6) = 17/4;
    # GC = mean(2/3, 1) = 5/6; HCC = mean(1/3, 1/2) = 5/12
    assert m.PMR == pytest.approx(5 / 6)
    assert m.HE == pytest.approx(17 / 4)
    assert m.GC == pytest.approx(5 / 6)
    assert m.HCC == pytest.approx(5 / 12)


def test_a_model_without_initially_failing_instances_has_none_not_nan() -> None:
    m = compute_metrics([V, trajectory("a", ("a", None), instance="V2")])
    assert (m.InitialFix, m.FinalFix) == (1.0, 1.0)
    for name in METRIC_NAMES:
        if name not in ("InitialFix", "FinalFix"):
            assert getattr(m, name) is None, name
    assert b"NaN" not in msgspec.json.encode(m)
    assert compute_metrics([]) == ModelMetrics()


def test_baseline_protocol_leaves_scenario_metrics_undefined() -> None:
    # Z and W only: no targets anywhere.
    m = compute_metrics([Z, W])
    assert (m.TRS, m.BRG, m.HE, m.HCC) == (None, None, None, None)
    # TurnsToFix = mean(2, 1) = 3/2; PMR = mean(1, 1/2) = 3/4
    assert m.TurnsToFix == pytest.approx(3 / 2)
    assert m.PMR == pytest.approx(3 / 4)


def test_aggregate_equals_compute_metrics_and_rejects_duplicates() -> None:
    assert aggregate([instance_metrics(t) for t in (X, Y, V)]) == compute_metrics([X, Y, V])
    with pytest.raises(ValueError, match="duplicate"):
        compute_metrics([X, X])


def test_grouping_by_model_protocol_and_run() -> None:
    x2 = msgspec.structs.replace(X, model="n", protocol="vanilla")
    y_run1 = msgspec.structs.replace(Y, run=1)
    by_model = metrics_by_model([X, Y, x2, y_run1])
    assert list(by_model) == ["m", "n|vanilla"]
    assert group_key("n", "vanilla") == "n|vanilla"
    # "m" pools its two runs: X, Y (run 0) and Y (run 1) -> TRS = mean(1/2, 1, 1) = 5/6
    assert by_model["m"].TRS == pytest.approx(5 / 6)
    assert by_model["n|vanilla"] == compute_metrics([X])
    by_run = metrics_by_run([X, Y, x2, y_run1])
    assert list(by_run) == [0, 1]
    assert by_run[0]["m"] == compute_metrics([X, Y])
    assert by_run[1] == {"m": compute_metrics([Y])}


# --------------------------------------------------------------------------- distributions


def test_closure_distribution_by_hand() -> None:
    # X: s1 closed at L2, s2 unresolved; Y: s1 closed at L1; Z: none.
    dist = closure_distribution([X, Y, Z])
    assert dist == ClosureDistribution(L1=1, L2=1, unresolved=1)
    assert dist.attempted == 3
    shares = dist.shares()
    assert shares is not None
    assert shares["L1"] == pytest.approx(1 / 3)
    assert shares["unresolved"] == pytest.approx(1 / 3)
    assert shares["L6"] == 0.0
    assert ClosureDistribution().shares() is None


def test_cumulative_final_fix_by_hand() -> None:
    # first fixes: X never, Y at 1, V at 0; default alpha = max tau = 3
    # t=0: {V} -> 1/3; t=1..3: {V, Y} -> 2/3
    assert cumulative_final_fix([X, Y, V]) == pytest.approx([1 / 3, 2 / 3, 2 / 3, 2 / 3])
    # W is fixed at 1 and regresses at 2: still counted as fixed (∃ t <= alpha).
    assert cumulative_final_fix([W], alpha=4) == [0.0, 1.0, 1.0, 1.0, 1.0]
    assert cumulative_final_fix([Z, X], alpha=1) == [0.0, 0.0]
    assert cumulative_final_fix([]) == []


def test_pass_rate_trajectories() -> None:
    assert pass_rate_trajectories([Y, W]) == {"Y": [1 / 3, 1.0], "W": [0.5, 1.0, 0.5]}
    with pytest.raises(ValueError, match="twice"):
        pass_rate_trajectories([Y, msgspec.structs.replace(Y, run=1)])


# --------------------------------------------------------------------------- validation


def _target_kwargs(t: int, tests: list[str], level: int) -> dict[str, object]:
    return {
        "turn": t,
        "passed": frozenset(),
        "target_id": "s",
        "target_tests": tests,
        "level": level,
    }


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"turn": 1, "passed": frozenset(), "target_id": "s"}, "together"),
        (_target_kwargs(0, ["a"], 1), "turn 0"),
        (_target_kwargs(1, ["a"], 7), "level"),
        (_target_kwargs(1, ["a"], 0), "level"),
        (_target_kwargs(1, [], 1), "at least one"),
        ({"turn": -1, "passed": frozenset()}, ">= 0"),
    ],
)
def test_turn_outcome_validation(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        TurnOutcome(**kwargs)  # type: ignore[arg-type]


def test_trajectory_validation() -> None:
    with pytest.raises(ValueError, match="empty"):
        trajectory("", ("", None))
    with pytest.raises(ValueError, match="duplicate"):
        trajectory("aa", ("a", None))
    with pytest.raises(ValueError, match="outside T"):
        trajectory("ab", ("c", None))
    with pytest.raises(ValueError, match="did not fail"):
        trajectory("ab", ("a", None), ("ab", ("s", "a", 1)))
    with pytest.raises(ValueError, match="no turns"):
        Trajectory(instance_id="i", model="m", test_ids=["a"], turns=[])
    with pytest.raises(ValueError, match="position"):
        Trajectory(instance_id="i", model="m", test_ids=["a"], turns=[turn(1, "a")])


def test_trajectory_round_trips_and_decoding_validates() -> None:
    encoded = msgspec.json.encode(X)
    assert msgspec.json.decode(encoded, type=Trajectory) == X
    bad = encoded.replace(b'"passed":["a"]', b'"passed":["z"]', 1)
    assert bad != encoded
    with pytest.raises(msgspec.ValidationError, match="outside T"):
        msgspec.json.decode(bad, type=Trajectory)


def test_metrics_module_is_pure() -> None:
    """The protocol core imports no I/O, process or clock module."""
    forbidden = {"asyncio", "aiohttp", "anyio", "os", "subprocess", "socket", "time", "random"}
    package = pathlib.Path(__file__).resolve().parents[2] / "pairbench_async" / "report"
    for name in ("trajectory.py", "trajectory_metrics.py", "metrics.py", "ranking.py"):
        tree = ast.parse((package / name).read_text())
        imported: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                imported.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                imported.add(node.module.split(".")[0])
            elif isinstance(node, ast.ImportFrom) and node.level == 2:  # ``from ..wing.x import``
                imported.add("wing:" + (node.module or "").split(".")[0])
        assert not imported & forbidden, (name, imported & forbidden)
        # the metrics read records only: no sandbox, runner, models or CLI behind them
        assert not imported & {"wing:sandbox", "wing:runner", "wing:models", "wing:cli", "wing:datasets"}, name


# --------------------------------------------------------------------------- properties

LETTERS = "abcdef"


@st.composite
def trajectories(draw: st.DrawFn, monotone: bool = False) -> Trajectory:
    """A valid random trajectory: 1-6 tests, 1-6 evaluations, random targets and levels."""
    n = draw(st.integers(1, len(LETTERS)))
    tests = LETTERS[:n]
    length = draw(st.integers(1, 6))
    passed = [frozenset(draw(st.sets(st.sampled_from(tests))))]
    turns = [TurnOutcome(turn=0, passed=passed[0])]
    for t in range(1, length):
        failing = sorted(frozenset(tests) - passed[-1])
        now = frozenset(draw(st.sets(st.sampled_from(tests))))
        if monotone:
            now |= passed[-1]
        passed.append(now)
        if draw(st.booleans()) and failing:
            target = draw(st.sets(st.sampled_from(failing), min_size=1))
            turns.append(
                TurnOutcome(
                    turn=t,
                    passed=now,
                    target_id=draw(st.sampled_from(["s1", "s2", "s3"])),
                    target_tests=sorted(target),
                    level=draw(st.integers(1, 6)),
                )
            )
        else:
            turns.append(TurnOutcome(turn=t, passed=now))
    return Trajectory(
        instance_id=draw(st.sampled_from(["i1", "i2", "i3", "i4"])),
        model="m",
        test_ids=list(tests),
        turns=turns,
    )


def _unique(items: list[Trajectory]) -> list[Trajectory]:
    return list({t.instance_id: t for t in items}.values())


@settings(max_examples=300, deadline=None)
@given(trajectories())
def test_every_metric_is_in_range(traj: Trajectory) -> None:
    row = instance_metrics(traj)
    for name in ("TRS", "BRG", "BP", "PMR", "GC", "HCC", "RepairRate", "PreservationRate"):
        value = getattr(row, name)
        assert value is None or 0.0 <= value <= 1.0, (name, value)
    assert row.HE is None or 0.0 <= row.HE <= 6.0
    assert row.TurnsToFix is None or 1 <= row.TurnsToFix <= row.tau
    assert all(0.0 <= p <= 1.0 for p in row.pass_rates)


@settings(max_examples=300, deadline=None)
@given(trajectories())
def test_turn_identities(traj: Trajectory) -> None:
    """Identities that tie the formulas together; any altered denominator breaks one."""
    n = len(traj.test_ids)
    p = pass_rates(traj)
    for t in range(1, len(traj.turns)):
        rr = repair_rate(traj, t)
        bp = behaviour_preservation(traj, t)
        # p_t - p_{t-1} = (repairs - regressions)/|T| = RepairRate_t - (1 - BP_t)
        assert p[t] - p[t - 1] == pytest.approx(rr - (1 - bp))
        before, now = frozenset(traj.turns[t - 1].passed), frozenset(traj.turns[t].passed)
        # BP = 1 exactly when nothing regressed
        assert (bp == 1.0) == (before <= now)
        # Table V's Preservation Rate is BP's formula, for every protocol
        assert preservation_rate(traj, t) == bp
        kept = pass_retention(traj, t)
        assert (kept is None) == (not before)
        assert kept is None or (kept == 1.0) == (before <= now)
        target = traj.turns[t].target_tests
        trs = targeted_repair_success(traj, t)
        brg = broader_repair_gain(traj, t)
        if target is None:
            assert trs is None and brg is None
            continue
        assert trs is not None and brg is not None
        # repairs inside the target + repairs outside it = all repairs
        assert trs * len(target) / n + brg == pytest.approx(rr)
        # TRS = 1 exactly when the target closes
        assert (trs == 1.0) == (frozenset(target) <= now)


@settings(max_examples=200, deadline=None)
@given(trajectories(monotone=True))
def test_monotone_trajectories(traj: Trajectory) -> None:
    row = instance_metrics(traj)
    if row.initially_fixed:
        return
    # passing sets only grow: no regression, pass rate never falls
    assert row.PMR is None or row.PMR == 1.0
    assert row.BP is None or row.BP == 1.0
    assert row.PreservationRate is None or row.PreservationRate == 1.0


@settings(max_examples=300, deadline=None)
@given(trajectories())
def test_gap_closure_is_one_when_fixed(traj: Trajectory) -> None:
    gc = gap_closure(traj)
    first = first_fix_turn(traj)
    if first == 0:
        assert gc is None
    elif first is not None:
        assert gc == 1.0
        assert turns_to_fix(traj) == first >= 1
    else:
        assert gc is not None and 0.0 <= gc < 1.0


@settings(max_examples=150, deadline=None)
@given(st.lists(trajectories(), min_size=0, max_size=6))
def test_model_metrics_are_bounded_and_never_nan(items: list[Trajectory]) -> None:
    items = _unique(items)
    m = compute_metrics(items)
    for name in METRIC_NAMES:
        value = getattr(m, name)
        assert value is None or not math.isnan(value)
        if value is not None and name not in ("HE", "TurnsToFix"):
            assert 0.0 <= value <= 1.0
    assert m.HE is None or 0.0 <= m.HE <= 6.0
    assert m.TurnsToFix is None or m.TurnsToFix >= 1.0
    assert m.instances == len(items)
    # FinalFix is the last point of the cumulative curve; InitialFix its first.
    curve = cumulative_final_fix(items)
    if items:
        assert curve[0] == pytest.approx(m.InitialFix)
        assert curve[-1] == pytest.approx(m.FinalFix)
        assert curve == sorted(curve)
    assert closure_distribution(items).attempted == sum(len(scenario_closures(t)) for t in items)


def test_repair_at_k_by_hand() -> None:
    # FeedbackEval's Repair@k = share fixed after at most k feedback rounds (turns 0..k).
    # first fixes: X never, Y at turn 1, V at turn 0
    assert repair_at_k([X, Y, V], 0) == pytest.approx(1 / 3)  # V only: the unhinted attempt
    assert repair_at_k([X, Y, V], 1) == pytest.approx(2 / 3)  # + Y
    assert repair_at_k([X, Y, V], 3) == pytest.approx(2 / 3)  # X never passes
    # beyond every episode's end: an ended episode keeps its state
    assert repair_at_k([X, Y, V], 10) == pytest.approx(2 / 3)
    assert repair_at_k([], 1) is None
    with pytest.raises(ValueError):
        repair_at_k([X], -1)


def _given(traj: Trajectory) -> Trajectory:
    return msgspec.structs.replace(traj, given_start=True, protocol="simple")


def test_repair_at_k_counts_feedback_rounds_from_the_erroneous_program() -> None:
    # FeedbackEval protocols: turn 0 is the erroneous program as given (no model call),
    # turn t the t-th repair iteration after feedback. Three episodes, T = {a, b}:
    #   A: p = 0, 1/2, 1        -> first fix at round 2
    #   B: p = 1/2, 1           -> first fix at round 1
    #   C: p = 0, 0, 0, 1/2     -> never fixed in 3 rounds
    a = _given(trajectory("ab", ("", None), ("a", None), ("ab", None), instance="A"))
    b = _given(trajectory("ab", ("a", None), ("ab", None), instance="B"))
    c = _given(trajectory("ab", ("", None), ("", None), ("", None), ("a", None), instance="C"))
    # Repair@1 = |{B}| / 3 = 1/3; Repair@2 = |{A, B}| / 3 = 2/3; Repair@3 = 2/3
    assert repair_at_k([a, b, c], 1) == pytest.approx(1 / 3)
    assert repair_at_k([a, b, c], 2) == pytest.approx(2 / 3)
    assert repair_at_k([a, b, c], 3) == pytest.approx(2 / 3)
    # the given program is never a repair: Repair@0 = 0/3, and InitialFix ("fixed by the
    # unhinted turn 0") is undefined when no episode had an unhinted turn 0
    assert repair_at_k([a, b, c], 0) == 0.0
    m = compute_metrics([a, b, c])
    assert m.InitialFix is None
    # FinalFix = 2/3 as before; TurnsToFix over the fixed = (2 + 1) / 2 = 1.5
    assert m.FinalFix == pytest.approx(2 / 3) and m.TurnsToFix == pytest.approx(1.5)


def test_initial_fix_leaves_out_episodes_that_start_from_the_given_program() -> None:
    # V (unhinted, fixed at turn 0), Y (unhinted, p_0 = 1/3) and a given-start copy of V
    # whose erroneous program already passes: InitialFix over the unhinted rows only =
    # |{V}| / |{V, Y}| = 1/2 (mutation: counting the given row gives 2/3).
    v_given = msgspec.structs.replace(_given(V), instance_id="V2", protocol=None)
    m = compute_metrics([V, Y, v_given])
    assert m.InitialFix == pytest.approx(1 / 2)
    assert m.instances == 3 and m.FinalFix == pytest.approx(1.0)


def test_hcc_shown_reads_h_as_the_sampled_representatives() -> None:
    # T = {a,b,c,d,e}; P_0 = {} so F_0 = T (|F_0| = 5).
    #   t=1  G_1 = {a,b,c}, shown {a}   P_1 = {a,b}
    #   t=2  G_2 = {d},     shown {d}   P_2 = {a,b,d}   (tau = 2, P_tau = {a,b,d})
    # HCC:      H  = {a,b,c,d}: |F_0 ∩ H ∩ P_tau| = |{a,b,d}| = 3 -> 3/5
    # HCCShown: H' = {a,d}:     |F_0 ∩ H' ∩ P_tau| = |{a,d}| = 2 -> 2/5
    t = Trajectory(instance_id="h", model="m", test_ids=list("abcde"), turns=[
        TurnOutcome(turn=0, passed=frozenset()),
        TurnOutcome(turn=1, passed=frozenset("ab"), target_id="s1", target_tests=list("abc"), level=1,
                    shown_tests=["a"]),
        TurnOutcome(turn=2, passed=frozenset("abd"), target_id="s2", target_tests=["d"], level=2,
                    shown_tests=["d"]),
    ])
    assert hinted_closed_coverage(t) == pytest.approx(3 / 5)
    assert hinted_closed_coverage_shown(t) == pytest.approx(2 / 5)
    assert compute_metrics([t]).HCCShown == pytest.approx(2 / 5)
    # without recorded representatives the second reading is undefined, not 0
    assert hinted_closed_coverage_shown(X) is None and compute_metrics([X]).HCCShown is None
    # shown tests must lie inside the targeted scenario, and need a target
    with pytest.raises(ValueError, match="outside the targeted scenario"):
        TurnOutcome(turn=1, passed=frozenset(), target_id="s", target_tests=["a"], level=1, shown_tests=["b"])
    with pytest.raises(ValueError, match="without a target"):
        TurnOutcome(turn=1, passed=frozenset(), shown_tests=["b"])
