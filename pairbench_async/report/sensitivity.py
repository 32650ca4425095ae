"""Hyperparameter sensitivity (seed 000, RQ3 / Table VII): does the model ranking survive a
change of setting?

Seed 000, Section V-C: "RQ3 evaluates whether PAIR-BENCH's model comparisons are robust to
varied hyperparameters. [...] We vary the total interaction budget (α), the per-scenario
refinement budget (β), and the feedback model (DeepSeek V3.2). As seen in Table VII, the
relative ordering is largely stable across settings: Gemini consistently ranks highest in
Final Fix Rate and Hint Efficiency, followed by Llama and Mistral, yielding Kendall's τ=1.0."
Table VII shows, per setting and model, Initial Fix, Final Fix, Progress Monotonicity and
Hint Efficiency, and "GREEN, BLUE, AND ORANGE MARK THE TOP-1, TOP-2, AND TOP-3 VALUES".

A ``--sweep`` folder holds one run per setting; this module turns each setting's records
into model metrics per protocol (runs pooled, as Table III), and compares the settings'
model rankings pairwise with Kendall's τ-b (:func:`.ranking.kendall_tau`), per Table VII
metric and on the average rank over those metrics, for each protocol. Settings whose model
sets differ are compared on the models they share; a pair sharing fewer than two models has
no τ and says why. The protocols' agreement (:func:`.ranking.protocol_agreement`) is
computed within every setting too. Pure: records in, values out.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

import msgspec

from ..runlog.records import Record, RunManifest
from .leaderboard import trajectories
from .metrics import ModelMetrics, compute_metrics
from .ranking import (
    HIGHER_IS_BETTER,
    ProtocolAgreement,
    average_ranks,
    kendall_tau,
    metric_ranks,
    protocol_agreement,
)
from .trajectory import Trajectory
from .trajectory_metrics import mean_of_defined

__all__ = [
    "AVERAGE_RANK",
    "TABLE_VII_METRICS",
    "Sensitivity",
    "SettingInfo",
    "SettingPair",
    "podium",
    "protocol_metrics",
    "sensitivity",
    "sensitivity_json",
    "setting_pairs",
]

#: Table VII's columns, in the paper's order (all higher-is-better).
TABLE_VII_METRICS = ("InitialFix", "FinalFix", "PMR", "HE")
#: The key of the τ between the average ranks over :data:`TABLE_VII_METRICS`.
AVERAGE_RANK = "AverageRank"


class SettingInfo(msgspec.Struct, frozen=True, kw_only=True):
    """One setting of the sweep as its manifest describes it."""

    name: str
    #: what the sweep set for this run (``{"turns": 6}``); empty when not recorded
    values: dict[str, int | str] = {}
    turns: int | None = None
    scenario_turns: int | None = None
    feedback: str = ""
    runs: int = 0
    #: finished episodes the setting's metrics are computed on
    episodes: int = 0
    #: the completeness banner of an unfinished run ("" when every episode finished)
    notice: str = ""


class SettingPair(msgspec.Struct, frozen=True, kw_only=True):
    """τ-b between the model rankings of settings ``a`` and ``b`` under one protocol.

    ``models`` are the models both settings ran (the τ is computed over them);
    ``only_a``/``only_b`` the others. ``tau`` maps every Table VII metric and
    :data:`AVERAGE_RANK` to τ-b, None where undefined (every common model tied in one of
    the settings); ``reason`` says why the whole pair has no τ ("" when it has one).
    """

    a: str
    b: str
    protocol: str
    models: list[str]
    only_a: list[str] = []
    only_b: list[str] = []
    tau: dict[str, float | None] = {}
    reason: str = ""


class Sensitivity(msgspec.Struct, frozen=True, kw_only=True):
    """Table VII and the τ between settings: everything the sweep report adds."""

    settings: list[SettingInfo]
    #: the setting whose full report (Tables III-VI...) the page shows
    main: str
    #: {protocol: {setting: {model: metrics}}}, protocols and settings in report order
    metrics: dict[str, dict[str, dict[str, ModelMetrics]]]
    pairs: list[SettingPair]
    #: {protocol: {metric or AVERAGE_RANK: mean τ over the pairs where it is defined}}
    mean_tau: dict[str, dict[str, float | None]]
    #: {setting: footrule and τ between its protocols' rankings}, settings with >= 2 protocols
    agreement: dict[str, list[ProtocolAgreement]]


def protocol_metrics(records: Sequence[Record]) -> dict[str, dict[str, ModelMetrics]]:
    """``{protocol: {model: metrics}}`` of one run's finished episodes, runs pooled (Table III)."""
    trajs, _, _ = trajectories(records, with_protocol=True)
    groups: dict[str, dict[str, list[Trajectory]]] = {}
    for traj in trajs:
        groups.setdefault(traj.protocol or "", {}).setdefault(traj.model, []).append(traj)
    return {p: {m: compute_metrics(items) for m, items in sorted(models.items())}
            for p, models in groups.items()}


