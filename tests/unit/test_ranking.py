"""Hand-worked and property tests of rankings, run statistics, Kendall τ-b and the footrule."""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pairbench_async.report.metrics import METRIC_NAMES, ModelMetrics
from pairbench_async.report.ranking import (
    HIGHER_IS_BETTER,
    TABLE_IV_METRICS,
    TABLE_V_METRICS,
    MeanStd,
    average_ranks,
    footrule,
    kendall_tau,
    kendall_tau_b,
    mean_std,
    metric_ranks,
    metric_value,
    protocol_agreement,
    rank_values,
    ranking_stability,
    run_statistics,
)

# --------------------------------------------------------------------------- ranks


def test_directions() -> None:
    assert set(HIGHER_IS_BETTER) == set(METRIC_NAMES)
    assert [name for name, up in HIGHER_IS_BETTER.items() if not up] == ["TurnsToFix"]
    assert len(TABLE_IV_METRICS) == 9 and set(TABLE_IV_METRICS) <= set(METRIC_NAMES)
    assert set(TABLE_V_METRICS) <= set(METRIC_NAMES)


def test_rank_values_ties_and_none() -> None:
    # sorted high to low: a = c = .9 (positions 1, 2 -> 1.5), b = .5 (3), d undefined (4)
    assert rank_values({"a": 0.9, "b": 0.5, "c": 0.9, "d": None}) == {
        "a": 1.5,
        "b": 3.0,
        "c": 1.5,
        "d": 4.0,
    }
    # lower is better: a = 2 (1), b = 3 (2); c, d undefined share positions 3, 4 -> 3.5
    assert rank_values({"a": 2.0, "b": 3.0, "c": None, "d": None}, higher_is_better=False) == {
        "a": 1.0,
        "b": 2.0,
        "c": 3.5,
        "d": 3.5,
    }
    # three-way tie at the bottom: positions 2, 3, 4 -> 3
    assert rank_values({"a": 1.0, "b": 0.0, "c": 0.0, "d": 0.0}) == {
        "a": 1.0,
        "b": 3.0,
        "c": 3.0,
        "d": 3.0,
    }
    assert rank_values({}) == {}
    with pytest.raises(ValueError, match="NaN"):
        rank_values({"a": math.nan})


def test_metric_ranks_and_average_rank_by_hand() -> None:
    metrics = {
        "A": ModelMetrics(FinalFix=0.9, TRS=0.5, TurnsToFix=3.0),
        "B": ModelMetrics(FinalFix=0.8, TRS=0.7, TurnsToFix=2.0),
        "C": ModelMetrics(FinalFix=0.9, TRS=None, TurnsToFix=4.0),
    }
    names = ("FinalFix", "TRS", "TurnsToFix")
    ranks = metric_ranks(metrics, names)
    # FinalFix: A = C = .9 -> 1.5, B -> 3
    assert ranks["FinalFix"] == {"A": 1.5, "B": 3.0, "C": 1.5}
    # TRS: B .7 -> 1, A .5 -> 2, C undefined -> 3
    assert ranks["TRS"] == {"A": 2.0, "B": 1.0, "C": 3.0}
    # TurnsToFix, lower is better: B 2 -> 1, A 3 -> 2, C 4 -> 3
    #   (mutation: ranking it higher-first swaps B and C)
    assert ranks["TurnsToFix"] == {"A": 2.0, "B": 1.0, "C": 3.0}
    # averages: A (1.5 + 2 + 2)/3 = 11/6, B (3 + 1 + 1)/3 = 5/3, C (1.5 + 3 + 3)/3 = 5/2
    assert average_ranks(metrics, names) == pytest.approx({"A": 11 / 6, "B": 5 / 3, "C": 5 / 2})
    # default metric set: all nine of Table IV
    assert set(metric_ranks(metrics)) == set(TABLE_IV_METRICS)
    with pytest.raises(ValueError, match="unknown metric"):
        metric_ranks(metrics, ("Accuracy",))
    with pytest.raises(ValueError, match="unknown metric"):
        metric_value(metrics["A"], "instances")
    with pytest.raises(ValueError, match="no metric"):
        average_ranks(metrics, ())


# --------------------------------------------------------------------------- run statistics


