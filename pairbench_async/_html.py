"""The visual report of a run: the paper's Section V tables and figures as HTML and Markdown.

Owns three steps, each a function over plain values so it can be tested without a run
directory or a browser:

1. :func:`build_report` turns records (and the manifest) into a :class:`Report`: every
   number of Tables III-VI, Figs. 3-6, the per-protocol comparison and token usage;
2. :func:`report_sections` lays a report out as sections of tables whose cells carry
   their best/worst marks, so HTML and Markdown show the same thing;
3. :func:`render_html` / :func:`render_markdown` print the sections, and
   :func:`draw_figures` draws the figures to PNG bytes with matplotlib's object API
   (Agg canvas, imported lazily, no pyplot and so no global figure state).

The page is self-contained (figures are ``data:`` URIs, the CSS is inline, no
JavaScript, no external resource), so it can be mailed or archived as one file. All
text that comes from a run (model names, instance ids, errors) is escaped.

Layout decisions: Tables III/IV and Figs. 3-6 describe one *main* protocol (``pair``
when the run has it: the paper's Table III is PAIR-BENCH only); every protocol appears
in the comparison section and in Tables V/VI, whose "Setting" is the protocol. Runs are
pooled in Table III (each (run, instance) episode counts once); Tables V/VI exist only
when some protocol has two or more runs. Best and worst are marked per column among
the main protocol's models, following each metric's direction; ties share a mark and a
column whose defined values are all equal has none.
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Iterable, Mapping, Sequence
from typing import Final, Literal

import msgspec

from ._errors import ConfigError
from ._metrics import (
    ClosureDistribution,
    ModelMetrics,
    Trajectory,
    closure_distribution,
    compute_metrics,
    cumulative_final_fix,
    pass_rates,
)
from ._ranking import (
    HIGHER_IS_BETTER,
    TABLE_IV_METRICS,
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
from ._report import (
    PriceBook,
    TokenRow,
    cost_summary,
    format_cost,
    token_rows,
    trajectories,
)
from ._runlog import EpisodeRecord, Record, RunManifest

__all__ = [
    "FIGURES",
    "Cell",
    "Report",
    "Section",
    "Table",
    "TokenRow",
    "build_report",
    "draw_figures",
    "extremes",
    "html_table",
    "leaderboard_table",
    "markdown_table",
    "render_html",
    "render_markdown",
    "report_sections",
]

Mark = Literal["", "best", "worst"]

#: Figure keys in page order; each is written as ``<key>.png``.
FIGURES: Final = ("fig3", "fig4", "fig5", "fig6", "fig7")

#: Table III: (metric, label, column group) in the paper's order, plus HCC (Fig. 4).
TABLE_III: Final = (
    ("InitialFix", "Initial Fix (%) ↑", "Before feedback"),
    ("TRS", "Targeted Repair (%) ↑", "Interactive repair"),
    ("BRG", "Broader Repair (%) ↑", "Interactive repair"),
    ("BP", "Behavior Preservation (%) ↑", "Interactive repair"),
    ("PMR", "Progress Monotonicity (%) ↑", "Interactive repair"),
    ("HE", "Hint Efficiency (0-6) ↑", "Interactive repair"),
    ("FinalFix", "Final Fix (%) ↑", "After feedback / outcome"),
    ("GC", "Gap Closure (%) ↑", "After feedback / outcome"),
    ("TurnsToFix", "Turns to Fix ↓", "After feedback / outcome"),
    ("HCC", "Hinted Closed Coverage (%) ↑", "After feedback / outcome"),
)
_LABELS: Final = {
    "InitialFix": "Initial Fix", "TRS": "Targeted Repair", "BRG": "Broader Repair",
    "BP": "Behavior Preservation", "PMR": "Progress Monotonicity", "HE": "Hint Efficiency",
    "FinalFix": "Final Fix", "GC": "Gap Closure", "TurnsToFix": "Turns to Fix",
    "HCC": "Hinted Closed Coverage", "RepairRate": "Repair Rate",
    "PreservationRate": "Preservation Rate",
}
_PERCENT: Final = frozenset(
    {"InitialFix", "TRS", "BRG", "BP", "PMR", "GC", "FinalFix", "HCC", "RepairRate",
     "PreservationRate"}
)
#: The per-protocol comparison's metrics (those every protocol defines).
COMPARISON: Final = ("InitialFix", "FinalFix", "GC", "RepairRate", "PreservationRate", "PMR",
                     "TurnsToFix")
_LEVELS: Final = ("L1", "L2", "L3", "L4", "L5", "L6", "unresolved")
_PALETTE: Final = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                   "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
_LEVEL_COLOURS: Final = ("#1a9850", "#66bd63", "#a6d96a", "#fee08b", "#fdae61", "#f46d43",
                         "#bdbdbd")


# --------------------------------------------------------------------------- numbers


class ProtocolView(msgspec.Struct, frozen=True, kw_only=True):
    """One protocol's numbers: pooled, per run, and the figures' series, keyed by model."""

    protocol: str
    models: dict[str, ModelMetrics]
    runs: dict[int, dict[str, ModelMetrics]]
    closure: dict[str, ClosureDistribution]
    cumulative: dict[str, list[float]]


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
) -> Report:
    """All numbers of the report from a run's records.

    ``main_protocol`` picks the protocol of Tables III/IV and Figs. 3-6 (default ``pair``
    when present, else the first); ``instances`` picks Fig. 5's instances (default: the
    ``fig5_count`` instances on which the models' final pass rates differ most);
    ``prices`` adds cost columns to the token table (feedback calls are priced as the
    manifest's feedback spec).
    :class:`ConfigError` when there is no finished episode or a choice is unknown.
    """
    trajs, errored, unfinished = trajectories(records, with_protocol=True)
    if not trajs:
        raise ConfigError(f"no finished episode to report ({errored} errored, "
                          f"{unfinished} unfinished)")
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
        tokens=token_rows(records, protocols, prices=prices,
                          feedback=manifest.feedback if manifest else None),
        episodes=len(trajs), errored=errored, unfinished=unfinished,
        errors=[(r.episode_id, _last_line(r.error)) for r in records
                if isinstance(r, EpisodeRecord) and r.status == "error"],
        price_source=prices.source if prices is not None else "",
    )


# --------------------------------------------------------------------------- layout


class Cell(msgspec.Struct, frozen=True):
    """One table cell: plain text (escaped on output), a best/worst mark, a superscript."""

    text: str
    mark: Mark = ""
    sup: str = ""


class Table(msgspec.Struct, frozen=True, kw_only=True):
    """A table both renderers print; ``groups`` are (label, span) header groups."""

    header: list[str]
    rows: list[list[Cell]]
    groups: list[tuple[str, int]] = []
    caption: str = ""
    #: how many leading columns hold text (left-aligned); the rest are numbers
    left: int = 1


class Section(msgspec.Struct, frozen=True, kw_only=True):
    """A titled part of the page: an intro, an optional figure, tables, notes."""

    id: str
    title: str
    intro: str = ""
    figure: str | None = None
    figure_caption: str = ""
    tables: list[Table] = []
    notes: list[str] = []


def fmt(metric: str, value: float | None) -> str:
    """A metric for display: rates in % and HE/turns with two decimals; ``-`` if undefined."""
    if value is None:
        return "-"
    return f"{100 * value:.2f}" if metric in _PERCENT else f"{value:.2f}"


def extremes(values: Mapping[str, float | None], *,
             higher_is_better: bool = True) -> dict[str, Mark]:
    """``{key: "best" | "worst" | ""}``: the best and worst defined values of a column.

    Ties share a mark; with fewer than two defined values, or all of them equal, nothing
    is marked (there is nothing to tell apart).
    """
    defined = [v for v in values.values() if v is not None]
    marks: dict[str, Mark] = dict.fromkeys(values, "")
    if len(defined) < 2 or min(defined) == max(defined):
        return marks
    best, worst = (max(defined), min(defined)) if higher_is_better else (min(defined), max(defined))
    for key, v in values.items():
        marks[key] = "best" if v == best else "worst" if v == worst else ""
    return marks


def leaderboard_table(models: Mapping[str, ModelMetrics],
                      order: Sequence[str] | None = None) -> Table:
    """Table III: one row per model, best and worst marked per column; Final Fix shows its gain."""
    names = list(order) if order is not None else sorted(models)
    marks = {m: extremes({n: getattr(models[n], m) for n in names},
                         higher_is_better=HIGHER_IS_BETTER[m]) for m, _, _ in TABLE_III}
    rows = []
    for name in names:
        row = models[name]
        cells = [Cell(name)]
        for metric, _, _ in TABLE_III:
            value = getattr(row, metric)
            sup = ""
            if metric == "FinalFix" and value is not None and row.InitialFix is not None:
                sup = f"{100 * (value - row.InitialFix):+.2f}"
            cells.append(Cell(fmt(metric, value), marks[metric][name], sup))
        cells.append(Cell(str(row.instances)))
        rows.append(cells)
    groups: list[tuple[str, int]] = [("", 1)]
    for _, _, group in TABLE_III:
        if groups[-1][0] == group:
            groups[-1] = (group, groups[-1][1] + 1)
        else:
            groups.append((group, 1))
    groups.append(("", 1))
    return Table(header=["Model", *(label for _, label, _ in TABLE_III), "Episodes"],
                 rows=rows, groups=groups)


def _model_order(report: Report) -> list[str]:
    return sorted(report.average_rank, key=lambda m: (report.average_rank[m], m))


def _rank_table(report: Report) -> Table:
    ranks, order = report.ranks, _model_order(report)
    n = len(order)
    columns = []
    for metric in TABLE_IV_METRICS:
        positions = sorted(ranks[metric], key=lambda m: (ranks[metric][m], m))
        column = []
        for pos, model in enumerate(positions, start=1):
            undefined = getattr(report.views[report.main].models[model], metric) is None
            tie = "n/a" if undefined else (f"={ranks[metric][model]:g}"
                                          if ranks[metric][model] != pos else "")
            column.append(Cell(model, sup=tie))
        columns.append(column)
    rows = [[Cell(str(i + 1)), *(col[i] for col in columns), Cell(order[i]),
             Cell(f"{report.average_rank[order[i]]:.2f}")] for i in range(n)]
    return Table(header=["Rank", *(_LABELS[m] for m in TABLE_IV_METRICS), "Model",
                         "Average Rank ↓"], rows=rows, left=len(TABLE_IV_METRICS) + 2)


def _closure_table(report: Report) -> Table:
    rows = []
    closure = report.views[report.main].closure
    for model in _model_order(report):
        dist = closure[model]
        shares = dist.shares()
        counts = msgspec.structs.asdict(dist)
        rows.append([Cell(model), *(Cell(f"{100 * shares[k]:.1f} ({counts[k]})") if shares
                                    else Cell("-") for k in _LEVELS), Cell(str(dist.attempted))])
    return Table(header=["Model", *("L1 (%)", "L2 (%)", "L3 (%)", "L4 (%)", "L5 (%)",
                                    "L6 (%)", "Unresolved (%)"), "Attempted"], rows=rows)


def _rates(series: Sequence[float]) -> str:
    return " → ".join(f"{100 * p:.0f}" for p in series)


def _protocol_rows(report: Report) -> Table:
    main = report.views[report.main].models
    rows = []
    for model in sorted({m for v in report.views.values() for m in v.models}):
        first = True
        for p in report.protocols:
            row = report.views[p].models.get(model)
            if row is None:
                continue
            base = main.get(model)
            delta = ("-" if p == report.main or base is None or base.FinalFix is None
                     or row.FinalFix is None else f"{100 * (row.FinalFix - base.FinalFix):+.2f}")
            rows.append([Cell(model if first else ""), Cell(p),
                         *(Cell(fmt(m, getattr(row, m))) for m in COMPARISON), Cell(delta),
                         Cell(str(row.instances))])
            first = False
    return Table(header=["Model", "Protocol", *(_LABELS[m] + (" ↓" if m == "TurnsToFix" else
                                                              " (%) ↑") for m in COMPARISON),
                         f"Δ Final Fix vs {report.main} (pp)", "Episodes"], rows=rows, left=2)


def _robustness_table(report: Report) -> Table:
    rows = []
    models = sorted({m for stats in report.robustness.values() for m in stats})
    for model in models:
        first = True
        for p in report.protocols:
            stats = report.robustness.get(p, {}).get(model)
            if stats is None:
                continue
            cells = [Cell(model if first else ""), Cell(p),
                     Cell(fmt("InitialFix", stats["InitialFix"].mean))]
            for m in TABLE_V_METRICS:
                s = stats[m]
                scale = 100 if m in _PERCENT else 1
                text = ("-" if s.mean is None else f"{scale * s.mean:.2f}" + (
                    "" if s.std is None else f" ± {scale * s.std:.2f}"))
                cells.append(Cell(text))
            runs = max(stats[m].n for m in stats)
            rows.append([*cells, Cell(str(runs))])
            first = False
    return Table(header=["Model", "Setting", "Init. Fix (%) ↑", "Repair Rate (%) ↑",
                         "Preservation Rate (%) ↑", "Final Fix (%) ↑", "Turns to Fix ↓", "Runs"],
                 rows=rows, left=2)


def _stability_table(report: Report) -> Table:
    def tau(v: float | None) -> str:
        return "-" if v is None else f"{v:.3f}"

    rows = [[Cell(p), *(Cell(tau(s.per_metric[m])) for m in TABLE_V_METRICS), Cell(tau(s.average)),
             Cell(str(s.pairs))] for p, s in report.stability.items()]
    return Table(header=["Setting", "Repair", "Preserve", "Final", "Turns", "Avg.", "Run pairs"],
                 rows=rows)


def _repair_at_k_table(report: Report) -> Table:
    """FeedbackEval's Repair@k from each protocol's cumulative Final Fix series (Fig. 6's
    numbers: the k-th entry is :func:`._metrics.repair_at_k`)."""
    horizon = min((len(s) - 1 for v in report.views.values() for s in v.cumulative.values()),
                  default=0)
    ks = sorted({k for k in (1, 2, 3, horizon) if 1 <= k <= horizon})
    rows = []
    for model in sorted({m for v in report.views.values() for m in v.models}):
        first = True
        for p in report.protocols:
            series = report.views[p].cumulative.get(model)
            if series is None:
                continue
            rows.append([Cell(model if first else ""), Cell(p),
                         *(Cell(f"{100 * series[k]:.1f}") for k in ks)])
            first = False
    return Table(header=["Model", "Protocol", *(f"Repair@{k} (%) ↑" for k in ks)], rows=rows,
                 left=2)


def _agreement_table(report: Report) -> Table:
    def num(v: float | None) -> str:
        return "-" if v is None else f"{v:.3f}"

    rows = [[Cell(f"{g.a} vs {g.b}"), *(Cell(num(g.footrule[m])) for m in TABLE_V_METRICS),
             Cell(num(g.average_footrule)), Cell(num(g.average_tau)), Cell(str(g.models))]
            for g in report.agreement]
    return Table(header=["Protocols", "Repair", "Preserve", "Final", "Turns", "Avg. footrule",
                         "Avg. τ", "Models"], rows=rows)


def _cost_cells(prompt: float | None, completion: float | None, episodes: int | None,
                sup: str = "") -> list[Cell]:
    """Prompt, completion and total cost (``sup`` on the total), and the cost per episode
    (blank without episodes)."""
    total = None if prompt is None or completion is None else prompt + completion
    per_episode = "" if episodes is None else format_cost(
        None if total is None else total / max(1, episodes))
    return [Cell(format_cost(prompt)), Cell(format_cost(completion)),
            Cell(format_cost(total), sup=sup), Cell(per_episode)]


def _token_table(report: Report) -> Table:
    """Tokens per (candidate, protocol, role, model called); cost columns once any is priced."""
    summary = cost_summary(report.tokens)
    priced = summary.total is not None
    rows = []
    for t in report.tokens:
        cells = [Cell(t.model), Cell(t.protocol), Cell(t.role), Cell(t.called),
                 Cell(f"{t.calls:,}"), Cell(f"{t.prompt_tokens:,}"),
                 Cell(f"{t.completion_tokens:,}"), Cell(f"{t.total_tokens:,}"),
                 Cell(f"{t.total_tokens / max(1, t.episodes):,.0f}")]
        if priced:
            cells += _cost_cells(t.prompt_cost, t.completion_cost, t.episodes)
        rows.append(cells)
    total_p = sum(t.prompt_tokens for t in report.tokens)
    total_c = sum(t.completion_tokens for t in report.tokens)
    total = [Cell("Total (partial)" if summary.partial else "Total"), Cell(""), Cell(""),
             Cell(""), Cell(f"{sum(t.calls for t in report.tokens):,}"), Cell(f"{total_p:,}"),
             Cell(f"{total_c:,}"), Cell(f"{total_p + total_c:,}"), Cell("")]
    if priced:
        total += _cost_cells(summary.prompt, summary.completion, None,
                             sup="partial" if summary.partial else "")
    rows.append(total)
    header = ["Candidate", "Protocol", "Role", "Model called", "Calls", "Prompt tokens",
              "Completion tokens", "Total tokens", "Tokens / episode"]
    if priced:
        header += ["Prompt cost", "Completion cost", "Total cost", "Cost / episode"]
    return Table(header=header, rows=rows, left=4)


def _token_section(report: Report) -> Section:
    """Token usage, and cost when prices were given; says what a partial total leaves out."""
    summary = cost_summary(report.tokens)
    intro = ("Prompt and completion tokens as reported by each call, per candidate, protocol and "
             "role; errored and unfinished episodes included (their calls were paid for).")
    notes: list[str] = []
    if summary.total is not None:
        source = report.price_source or "the model config"
        intro += (f" Costs use the prices per million tokens of {source} (in its currency); "
                  "feedback calls are priced as the run's feedback model, and offline models' "
                  "tokens are chars/4 estimates.")
        if summary.partial:
            notes.append("The total is partial (a lower bound): no price for "
                         f"{', '.join(summary.unpriced)} (shown as —).")
    elif report.price_source:
        notes.append(f"No model of this run has a price in {report.price_source}.")
    return Section(id="tokens", title="Token usage", intro=intro,
                   tables=[_token_table(report)], notes=notes)


def _overview(report: Report) -> Section:
    m = report.manifest
    pairs: list[tuple[str, str]] = []
    if m is not None:
        pairs += [("Run id", m.run_id), ("Created", m.created),
                  ("Candidates", ", ".join(m.candidates)), ("Feedback model", m.feedback),
                  ("Protocols", ", ".join(m.protocols)),
                  ("Runs", str(m.runs)), ("Seed", str(m.seed)), ("Instances", str(m.instances)),
                  ("Parameters", ", ".join(f"{k}={v}" for k, v in sorted(m.params.items()))),
                  ("Dataset hash", m.dataset_hash[:16]), ("Software", m.software_version)]
    if report.price_source:
        pairs.append(("Prices", report.price_source))
    pairs += [("Main protocol", report.main),
              ("Episodes", f"{report.episodes} finished, {report.errored} errored, "
                           f"{report.unfinished} unfinished")]
    notes = [f"errored: {eid}: {err}" for eid, err in report.errors[:10]]
    if len(report.errors) > 10:
        notes.append(f"... and {len(report.errors) - 10} more errored episodes")
    return Section(id="overview", title="Run", tables=[Table(
        header=["Field", "Value"], rows=[[Cell(k), Cell(v)] for k, v in pairs], left=2)],
        notes=notes)


def report_sections(report: Report) -> list[Section]:
    """The page's sections in order; Tables V/VI only with several runs, comparison only
    with several protocols."""
    main, view = report.main, report.views[report.main]
    order = _model_order(report)
    hinted = any(d.attempted for d in view.closure.values())
    hcc = [[Cell(m), Cell(fmt("HCC", view.models[m].HCC))] for m in order]
    alpha = max((len(s) for s in view.cumulative.values()), default=1) - 1
    sections = [
        _overview(report),
        Section(id="leaderboard", title=f"Table III. Progress-centric leaderboard ({main})",
                intro="Rates in % averaged over initially failing episodes (Initial and Final Fix: "
                      "all episodes), runs pooled; ↑ higher is better, ↓ lower is better. "
      "The best model per column is marked green (bold in Markdown), the worst red "
                      "(italics); the superscript on Final Fix is its gain over Initial Fix in "
                      "points.",
                tables=[leaderboard_table(view.models, order)]),
        Section(id="ranking", title=f"Table IV. Metric-wise ranking ({main})",
                intro="Row r names the model at position r for each metric; a superscript =k "
                      "marks a tie sharing average rank k, n/a an undefined metric (ranked last). "
                      "The average rank is a descriptive profile, not a score.",
                tables=[_rank_table(report)]),
        Section(id="fig3-closure", title=f"Fig. 3. Hint-level closure distribution ({main})",
                intro="Attempted scenarios by the hint level at which they closed; shares of all "
                      "attempted scenarios, unresolved included (counts in parentheses).",
                figure="fig3" if hinted else None,
                figure_caption="Fig. 3. Hint-level success and fail distribution.",
                tables=[_closure_table(report)] if hinted else [],
                notes=[] if hinted else [f"{main} gives no targeted hints: "
                                         "no scenario attempted."]),
        Section(id="fig4-hcc", title=f"Fig. 4. HintedClosedCoverage ({main})",
                intro="|F_0 ∩ H ∩ P_T| / |F_0|: the share of initially failing tests that were "
                      "hinted and pass at the end.",
                figure="fig4" if hinted else None, figure_caption="Fig. 4. HintedClosedCoverage.",
                tables=[Table(header=["Model", "HCC (%) ↑"], rows=hcc)] if hinted else [],
                notes=[] if hinted else [f"{main} gives no targeted hints: HCC is undefined."]),
        Section(id="fig5-trajectories",
                title=f"Fig. 5. Pass-rate trajectories ({main}, run {report.fig5_run})",
                intro="Pass rate (%) after each turn on chosen instances "
                      "(turn 0: unhinted repair).",
                figure="fig5" if report.fig5 else None,
                figure_caption="Fig. 5. Pass-rate trajectories for chosen repair instances.",
                tables=[Table(header=["Instance", "Model", "Pass rate by turn (%)"], left=3, rows=[
                    [Cell(iid if k == 0 else ""), Cell(model), Cell(_rates(series))]
                    for iid, per in report.fig5.items()
                    for k, (model, series) in enumerate(per.items())])]),
        Section(id="fig6-cumulative", title=f"Fig. 6. Cumulative Final Fix by turn ({main})",
                intro="Share of episodes fully fixed at or before each turn; "
                      "turn 0 is Initial Fix.",
                figure="fig6", figure_caption="Fig. 6. Cumulative Final Fix Rate by turn.",
                tables=[Table(header=["Model", *(f"t={t}" for t in range(alpha + 1))], rows=[
                    [Cell(m), *(Cell(f"{100 * v:.1f}") for v in view.cumulative[m])]
                    for m in order])]),
    ]
    if report.robustness:
        sections.append(Section(
            id="robustness", title="Table V. Robustness across repeated runs",
            intro="Mean ± sample standard deviation over runs, per model and setting (protocol); "
                  "Repair Rate = |F_{t-1} ∩ P_t| / |T| per turn.",
            tables=[_robustness_table(report)]))
        sections.append(Section(
            id="stability", title="Table VI. Ranking stability (Kendall's τ)",
            intro="τ-b between the model rankings of every pair of runs, averaged over pairs; "
                  "Turns to Fix ranked lower-first; '-' where τ is undefined in every pair (fewer "
                  "than two models, or every model tied).",
            tables=[_stability_table(report)]))
    if len(report.protocols) > 1:
        sections.append(Section(
            id="protocols", title="Per-protocol comparison",
            intro="Every protocol on the same instances; Δ is the Final Fix difference to the main "
                  f"protocol ({main}) in percentage points.",
            figure="fig7", figure_caption="Cumulative Final Fix by turn, per model and protocol.",
            tables=[_protocol_rows(report)]))
        if report.agreement:
            sections.append(Section(
                id="agreement", title="Ranking agreement between protocols",
                intro="Normalised Spearman footrule (seed 002) between the model rankings of "
                      "every pair of protocols, runs pooled: 0 = the same ranking, 1 = reversed; "
                      "Turns to Fix ranked lower-first. Avg. τ is the mean Kendall τ-b over the "
                      "metrics where it is defined.",
                tables=[_agreement_table(report)]))
    sections.append(Section(
        id="repair-at-k", title="Repair@k (FeedbackEval)",
        intro="The share of episodes whose program passes every hidden test after at most k "
              "feedback rounds (turn 0, the unhinted attempt, included); a run with --turns 1 "
              "is FeedbackEval's single-round setting, longer budgets its iterative one.",
        tables=[_repair_at_k_table(report)]))
    sections.append(_token_section(report))
    return sections


# --------------------------------------------------------------------------- HTML

_CSS: Final = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:2rem auto;
max-width:1200px;padding:0 1rem;color:#222;background:#fff}
h1{font-size:1.6rem}h2{font-size:1.2rem;margin-top:2.2rem;border-bottom:1px solid #ddd}
nav a{margin-right:.8rem}table{border-collapse:collapse;margin:.6rem 0;font-size:.85rem}
th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:right;vertical-align:top}
th{background:#f3f3f3}td.l,th.l{text-align:left}
th.g{text-align:center}td.best{background:#c8ecc8;font-weight:600}td.worst{background:#f6cccc}
sup{font-size:.7em;color:#555}figure{margin:.8rem 0}figure img{max-width:100%;height:auto}
figcaption,.note{color:#555;font-size:.85rem}.intro{max-width:60rem}
""".strip()


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def html_table(table: Table) -> str:
    """One table as HTML; marked cells get class ``best``/``worst`` (and a title saying so)."""
    out = ["<table>"]
    if table.caption:
        out.append(f"<caption>{_e(table.caption)}</caption>")
    out.append("<thead>")
    if table.groups:
        out.append("<tr>" + "".join(f'<th colspan="{span}" class="g">{_e(label)}</th>'
                                    for label, span in table.groups) + "</tr>")
    heads = [f'<th scope="col" class="{"l" if i < table.left else "r"}">{_e(h)}</th>'
             for i, h in enumerate(table.header)]
    out.append("<tr>" + "".join(heads) + "</tr>")
    out.append("</thead><tbody>")
    for row in table.rows:
        cells = []
        for i, cell in enumerate(row):
            classes = " ".join(c for c in ("l" if i < table.left else "", cell.mark) if c)
            attrs = f' class="{classes}"' if classes else ""
            if cell.mark:
                attrs += f' title="{cell.mark} in column"'
            sup = f"<sup>{_e(cell.sup)}</sup>" if cell.sup else ""
            cells.append(f"<td{attrs}>{_e(cell.text)}{sup}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def render_html(report: Report, figures: Mapping[str, bytes] | None = None) -> str:
    """The whole page; ``figures`` (key -> PNG bytes, from :func:`draw_figures`) are embedded
    as ``data:`` URIs, and a section whose figure is missing shows its tables only."""
    figures = figures or {}
    sections = report_sections(report)
    body = [f"<header><h1>{_e(report.title)}</h1></header>",
            "<nav>" + "".join(f'<a href="#{s.id}">{_e(s.title.split(" (")[0])}</a>'
                              for s in sections) + "</nav>"]
    for s in sections:
        body.append(f'<section id="{s.id}"><h2>{_e(s.title)}</h2>')
        if s.intro:
            body.append(f'<p class="intro">{_e(s.intro)}</p>')
        if s.figure and s.figure in figures:
            data = base64.b64encode(figures[s.figure]).decode("ascii")
            body.append(f'<figure><img src="data:image/png;base64,{data}" '
                        f'alt="{_e(s.figure_caption)}"><figcaption>{_e(s.figure_caption)}'
                        "</figcaption></figure>")
        body += [html_table(t) for t in s.tables]
        body += [f'<p class="note">{_e(n)}</p>' for n in s.notes]
        body.append("</section>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
            "<link rel=\"icon\" href=\"data:,\">"
            f"<title>{_e(report.title)}</title><style>{_CSS}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")


# --------------------------------------------------------------------------- Markdown

_MD_SPECIAL: Final = str.maketrans({c: "\\" + c for c in "\\`*_[]<>|#"})


def _m(text: str) -> str:
    return text.translate(_MD_SPECIAL).replace("\n", " ")


def markdown_table(table: Table) -> str:
    """One table as GitHub Markdown; best cells in bold, worst in italics, text escaped."""
    def cell(c: Cell) -> str:
        text = _m(c.text) + (f" ({_m(c.sup)})" if c.sup else "")
        return f"**{text}**" if c.mark == "best" else f"_{text}_" if c.mark == "worst" else text

    lines = ["| " + " | ".join(_m(h) for h in table.header) + " |",
             "|" + "|".join("---" if i < table.left else "---:"
                            for i in range(len(table.header))) + "|"]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in table.rows]
    return "\n".join(lines)


def render_markdown(report: Report, figure_paths: Mapping[str, str] | None = None) -> str:
    """The report as Markdown tables (terminals, papers); best in bold, worst in italics.

    ``figure_paths`` (key -> relative path of a written PNG) adds image links.
    """
    figure_paths = figure_paths or {}
    out = [f"# {_m(report.title)}", ""]
    for s in report_sections(report):
        out += [f"## {_m(s.title)}", ""]
        if s.intro:
            out += [_m(s.intro), ""]
        if s.figure and s.figure in figure_paths:
            out += [f"![{_m(s.figure_caption)}]({figure_paths[s.figure]})", ""]
        for t in s.tables:
            out += [markdown_table(t), ""]
        out += [f"> {_m(n)}" for n in s.notes]
        if s.notes:
            out.append("")
    return "\n".join(out).rstrip() + "\n"


# --------------------------------------------------------------------------- figures


def draw_figures(report: Report) -> dict[str, bytes]:
    """Figs. 3-6 (and the protocol comparison) as PNG bytes, keyed as in :data:`FIGURES`.

    Needs matplotlib (a runtime dependency of ``report --html``); a missing one is a
    :class:`ConfigError` naming the fix. A figure without data is left out.
    """
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        from matplotlib.ticker import MaxNLocator
    except ImportError as exc:
        raise ConfigError("the HTML report draws its figures with matplotlib: "
                          "pip install matplotlib") from exc

    def label(text: str) -> str:
        """Model names and ids as literal text: ``$`` would start matplotlib's mathtext."""
        return text.replace("$", r"\$")

    view = report.views[report.main]
    order = _model_order(report)
    colour = {m: _PALETTE[i % len(_PALETTE)] for i, m in enumerate(sorted(
        {m for v in report.views.values() for m in v.models}))}

    def png(fig: Figure) -> bytes:
        FigureCanvasAgg(fig)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=100, metadata={"Software": None})
        return buf.getvalue()

    figs: dict[str, bytes] = {}
    hinted = [m for m in order if view.closure[m].attempted]
    if hinted:
        fig = Figure(figsize=(9, 1.0 + 0.5 * len(hinted)), layout="constrained")
        ax = fig.add_subplot()
        left = [0.0] * len(hinted)
        for level, col in zip(_LEVELS, _LEVEL_COLOURS, strict=True):
            widths = [100 * (view.closure[m].shares() or {}).get(level, 0.0) for m in hinted]
            ax.barh([label(m) for m in hinted], widths, left=left, color=col, label=level,
                    edgecolor="white")
            left = [a + b for a, b in zip(left, widths, strict=True)]
        ax.set_xlim(0, 100)
        ax.set_xlabel("share of attempted scenarios (%)")
        ax.invert_yaxis()
        ax.legend(ncols=7, loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False,
                  fontsize="small")
        figs["fig3"] = png(fig)
        defined = [m for m in order if view.models[m].HCC is not None]
        if defined:
            fig = Figure(figsize=(max(4.0, 1.2 * len(defined)), 3.6), layout="constrained")
            ax = fig.add_subplot()
            values = [100 * (view.models[m].HCC or 0.0) for m in defined]
            bars = ax.bar([label(m) for m in defined], values, color=[colour[m] for m in defined])
            ax.bar_label(bars, fmt="%.1f", fontsize="small")
            ax.set_ylabel("HintedClosedCoverage (%)")
            ax.set_ylim(0, max(100.0, max(values) * 1.1))
            ax.tick_params(axis="x", labelrotation=20)
            figs["fig4"] = png(fig)
    if report.fig5:
        n = len(report.fig5)
        fig = Figure(figsize=(4.2 * n, 3.6), layout="constrained")
        axes = fig.subplots(1, n, squeeze=False, sharey=True)[0]
        for ax, (iid, per) in zip(axes, report.fig5.items(), strict=True):
            for model, series in per.items():
                ax.plot(range(len(series)), [100 * p for p in series], marker="o",
                        color=colour[model], label=label(model))
            ax.set_title(label(iid if len(iid) <= 40 else iid[:37] + "..."), fontsize="small")
            ax.set_xlabel("turn")
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            ax.set_ylim(-3, 103)
            ax.grid(alpha=0.3)
        axes[0].set_ylabel("pass rate (%)")
        axes[0].legend(fontsize="small")
        figs["fig5"] = png(fig)
    fig = Figure(figsize=(6.5, 4.0), layout="constrained")
    ax = fig.add_subplot()
    for m in order:
        series = view.cumulative[m]
        ax.plot(range(len(series)), [100 * v for v in series], marker="o", color=colour[m],
                label=label(m))
    ax.set_xlabel("turn")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel("cumulative Final Fix (%)")
    ax.set_ylim(-3, 103)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    figs["fig6"] = png(fig)
    if len(report.protocols) > 1:
        styles = ("-", "--", ":", "-.")
        fig = Figure(figsize=(7.5, 4.4), layout="constrained")
        ax = fig.add_subplot()
        for i, p in enumerate(report.protocols):
            for m, series in report.views[p].cumulative.items():
                ax.plot(range(len(series)), [100 * v for v in series], linestyle=styles[i % 4],
                        marker="o", markersize=3, color=colour[m], label=label(f"{m} · {p}"))
        ax.set_xlabel("turn")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylabel("cumulative Final Fix (%)")
        ax.set_ylim(-3, 103)
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small", ncols=2)
        figs["fig7"] = png(fig)
    return figs