def podium(values: Mapping[str, float | None], *, higher_is_better: bool = True,
           places: int = 3) -> dict[str, int]:
    """``{key: k}`` for the keys holding the k-th best distinct value, k = 1..``places``; 0 else.

    Table VII colours "the top-1, top-2, and top-3 values" within each setting: tied
    models share the value's place (dense ranking), undefined values get none, and a
    column with fewer than two distinct defined values is not marked (nothing to tell apart).
    """
    distinct = sorted({v for v in values.values() if v is not None}, reverse=higher_is_better)
    if len(distinct) < 2:
        return dict.fromkeys(values, 0)
    place = {v: k for k, v in enumerate(distinct[:places], start=1)}
    return {key: 0 if v is None else place.get(v, 0) for key, v in values.items()}


def _pair(a: str, b: str, protocol: str, ma: Mapping[str, ModelMetrics],
          mb: Mapping[str, ModelMetrics], metric_names: Sequence[str]) -> SettingPair:
    common = sorted(set(ma) & set(mb))
    only_a, only_b = sorted(set(ma) - set(mb)), sorted(set(mb) - set(ma))
    if len(common) < 2:
        return SettingPair(a=a, b=b, protocol=protocol, models=common, only_a=only_a,
                           only_b=only_b, tau=dict.fromkeys([*metric_names, AVERAGE_RANK]),
                           reason=f"{len(common)} common model{'s' * (len(common) != 1)}: "
                                  "a ranking needs two")
    sa = {m: ma[m] for m in common}
    sb = {m: mb[m] for m in common}
    ra, rb = metric_ranks(sa, metric_names), metric_ranks(sb, metric_names)
    tau = {name: kendall_tau(ra[name], rb[name]) for name in metric_names}
    tau[AVERAGE_RANK] = kendall_tau(average_ranks(sa, metric_names),
                                    average_ranks(sb, metric_names))
    return SettingPair(a=a, b=b, protocol=protocol, models=common, only_a=only_a,
                       only_b=only_b, tau=tau)


def setting_pairs(by_setting: Mapping[str, Mapping[str, ModelMetrics]], protocol: str,
                  metric_names: Sequence[str] = TABLE_VII_METRICS) -> list[SettingPair]:
    """τ-b between the model rankings of every pair of settings (in ``by_setting``'s order).

    Ranks follow :func:`.ranking.metric_ranks` (each metric's direction, ties share their
    average position, undefined last), over the models both settings ran; the average
    rank is :func:`.ranking.average_ranks` over ``metric_names`` (lower is better in both
    settings, so τ compares them as it compares a metric).
    """
    unknown = [name for name in metric_names if name not in HIGHER_IS_BETTER]
    if unknown:
        raise ValueError(f"unknown metric {unknown[0]!r}")
    return [_pair(a, b, protocol, by_setting[a], by_setting[b], metric_names)
            for a, b in itertools.combinations(by_setting, 2)]