def test_mean_std_by_hand() -> None:
    # mean(1,2,3,4) = 2.5; Σ(x - 2.5)² = 2.25 + .25 + .25 + 2.25 = 5
    # sample: sqrt(5/3); population: sqrt(5/4)
    assert mean_std([1.0, 2.0, 3.0, 4.0]) == MeanStd(mean=2.5, std=math.sqrt(5 / 3), n=4)
    population = mean_std([1.0, 2.0, 3.0, 4.0], ddof=0)
    assert (population.mean, population.std, population.ddof) == (2.5, math.sqrt(5 / 4), 0)
    # None (undefined in that run) is skipped
    assert mean_std([None, 1.0, 3.0]) == MeanStd(mean=2.0, std=math.sqrt(2.0), n=2)
    assert mean_std([5.0]) == MeanStd(mean=5.0, std=None, n=1)
    assert mean_std([5.0], ddof=0) == MeanStd(mean=5.0, std=0.0, n=1, ddof=0)
    assert mean_std([None]) == MeanStd(mean=None, std=None, n=0)
    with pytest.raises(ValueError):
        mean_std([1.0], ddof=-1)


def test_run_statistics_by_hand() -> None:
    runs = [
        {"A": ModelMetrics(FinalFix=0.8, TurnsToFix=2.0), "B": ModelMetrics(FinalFix=0.5)},
        {"A": ModelMetrics(FinalFix=0.9, TurnsToFix=3.0), "B": ModelMetrics(FinalFix=0.6)},
        {"A": ModelMetrics(FinalFix=1.0, TurnsToFix=4.0), "B": ModelMetrics(FinalFix=0.7)},
    ]
    stats = run_statistics(runs, ("FinalFix", "TurnsToFix"))
    # A FinalFix: mean .9, sample std sqrt((.01 + 0 + .01)/2) = .1
    assert stats["A"]["FinalFix"].mean == pytest.approx(0.9)
    assert stats["A"]["FinalFix"].std == pytest.approx(0.1)
    # A TurnsToFix: mean 3, std sqrt((1 + 0 + 1)/2) = 1
    assert stats["A"]["TurnsToFix"].mean == pytest.approx(3.0)
    assert stats["A"]["TurnsToFix"].std == pytest.approx(1.0)
    # B TurnsToFix undefined in every run
    assert stats["B"]["TurnsToFix"] == MeanStd(mean=None, std=None, n=0)
    with pytest.raises(ValueError, match="models"):
        run_statistics([runs[0], {"A": ModelMetrics()}])
    with pytest.raises(ValueError, match="no runs"):
        run_statistics([])


# --------------------------------------------------------------------------- Kendall τ-b


def test_kendall_identical_and_reversed() -> None:
    assert kendall_tau_b([1, 2, 3, 4], [1, 2, 3, 4]) == 1.0
    assert kendall_tau_b([1, 2, 3, 4], [4, 3, 2, 1]) == -1.0
    assert kendall_tau({"a": 1, "b": 2, "c": 3}, {"c": 3, "a": 1, "b": 2}) == 1.0


def test_kendall_by_hand_with_ties() -> None:
    # x = 1 2 3 4, y = 1 1 2 3: pairs (1,2) tied in y; the other 5 concordant.
    # n_c = 5, n_d = 0, n_0 = 6, n_1 = 0, n_2 = 1: τ_b = 5 / sqrt(6 · 5) = 5/sqrt(30)
    #   (mutation: τ-a = 5/6 differs)
    assert kendall_tau_b([1, 2, 3, 4], [1, 1, 2, 3]) == pytest.approx(5 / math.sqrt(30))
    # x = 12 2 1 12 2, y = 1 4 7 1 0 (indices 0..4):
    #   concordant: (0,4), (3,4)                        n_c = 2
    #   discordant: (0,1), (0,2), (1,2), (1,3), (2,3), (2,4)   n_d = 6
    #   tied in x: (0,3), (1,4) -> n_1 = 2; tied in y: (0,3) -> n_2 = 1; n_0 = 10
    #   τ_b = (2 - 6) / sqrt((10 - 2)(10 - 1)) = -4/sqrt(72)
    assert kendall_tau_b([12, 2, 1, 12, 2], [1, 4, 7, 1, 0]) == pytest.approx(-4 / math.sqrt(72))


def test_kendall_undefined_cases() -> None:
    assert kendall_tau_b([1, 1, 1], [1, 2, 3]) is None  # x entirely tied
    assert kendall_tau_b([1], [1]) is None
    assert kendall_tau_b([], []) is None
    with pytest.raises(ValueError, match="length"):
        kendall_tau_b([1, 2], [1])
    with pytest.raises(ValueError, match="different items"):
        kendall_tau({"a": 1}, {"b": 1})


