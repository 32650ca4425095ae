"""The numbers of the visual report: a run's records turned into a :class:`Report`.

Every number of Tables III-VI, Figs. 3-6, the per-protocol comparison, the protocols'
ranking agreement, seed 002's test-case accuracy, FixEval's pass@k / TCA@k (and, when
the caller scored them against the dataset, its match-based metrics), token usage and,
for a sweep, Table VII, computed once; :mod:`.layout` lays them out and :mod:`.html` /
:mod:`.figures` render them. Pure: records in, values out. Runs are pooled in Table III
(each (run, instance) episode counts once); Tables V/VI exist only when some protocol has
two or more runs; protocol agreement only with two protocols that share at least two
models.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import msgspec

from ..core.errors import ConfigError
from ..models.prices import PriceBook
from ..runlog.records import EpisodeRecord, Record, RunManifest
from .accuracy import TalkAccuracy, talk_accuracy
from .cost import TokenRow, token_rows
from .leaderboard import trajectories, unprotected_protocols
from .metrics import (
    ClosureDistribution,
    ModelMetrics,
    closure_distribution,
    compute_metrics,
    cumulative_final_fix,
)
from .pass_at_k import PassAtK, summarise_samples
from .precision import PrecisionSummary
from .ranking import (
    TABLE_V_METRICS,
    MeanStd,
    ProtocolAgreement,
    RankingStability,
    average_ranks,
    metric_ranks,
    protocol_agreement,
    ranking_stability,
    run_statistics,
)
from .sensitivity import Sensitivity
from .trajectory import Trajectory
from .trajectory_metrics import pass_rates

__all__ = ["ProtocolView", "Report", "build_report"]




class ProtocolView(msgspec.Struct, frozen=True, kw_only=True):
    """One protocol's numbers: pooled, per run, and the figures' series, keyed by model."""

    protocol: str
    models: dict[str, ModelMetrics]
    runs: dict[int, dict[str, ModelMetrics]]
    closure: dict[str, ClosureDistribution]
    cumulative: dict[str, list[float]]
    #: FixEval's pass@k and TCA@k over the runs (final and turn 0 programs)
    pass_at_k: dict[str, PassAtK] = {}


class Report(msgspec.Struct, frozen=True, kw_only=True):
    """Every number the report shows; rendering reads nothing else."""

    title: str
    manifest: RunManifest | None
    main: str
    protocols: list[str]
    views: dict[str, ProtocolView]
    #: Table IV of the main protocol: {metric: {model: rank}} and the average rank.
    ranks: dict[str, dict[str, float]]
    average_rank: dict[str, float]
    #: Fig. 5: {instance: {model: [p_0..p_tau]}} of the main protocol's first run.
    fig5: dict[str, dict[str, list[float]]]
    fig5_run: int
    #: Table V: {protocol: {model: {metric: mean ± std}}}; empty with a single run.
    robustness: dict[str, dict[str, dict[str, MeanStd]]]
    #: Table VI: {protocol: Kendall τ stability}; empty with a single run.
    stability: dict[str, RankingStability]
    #: protocols whose candidate saw hidden test data (not hidden-test protected)
    unprotected: list[str]
    #: footrule and τ between the model rankings of every pair of protocols (pooled runs)
    agreement: list[ProtocolAgreement]
    #: usage and cost per (candidate, protocol, role, model called)
    tokens: list[TokenRow]
    episodes: int
    errored: int
    unfinished: int
    errors: list[tuple[str, str]]
    #: where the prices of the cost columns came from ("" = no prices given)
    price_source: str = ""
    #: what a reader must know first (an unfinished run, models ranked on common instances)
    notice: str = ""
    #: seed 002: test-case accuracy static vs interactive, the ranking change, word-cap cuts
    accuracy: TalkAccuracy | None = None
    #: repair precision, exact match, BLEU and CodeBLEU per ``model|protocol``
    #: (:func:`.precision.precision_by_model` with the protocol); empty without the dataset
    precision: dict[str, PrecisionSummary] = {}
    #: why precision or CodeBLEU is missing (no dataset, no codebleu package), "" if nothing is
    precision_note: str = ""
    #: were PDB's pseudo-fixed programs run for this report? False with ``--no-bug-check``:
    #: PDB's measures then use only the verdicts the records hold
    bug_check: bool = True
    #: a ``--sweep`` folder's Table VII and τ between settings; this report is then its
    #: main setting's (None for a single run)
    sensitivity: Sensitivity | None = None


def _by_model(trajs: Iterable[Trajectory]) -> dict[str, list[Trajectory]]:
    groups: dict[str, list[Trajectory]] = {}
    for traj in trajs:
        groups.setdefault(traj.model, []).append(traj)
    return {model: groups[model] for model in sorted(groups)}


def _protocol_order(present: Iterable[str], manifest: RunManifest | None) -> list[str]:
    present = set(present)
    listed = [p for p in (manifest.protocols if manifest else []) if p in present]
    rest = sorted(present - set(listed), key=lambda p: (p != "pair", p))
    return listed + rest


def _view(protocol: str, trajs: list[Trajectory], alpha: int | None) -> ProtocolView:
    groups = _by_model(trajs)
    horizon = max(len(t.turns) - 1 for t in trajs)
    horizon = max(horizon, alpha) if alpha is not None else horizon
    runs: dict[int, list[Trajectory]] = {}
    for traj in trajs:
        runs.setdefault(traj.run, []).append(traj)
    return ProtocolView(
        protocol=protocol,
        models={m: compute_metrics(items) for m, items in groups.items()},
        runs={r: {m: compute_metrics(items) for m, items in _by_model(runs[r]).items()}
              for r in sorted(runs)},
        closure={m: closure_distribution(items) for m, items in groups.items()},
        cumulative={m: cumulative_final_fix(items, horizon) for m, items in groups.items()},
        pass_at_k={m: p for m, items in groups.items()
                   if (p := summarise_samples(items)) is not None},
    )


def _choose_instances(trajs: list[Trajectory], run: int, wanted: Sequence[str] | None,
                      count: int) -> dict[str, dict[str, list[float]]]:
    """Fig. 5's instances: the ones asked for, else those where the models differ most."""
    table: dict[str, dict[str, list[float]]] = {}
    for traj in trajs:
        if traj.run == run:
            table.setdefault(traj.instance_id, {})[traj.model] = pass_rates(traj)
    if wanted:
        missing = [i for i in wanted if i not in table]
        if missing:
            raise ConfigError(f"instance {missing[0]!r} has no finished episode in run {run} "
                              f"(known: {', '.join(sorted(table)[:10])}...)")
        return {i: dict(sorted(table[i].items())) for i in wanted}
    n_models = max((len(v) for v in table.values()), default=0)

    def score(item: tuple[str, dict[str, list[float]]]) -> tuple[int, float, int, str]:
        iid, series = item
        finals = [rates[-1] for rates in series.values()]
        return (-len(series), -(max(finals) - min(finals)),
                -max(len(r) for r in series.values()), iid)

    full = [item for item in table.items() if len(item[1]) == n_models]
    return {iid: dict(sorted(series.items())) for iid, series in sorted(full, key=score)[:count]}


