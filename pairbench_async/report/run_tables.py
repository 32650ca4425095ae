"""The tables of one run's report: Tables III-VI, Fig. 3's closure, the protocols'
comparison and agreement, Repair@k and token usage.

Each is a function of the :class:`~.model.Report` returning a :class:`~.layout.Table`;
headers and number formats come from the metric registry (:mod:`.registry`). Best and
worst are marked per column among the main protocol's models, following each metric's
direction; ties share a mark and a column whose defined values are all equal has none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

import msgspec

from ..protocol.protocols import PROTOCOLS
from .cost import cost_summary, format_cost
from .layout import LEVELS, Cell, Table, extremes, fmt, model_order, model_protocols, statistic
from .metrics import ModelMetrics
from .model import Report
from .ranking import HIGHER_IS_BETTER, TABLE_IV_METRICS, TABLE_V_METRICS
from .registry import metric

__all__ = [
    "COMPARISON",
    "TABLE_III",
    "agreement_table",
    "closure_table",
    "leaderboard_table",
    "protocol_table",
    "rank_table",
    "repair_at_k_table",
    "robustness_table",
    "stability_table",
    "token_table",
]

#: Table III's metrics in the paper's order, plus HCC (Fig. 4); labels and column groups
#: (the metric's stage) from the registry.
TABLE_III: Final = ("InitialFix", "TRS", "BRG", "BP", "PMR", "HE", "FinalFix", "GC", "TurnsToFix", "HCC")
#: The per-protocol comparison's metrics (those every protocol defines).
COMPARISON: Final = ("InitialFix", "FinalFix", "GC", "RepairRate", "PreservationRate", "PMR",
                     "TurnsToFix")


def leaderboard_table(models: Mapping[str, ModelMetrics],
                      order: Sequence[str] | None = None) -> Table:
    """Table III: one row per model, the top and bottom three marked per column (fewer with
    fewer models, see :func:`extremes`); Final Fix shows its gain."""
    names = list(order) if order is not None else sorted(models)
    marks = {m: extremes({n: getattr(models[n], m) for n in names},
                         higher_is_better=HIGHER_IS_BETTER[m]) for m in TABLE_III}
    rows = []
    for name in names:
        row = models[name]
        cells = [Cell(name)]
        for m in TABLE_III:
            value = getattr(row, m)
            sup = ""
            if m == "FinalFix" and value is not None and row.InitialFix is not None:
                sup = f"{100 * (value - row.InitialFix):+.2f}"
            cells.append(Cell(fmt(m, value), marks[m][name], sup))
        cells.append(Cell(str(row.instances)))
        rows.append(cells)
    groups: list[tuple[str, int]] = [("", 1)]
    for group in (metric(m).stage for m in TABLE_III):
        if groups[-1][0] == group:
            groups[-1] = (group, groups[-1][1] + 1)
        else:
            groups.append((group, 1))
    groups.append(("", 1))
    return Table(header=["Model", *(metric(m).header() for m in TABLE_III), "Episodes"],
                 rows=rows, groups=groups)


def rank_table(report: Report) -> Table:
    ranks, order = report.ranks, model_order(report)
    n = len(order)
    columns = []
    for name in TABLE_IV_METRICS:
        positions = sorted(ranks[name], key=lambda m: (ranks[name][m], m))
        column = []
        for pos, model in enumerate(positions, start=1):
            undefined = getattr(report.views[report.main].models[model], name) is None
            tie = "n/a" if undefined else (f"={ranks[name][model]:g}"
                                          if ranks[name][model] != pos else "")
            column.append(Cell(model, sup=tie))
        columns.append(column)
    rows = [[Cell(str(i + 1)), *(col[i] for col in columns), Cell(order[i]),
             Cell(f"{report.average_rank[order[i]]:.2f}")] for i in range(n)]
    return Table(header=["Rank", *(metric(m).label for m in TABLE_IV_METRICS), "Model",
                         "Average Rank ↓"], rows=rows, left=len(TABLE_IV_METRICS) + 2)


def closure_table(report: Report) -> Table:
    rows = []
    closure = report.views[report.main].closure
    for model in model_order(report):
        dist = closure[model]
        shares = dist.shares()
        counts = msgspec.structs.asdict(dist)
        rows.append([Cell(model), *(Cell(f"{100 * shares[k]:.1f} ({counts[k]})") if shares
                                    else Cell("-") for k in LEVELS), Cell(str(dist.attempted))])
    return Table(header=["Model", *("L1 (%)", "L2 (%)", "L3 (%)", "L4 (%)", "L5 (%)",
                                    "L6 (%)", "Unresolved (%)"), "Attempted"], rows=rows)


def protocol_table(report: Report) -> Table:
    main = report.views[report.main].models
    rows = []
    last = ""
    for model, p in model_protocols(report):
        row, base = report.views[p].models[model], main.get(model)
        delta = ("-" if p == report.main or base is None or base.FinalFix is None
                 or row.FinalFix is None else f"{100 * (row.FinalFix - base.FinalFix):+.2f}")
        rows.append([Cell(model if model != last else ""), Cell(p),
                     *(Cell(fmt(m, getattr(row, m))) for m in COMPARISON), Cell(delta),
                     Cell("no" if p in report.unprotected else "yes"),
                     Cell(str(row.instances))])
        last = model
    return Table(header=["Model", "Protocol", *(metric(m).header() for m in COMPARISON),
                         f"Δ Final Fix vs {report.main} (pp)", "Hidden tests protected",
                         "Episodes"], rows=rows, left=2)


def robustness_table(report: Report) -> Table:
    rows = []
    models = sorted({m for stats in report.robustness.values() for m in stats})
    for model in models:
        first = True
        for p in report.protocols:
            stats = report.robustness.get(p, {}).get(model)
            if stats is None:
                continue
            cells = [Cell(model if first else ""), Cell(p)]
            # Init. Fix too: turn 0 is shared by the protocols of a run but drawn again each run
            for m in ("InitialFix", *TABLE_V_METRICS):
                s = stats[m]
                scale = 100 if metric(m).percent else 1
                text = ("-" if s.mean is None else f"{scale * s.mean:.2f}" + (
                    "" if s.std is None else f" ± {scale * s.std:.2f}"))
                cells.append(Cell(text))
            runs = max(stats[m].n for m in stats)
            rows.append([*cells, Cell(str(runs))])
            first = False
    return Table(header=["Model", "Setting", "Init. Fix (%) ↑", "Repair Rate (%) ↑",
                         "Preservation Rate (%) ↑", "Final Fix (%) ↑", "Turns to Fix ↓", "Runs"],
                 rows=rows, left=2)


def stability_table(report: Report) -> Table:
    rows = [[Cell(p), *(Cell(statistic(s.per_metric[m])) for m in TABLE_V_METRICS),
             Cell(statistic(s.average)), Cell(str(s.pairs))] for p, s in report.stability.items()]
    return Table(header=["Setting", "Repair", "Preserve", "Final", "Turns", "Avg.", "Run pairs"],
                 rows=rows)


def repair_at_k_table(report: Report) -> Table:
    """FeedbackEval's Repair@k from each protocol's cumulative Final Fix series (Fig. 6's
    numbers: the k-th entry is :func:`.metrics.repair_at_k`)."""
    horizon = min((len(s) - 1 for v in report.views.values() for s in v.cumulative.values()),
                  default=0)
    ks = sorted({k for k in (1, 2, 3, horizon) if 1 <= k <= horizon})
    rows = []
    last = ""
    for model, p in model_protocols(report):  # a view's cumulative series are its models'
        series = report.views[p].cumulative[model]
        given = p in PROTOCOLS and PROTOCOLS[p].starts_from_erroneous
        rows.append([Cell(model if model != last else ""), Cell(p),
                     Cell("the erroneous program" if given else "unhinted repair"),
                     *(Cell(f"{100 * series[k]:.1f}") for k in ks)])
        last = model
    return Table(header=["Model", "Protocol", "Turn 0", *(f"Repair@{k} (%) ↑" for k in ks)], rows=rows,
                 left=3)


def agreement_table(report: Report) -> Table:
    rows = [[Cell(f"{g.a} vs {g.b}"), *(Cell(statistic(g.footrule[m])) for m in TABLE_V_METRICS),
             Cell(statistic(g.average_footrule)), Cell(statistic(g.average_tau)),
             Cell(str(g.models))]
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


def token_table(report: Report) -> Table:
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