def _tau_b_brute_force(x: Sequence[float], y: Sequence[float]) -> float | None:
    """τ-b as a correlation of pair signs over all ordered pairs, ties counted pair by pair."""

    def sign(v: float) -> int:
        return (v > 0) - (v < 0)

    pairs = [(i, j) for i in range(len(x)) for j in range(len(x)) if i != j]
    a = [sign(x[i] - x[j]) for i, j in pairs]
    b = [sign(y[i] - y[j]) for i, j in pairs]
    numerator = sum(u * v for u, v in zip(a, b, strict=True))
    denominator = math.sqrt(sum(u * u for u in a) * sum(v * v for v in b))
    return None if denominator == 0 else numerator / denominator


def test_kendall_matches_brute_force_on_random_rankings_with_ties() -> None:
    rng = random.Random(20240601)
    for _ in range(500):
        n = rng.randint(2, 9)
        x = [float(rng.randint(1, 4)) for _ in range(n)]  # few values: many ties
        y = [float(rng.randint(1, 4)) for _ in range(n)]
        expected = _tau_b_brute_force(x, y)
        got = kendall_tau_b(x, y)
        if expected is None:
            assert got is None, (x, y)
        else:
            assert got == pytest.approx(expected), (x, y)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=0, max_size=10),
)
def test_kendall_properties(pairs: list[tuple[int, int]]) -> None:
    x = [float(a) for a, _ in pairs]
    y = [float(b) for _, b in pairs]
    tau = kendall_tau_b(x, y)
    expected = _tau_b_brute_force(x, y)
    assert (tau is None) == (expected is None)
    if tau is not None:
        assert tau == pytest.approx(expected)
        assert -1.0 - 1e-12 <= tau <= 1.0 + 1e-12
        assert kendall_tau_b(y, x) == pytest.approx(tau)  # symmetric
        assert kendall_tau_b(x, [-v for v in y]) == pytest.approx(-tau)  # reversal flips it


# --------------------------------------------------------------------------- footrule


def _ranking(order: str) -> dict[str, float]:
    return {item: float(position) for position, item in enumerate(order, start=1)}


def test_footrule_identical_reversed_and_by_hand() -> None:
    assert footrule(_ranking("ABCD"), _ranking("ABCD")) == 0.0
    # n = 4 reversed: |1-4| + |2-3| + |3-2| + |4-1| = 8 = 4²/2 -> 1
    assert footrule(_ranking("ABCD"), _ranking("DCBA")) == 1.0
    # n = 5 reversed: 4 + 2 + 0 + 2 + 4 = 12 = floor(25/2) -> 1
    #   (mutation: seed 002's n²/2 = 12.5 would give 0.96)
    assert footrule(_ranking("ABCDE"), _ranking("EDCBA")) == 1.0
    # one adjacent swap, n = 4: |1-2| + |2-1| = 2; 2/8 = 1/4
    assert footrule(_ranking("ABCD"), _ranking("BACD")) == pytest.approx(1 / 4)
    # ties: A and B share rank 1.5: |1 - 1.5| + |2 - 1.5| = 1; 1/8
    tied = {"A": 1.5, "B": 1.5, "C": 3.0, "D": 4.0}
    assert footrule(_ranking("ABCD"), tied) == pytest.approx(1 / 8)
    assert footrule({"A": 1.0}, {"A": 1.0}) == 0.0
    with pytest.raises(ValueError, match="different items"):
        footrule(_ranking("AB"), _ranking("AC"))


@pytest.mark.parametrize("n", range(1, 8))
def test_footrule_normaliser_is_the_exact_maximum(n: int) -> None:
    """floor(n²/2) is the largest Σ|σ(i) - σ'(i)| over all pairs of permutations of n items."""
    items = [str(i) for i in range(n)]
    base = {item: float(i + 1) for i, item in enumerate(items)}
    largest = 0.0
    for perm in itertools.permutations(range(1, n + 1)):
        other = {item: float(r) for item, r in zip(items, perm, strict=True)}
        value = footrule(base, other)
        assert 0.0 <= value <= 1.0
        largest = max(largest, value)
    assert largest == 1.0 or n == 1


# --------------------------------------------------------------------------- ranking stability


