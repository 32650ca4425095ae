"""Model rankings and run-to-run statistics over model-level metrics.

This module owns what seed 000 builds on top of the metrics: metric-wise ranks and the
average rank (Table IV), mean ± standard deviation over repeated runs (Table V),
Kendall's τ-b between the model rankings of every pair of runs (Table VI), and the
normalised Spearman footrule between two rankings (seed 002), applied to every pair of
protocols run on the same models (:func:`protocol_agreement`). It is part of the pure
protocol core: synchronous, no I/O, no scipy; each statistic is a short exact formula.

Conventions (``docs/METRICS.md`` states them for readers of results):

* rank 1 is best; every metric is higher-is-better except TurnsToFix;
* ties (exactly equal floats) share the average of the positions they span;
* an undefined (``None``) metric ranks after every defined value, all undefined models
  tied with each other;
* standard deviations are sample deviations (n - 1) unless ``ddof=0`` is asked for;
* the footrule is normalised by the exact maximum floor(n²/2).
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Final

import msgspec

from .metrics import METRIC_NAMES, ModelMetrics
from .registry import BY_NAME

__all__ = [
    "HIGHER_IS_BETTER",
    "TABLE_IV_METRICS",
    "TABLE_V_METRICS",
    "MeanStd",
    "ProtocolAgreement",
    "RankingStability",
    "average_ranks",
    "footrule",
    "kendall_tau",
    "kendall_tau_b",
    "mean_std",
    "metric_ranks",
    "metric_value",
    "protocol_agreement",
    "rank_values",
    "ranking_stability",
    "run_statistics",
]

#: Direction of every metric of :class:`ModelMetrics`: True when a higher value is better.
HIGHER_IS_BETTER: Final[Mapping[str, bool]] = MappingProxyType(
    {name: BY_NAME[name].higher_is_better for name in METRIC_NAMES}
)

#: The nine metrics of the paper's metric-wise ranking (Table IV; "Net Gain" is GC).
TABLE_IV_METRICS: Final = (
    "InitialFix",
    "TRS",
    "BRG",
    "BP",
    "PMR",
    "HE",
    "FinalFix",
    "GC",
    "TurnsToFix",
)

#: The metrics shared by controlled and vanilla feedback (Tables V and VI).
TABLE_V_METRICS: Final = ("RepairRate", "PreservationRate", "FinalFix", "TurnsToFix")


def metric_value(metrics: ModelMetrics, name: str) -> float | None:
    """The value of metric ``name`` in ``metrics``; ``ValueError`` for an unknown name."""
    _check_names((name,))
    value: float | None = getattr(metrics, name)
    return value


def _check_names(names: Iterable[str]) -> None:
    unknown = [name for name in names if name not in HIGHER_IS_BETTER]
    if unknown:
        raise ValueError(
            f"unknown metric {unknown[0]!r}; expected one of {', '.join(METRIC_NAMES)}"
        )


# --------------------------------------------------------------------------- ranks


def rank_values(
    values: Mapping[str, float | None], *, higher_is_better: bool = True
) -> dict[str, float]:
    """Rank 1 = best; ties share their average position; ``None`` ranks last.

    Example: ``{a: .9, b: .5, c: .9, d: None}`` gives ``{a: 1.5, c: 1.5, b: 3, d: 4}``.
    Two undefined values tie with each other after every defined one. NaN is refused.
    """
    defined = {key: v for key, v in values.items() if v is not None}
    if any(math.isnan(v) for v in defined.values()):
        raise ValueError("cannot rank NaN")
    order = sorted(defined, key=lambda key: -defined[key] if higher_is_better else defined[key])
    ranks: dict[str, float] = {}
    position = 0
    for _, group_iter in itertools.groupby(order, key=lambda key: defined[key]):
        group = list(group_iter)
        average = position + (len(group) + 1) / 2
        ranks.update(dict.fromkeys(group, average))
        position += len(group)
    undefined = [key for key, v in values.items() if v is None]
    if undefined:
        ranks.update(dict.fromkeys(undefined, position + (len(undefined) + 1) / 2))
    return {key: ranks[key] for key in values}


def metric_ranks(
    metrics: Mapping[str, ModelMetrics], metric_names: Sequence[str] = TABLE_IV_METRICS
) -> dict[str, dict[str, float]]:
    """``{metric: {model: rank}}`` across the models of ``metrics``, per metric direction."""
    _check_names(metric_names)
    return {
        name: rank_values(
            {model: metric_value(m, name) for model, m in metrics.items()},
            higher_is_better=HIGHER_IS_BETTER[name],
        )
        for name in metric_names
    }


def average_ranks(
    metrics: Mapping[str, ModelMetrics], metric_names: Sequence[str] = TABLE_IV_METRICS
) -> dict[str, float]:
    """Each model's mean rank over ``metric_names`` (Table IV's last column; lower is better).

    A descriptive profile, not a principled score (seed 000 says the same).
    """
    if not metric_names:
        raise ValueError("average rank over no metric")
    ranks = metric_ranks(metrics, metric_names)
    return {
        model: math.fsum(ranks[name][model] for name in metric_names) / len(metric_names)
        for model in metrics
    }


# --------------------------------------------------------------------------- run statistics


class MeanStd(msgspec.Struct, frozen=True, kw_only=True):
    """Mean ± standard deviation of one metric over ``n`` runs where it was defined.

    ``std`` uses ``ddof`` (1: sample deviation, the default); it is ``None`` when
    n <= ddof, and ``mean`` is ``None`` when n = 0.
    """

    mean: float | None
    std: float | None
    n: int
    ddof: int = 1


def mean_std(values: Iterable[float | None], *, ddof: int = 1) -> MeanStd:
    """Mean and standard deviation of the defined values (``None`` values are skipped).

    std = sqrt(Σ (x - mean)² / (n - ddof)); ddof = 1 is the sample deviation (default),
    ddof = 0 the population deviation.
    """
    if ddof < 0:
        raise ValueError(f"ddof must be >= 0, got {ddof}")
    defined = [v for v in values if v is not None]
    n = len(defined)
    if n == 0:
        return MeanStd(mean=None, std=None, n=0, ddof=ddof)
    mean = math.fsum(defined) / n
    if n <= ddof:
        return MeanStd(mean=mean, std=None, n=n, ddof=ddof)
    variance = math.fsum((v - mean) ** 2 for v in defined) / (n - ddof)
    return MeanStd(mean=mean, std=math.sqrt(variance), n=n, ddof=ddof)


def _same_models(runs: Sequence[Mapping[str, ModelMetrics]]) -> list[str]:
    if not runs:
        raise ValueError("no runs")
    models = set(runs[0])
    for index, run in enumerate(runs[1:], start=1):
        if set(run) != models:
            raise ValueError(f"run {index} has models {sorted(run)}, run 0 has {sorted(models)}")
    return sorted(models)


def run_statistics(
    runs: Sequence[Mapping[str, ModelMetrics]],
    metric_names: Sequence[str] = TABLE_V_METRICS,
    *,
    ddof: int = 1,
) -> dict[str, dict[str, MeanStd]]:
    """``{model: {metric: mean ± std over runs}}`` (Table V); every run has the same models."""
    _check_names(metric_names)
    models = _same_models(runs)
    return {
        model: {
            name: mean_std((metric_value(run[model], name) for run in runs), ddof=ddof)
            for name in metric_names
        }
        for model in models
    }


# --------------------------------------------------------------------------- rank agreement


def _sign(x: float) -> int:
    return (x > 0) - (x < 0)


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Kendall's τ-b between paired sequences: (n_c - n_d) / sqrt((n_0 - n_1)(n_0 - n_2)).

    n_c / n_d count concordant / discordant pairs, n_0 = n(n-1)/2, n_1 and n_2 the pairs
    tied in x and in y. Ties in one sequence count in neither n_c nor n_d. ``None`` when
    the denominator is 0 (fewer than two items, or one sequence entirely tied).
    O(n²), which is nothing for a handful of models.
    """
    if len(x) != len(y):
        raise ValueError(f"sequences of different length: {len(x)} and {len(y)}")
    n = len(x)
    balance = 0
    for i in range(n):
        for j in range(i + 1, n):
            balance += _sign(x[i] - x[j]) * _sign(y[i] - y[j])
    n0 = n * (n - 1) // 2
    n1 = sum(c * (c - 1) // 2 for c in Counter(x).values())
    n2 = sum(c * (c - 1) // 2 for c in Counter(y).values())
    denominator = (n0 - n1) * (n0 - n2)
    if denominator == 0:
        return None
    return balance / math.sqrt(denominator)


def _paired(a: Mapping[str, float], b: Mapping[str, float]) -> tuple[list[float], list[float]]:
    if set(a) != set(b):
        raise ValueError(f"rankings over different items: {sorted(a)} and {sorted(b)}")
    keys = sorted(a)
    return [a[k] for k in keys], [b[k] for k in keys]


def kendall_tau(a: Mapping[str, float], b: Mapping[str, float]) -> float | None:
    """τ-b between two rankings (or scores) keyed by model; both must cover the same models."""
    return kendall_tau_b(*_paired(a, b))


def footrule(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    """Normalised Spearman footrule Σ_i |a(i) - b(i)| / floor(n²/2) between two rankings.

    ``a`` and ``b`` map each item to its rank (1..n, average ranks for ties). 0 means
    identical rankings, 1 a reversal. floor(n²/2) is the exact maximum over permutations:
    seed 002's n²/2 for even n, and (n² - 1)/2 for odd n, where n²/2 would keep a
    reversal below 1. Fewer than two items: 0.
    """
    xs, ys = _paired(a, b)
    maximum = len(xs) ** 2 // 2
    if maximum == 0:
        return 0.0
    return math.fsum(abs(x - y) for x, y in zip(xs, ys, strict=True)) / maximum


class RankingStability(msgspec.Struct, frozen=True, kw_only=True):
    """Kendall τ between model rankings of repeated runs, per metric and averaged (Table VI).

    ``per_metric[m]`` is the mean τ over run pairs where τ is defined (``None`` if in
    none); ``average`` is the mean over metrics with a defined value; ``pairs`` is the
    number of run pairs compared.
    """

    per_metric: dict[str, float | None]
    average: float | None
    pairs: int


def ranking_stability(
    runs: Sequence[Mapping[str, ModelMetrics]], metric_names: Sequence[str] = TABLE_V_METRICS
) -> RankingStability:
    """Rank the models in each run per metric, then average τ-b over every pair of runs.

    Ranks carry each metric's direction and tie rule, so TurnsToFix is ranked lower-first
    and an undefined metric ranks last, exactly as in the leaderboard.
    """
    _check_names(metric_names)
    models = _same_models(runs)
    if len(runs) < 2:
        raise ValueError("ranking stability needs at least two runs")
    per_metric: dict[str, float | None] = {}
    pairs = list(itertools.combinations(range(len(runs)), 2))
    for name in metric_names:
        ranked = [metric_ranks({m: run[m] for m in models}, (name,))[name] for run in runs]
        taus = [kendall_tau(ranked[i], ranked[j]) for i, j in pairs]
        defined = [tau for tau in taus if tau is not None]
        per_metric[name] = math.fsum(defined) / len(defined) if defined else None
    values = [v for v in per_metric.values() if v is not None]
    average = math.fsum(values) / len(values) if values else None
    return RankingStability(per_metric=per_metric, average=average, pairs=len(pairs))


class ProtocolAgreement(msgspec.Struct, frozen=True, kw_only=True):
    """How two protocols rank the same models (seed 002: do conclusions survive a change
    of feedback protocol?). Footrule 0 = the same ranking, 1 = reversed; τ-b is 1 and
    -1 there, None where undefined (every model tied under one protocol)."""

    a: str
    b: str
    models: int
    footrule: dict[str, float]
    average_footrule: float
    tau: dict[str, float | None]
    average_tau: float | None


def protocol_agreement(
    by_protocol: Mapping[str, Mapping[str, ModelMetrics]],
    metric_names: Sequence[str] = TABLE_V_METRICS,
) -> list[ProtocolAgreement]:
    """Footrule and τ-b between the model rankings of every pair of protocols, per metric.

    Each pair compares the models both protocols ran (pairs sharing fewer than two
    models are left out: one model has no ranking); pairs come in the order of
    ``by_protocol``. Ranks follow :func:`metric_ranks` (TurnsToFix lower-first, undefined
    last).
    """
    _check_names(metric_names)
    out: list[ProtocolAgreement] = []
    for a, b in itertools.combinations(by_protocol, 2):
        common = sorted(set(by_protocol[a]) & set(by_protocol[b]))
        if len(common) < 2:
            continue
        ra = metric_ranks({m: by_protocol[a][m] for m in common}, metric_names)
        rb = metric_ranks({m: by_protocol[b][m] for m in common}, metric_names)
        rules = {name: footrule(ra[name], rb[name]) for name in metric_names}
        taus = {name: kendall_tau(ra[name], rb[name]) for name in metric_names}
        defined = [t for t in taus.values() if t is not None]
        out.append(ProtocolAgreement(
            a=a, b=b, models=len(common), footrule=rules,
            average_footrule=math.fsum(rules.values()) / len(rules),
            tau=taus, average_tau=math.fsum(defined) / len(defined) if defined else None))
    return out