def _info(name: str, manifest: RunManifest | None, episodes: int, notice: str) -> SettingInfo:
    if manifest is None:
        return SettingInfo(name=name, episodes=episodes, notice=notice)
    turns, beta = manifest.params.get("turns"), manifest.params.get("scenario_turns")
    return SettingInfo(
        name=name, values=dict(manifest.sweep.values) if manifest.sweep is not None else {},
        turns=turns if isinstance(turns, int) else None,
        scenario_turns=beta if isinstance(beta, int) else None,
        feedback=manifest.feedback, runs=manifest.runs, episodes=episodes, notice=notice)


def sensitivity(
    settings: Sequence[tuple[str, Sequence[Record], RunManifest | None, str]],
    *,
    main: str | None = None,
    metric_names: Sequence[str] = TABLE_VII_METRICS,
) -> Sensitivity:
    """Table VII and the τ between settings from each setting's (name, records, manifest,
    completeness notice), in sweep order; ``main`` defaults to the first setting.

    Protocols appear in the order the settings' manifests list them (then by name); a
    protocol missing from one setting is compared among the settings that ran it.
    """
    if not settings:
        raise ValueError("a sweep of no setting")
    names = [name for name, _, _, _ in settings]
    if main is None:
        main = names[0]
    elif main not in names:
        raise ValueError(f"setting {main!r} is not in the sweep ({', '.join(names)})")
    def in_run_order(found: dict[str, dict[str, ModelMetrics]], manifest: RunManifest | None
                     ) -> dict[str, dict[str, ModelMetrics]]:
        """The protocols as the run listed them (records arrive in completion order)."""
        listed = [p for p in (manifest.protocols if manifest else []) if p in found]
        return {p: found[p] for p in [*listed, *sorted(set(found) - set(listed))]}

    per_setting = {name: in_run_order(protocol_metrics(records), manifest)
                   for name, records, manifest, _ in settings}
    infos = [_info(name, manifest, sum(m.instances for p in per_setting[name].values()
                                       for m in p.values()), notice)
             for name, _, manifest, notice in settings]
    protocols: list[str] = []
    for name in names:
        protocols += [p for p in per_setting[name] if p not in protocols]
    metrics = {p: {name: per_setting[name][p] for name in names if p in per_setting[name]}
               for p in protocols}
    pairs = [pair for p in protocols for pair in setting_pairs(metrics[p], p, metric_names)]
    keys = [*metric_names, AVERAGE_RANK]
    mean_tau = {p: {k: mean_of_defined([g.tau[k] for g in pairs if g.protocol == p]) for k in keys}
                for p in protocols}
    agreement = {name: found for name in names
                 if (found := protocol_agreement(per_setting[name]))}
    return Sensitivity(settings=infos, main=main, metrics=metrics, pairs=pairs,
                       mean_tau=mean_tau, agreement=agreement)


def sensitivity_json(s: Sensitivity) -> dict[str, object]:
    """The sweep's additions to ``report --json``: the settings' parameters, Table VII (its four metrics,
    rates as fractions), the τ of every pair of settings, their means, the protocols'
    agreement per setting."""
    return {
        "main_setting": s.main,
        "setting_info": [msgspec.to_builtins(info) for info in s.settings],
        "table_vii": {p: {setting: {model: {m: getattr(row, m) for m in TABLE_VII_METRICS}
                                    for model, row in models.items()}
                          for setting, models in per.items()}
                      for p, per in s.metrics.items()},
        "setting_tau": [msgspec.to_builtins(pair) for pair in s.pairs],
        "setting_tau_mean": s.mean_tau,
        "protocol_agreement": {setting: [msgspec.to_builtins(g) for g in found]
                               for setting, found in s.agreement.items()},
    }