def test_ranking_stability_by_hand() -> None:
    def run(a: float, b: float, c: float) -> dict[str, ModelMetrics]:
        return {
            "A": ModelMetrics(FinalFix=a, TurnsToFix=a * 10),
            "B": ModelMetrics(FinalFix=b, TurnsToFix=b * 10),
            "C": ModelMetrics(FinalFix=c, TurnsToFix=None),
        }

    runs = [run(0.9, 0.8, 0.7), run(0.95, 0.85, 0.6), run(0.9, 0.6, 0.7)]
    result = ranking_stability(runs, ("FinalFix", "TurnsToFix"))
    # FinalFix rankings: run0 A>B>C, run1 A>B>C, run2 A>C>B.
    #   τ(0,1) = 1; τ(0,2) = τ(1,2): pairs AB +, AC +, BC - -> (2 - 1)/3 = 1/3
    #   mean = (1 + 1/3 + 1/3)/3 = 5/9
    assert result.per_metric["FinalFix"] == pytest.approx(5 / 9)
    # TurnsToFix (lower first; C undefined -> last): run0 B(8) A(9) C, run1 B A C,
    # run2 B(6) A(9) C: all identical -> 1
    assert result.per_metric["TurnsToFix"] == pytest.approx(1.0)
    # average over metrics: (5/9 + 1)/2 = 7/9 (Table VI's Avg. column)
    assert result.average == pytest.approx(7 / 9)
    assert result.pairs == 3
    with pytest.raises(ValueError, match="two runs"):
        ranking_stability(runs[:1])


def test_ranking_stability_constant_metric_is_undefined() -> None:
    runs = [
        {"A": ModelMetrics(FinalFix=1.0, BP=0.9), "B": ModelMetrics(FinalFix=1.0, BP=0.8)},
        {"A": ModelMetrics(FinalFix=1.0, BP=0.7), "B": ModelMetrics(FinalFix=1.0, BP=0.8)},
    ]
    # FinalFix ties every model in every run: τ undefined; BP swaps A and B: τ = -1
    result = ranking_stability(runs, ("FinalFix", "BP"))
    assert result.per_metric == {"FinalFix": None, "BP": -1.0}
    assert result.average == -1.0


def test_protocol_agreement_by_hand() -> None:
    """Three models under three protocols, ranked on FinalFix and TurnsToFix (lower first).

    pair:    FinalFix A .9 > B .6 > C .3          Turns A 2 < B 3 < C 4
    vanilla: FinalFix C .9 > B .6 > A .3 (rev.)   Turns A 2 < B 3 < C 4 (same)
    simple:  FinalFix B .9 > A .6 > C .3 (swap)   Turns all 3.0 (every model tied: rank 2)
    """
    def mm(final: float, turns: float) -> ModelMetrics:
        return ModelMetrics(FinalFix=final, TurnsToFix=turns)

    by_protocol = {
        "pair": {"A": mm(.9, 2), "B": mm(.6, 3), "C": mm(.3, 4)},
        "vanilla": {"A": mm(.3, 2), "B": mm(.6, 3), "C": mm(.9, 4)},
        "simple": {"A": mm(.6, 3), "B": mm(.9, 3), "C": mm(.3, 3), "D": mm(1., 1)},
        "solo": {"A": mm(.5, 1)},  # one shared model: no ranking, no pair
    }
    got = {(g.a, g.b): g for g in protocol_agreement(by_protocol, ("FinalFix", "TurnsToFix"))}
    assert list(got) == [("pair", "vanilla"), ("pair", "simple"), ("vanilla", "simple")]
    pv, ps, vs = got.values()
    # reversed FinalFix: |1-3| + 0 + |3-1| = 4 = floor(9/2) -> 1; same Turns -> 0
    assert pv.footrule == {"FinalFix": 1.0, "TurnsToFix": 0.0} and pv.average_footrule == .5
    assert pv.tau == {"FinalFix": -1.0, "TurnsToFix": 1.0} and pv.average_tau == 0.0
    assert pv.models == 3
    # D is only under simple: compared on A, B, C. Swap of A and B: (1 + 1 + 0) / 4 = .5;
    # Turns 1, 2, 3 against 2, 2, 2: (1 + 0 + 1) / 4 = .5, and τ-b undefined (all tied)
    assert ps.models == 3
    assert ps.footrule == {"FinalFix": .5, "TurnsToFix": .5}
    assert ps.tau["FinalFix"] == pytest.approx(1 / 3) and ps.tau["TurnsToFix"] is None
    assert ps.average_tau == pytest.approx(1 / 3)
    # vanilla C, B, A against simple B, A, C: ranks A 3/2, B 2/1, C 1/3 -> 1 + 1 + 2 = 4 -> 1
    assert vs.footrule["FinalFix"] == 1.0