def _last_line(error: str | None, limit: int = 200) -> str:
    """The last non-empty line of an error (a traceback's exception line), cut to ``limit``."""
    lines = [line for line in (error or "").splitlines() if line.strip()]
    text = lines[-1].strip() if lines else ""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def build_report(
    records: Sequence[Record],
    manifest: RunManifest | None = None,
    *,
    main_protocol: str | None = None,
    instances: Sequence[str] | None = None,
    fig5_count: int = 3,
    title: str = "PAIR-BENCH report",
    prices: PriceBook | None = None,
    notice: str = "",
    precision: Mapping[str, PrecisionSummary] | None = None,
    precision_note: str = "",
    sensitivity: Sensitivity | None = None,
) -> Report:
    """All numbers of the report from a run's records.

    ``main_protocol`` picks the protocol of Tables III/IV and Figs. 3-6 (default ``pair``
    when present, else the first); ``instances`` picks Fig. 5's instances (default: the
    ``fig5_count`` instances on which the models' final pass rates differ most);
    ``prices`` adds cost columns to the token table (feedback calls are priced as the
    manifest's feedback spec); ``precision`` (keyed ``model|protocol``) and
    ``precision_note`` carry what needs the dataset, scored by the caller.
    ``sensitivity`` (:func:`.sensitivity.sensitivity`) makes it
    the report of a sweep whose main setting ``records`` are, with Table VII added.
    :class:`ConfigError` when there is no finished episode or a choice is unknown.
    """
    trajs, errored, unfinished = trajectories(records, with_protocol=True)
    if not trajs:
        raise ConfigError(f"no finished episode to draw a page of ({errored} errored, "
                          f"{unfinished} unfinished); the text report and --json list the errors by "
                          "cause and every model's row")
    by_protocol: dict[str, list[Trajectory]] = {}
    for traj in trajs:
        by_protocol.setdefault(traj.protocol or "", []).append(traj)
    protocols = _protocol_order(by_protocol, manifest)
    if main_protocol is None:
        main = "pair" if "pair" in by_protocol else protocols[0]
    elif main_protocol in by_protocol:
        main = main_protocol
    else:
        raise ConfigError(f"protocol {main_protocol!r} is not in the records "
                          f"(they have: {', '.join(protocols)})")
    alpha = manifest.params.get("turns") if manifest else None
    views = {p: _view(p, by_protocol[p], alpha if isinstance(alpha, int) else None)
             for p in protocols}
    robustness: dict[str, dict[str, dict[str, MeanStd]]] = {}
    stability: dict[str, RankingStability] = {}
    for p, view in views.items():
        if len(view.runs) < 2:
            continue
        common = sorted(set.intersection(*(set(r) for r in view.runs.values())))
        runs = [{m: r[m] for m in common} for r in view.runs.values()]
        if common:
            robustness[p] = run_statistics(runs, ("InitialFix", *TABLE_V_METRICS))
            stability[p] = ranking_stability(runs)
    main_models = views[main].models
    first_run = min(t.run for t in by_protocol[main])
    return Report(
        title=title, manifest=manifest, main=main, protocols=protocols, views=views,
        ranks=metric_ranks(main_models), average_rank=average_ranks(main_models),
        fig5=_choose_instances(by_protocol[main], first_run, instances, fig5_count),
        fig5_run=first_run, robustness=robustness, stability=stability,
        agreement=protocol_agreement({p: v.models for p, v in views.items()}),
        unprotected=unprotected_protocols(records),
        tokens=token_rows(records, protocols, prices=prices,
                          feedback=manifest.feedback if manifest else None,
                          validator=manifest.validator if manifest else None),
        episodes=len(trajs), errored=errored, unfinished=unfinished,
        errors=[(r.episode_id, _last_line(r.error)) for r in records
                if isinstance(r, EpisodeRecord) and r.status == "error"],
        price_source=prices.source if prices is not None else "",
        notice=notice,
        accuracy=talk_accuracy(records, protocols),
        precision=dict(precision or {}),
        precision_note=precision_note,
        sensitivity=sensitivity,
    )
