"""The visual report laid out: sections of tables whose cells carry their best/worst marks.

HTML and Markdown (:mod:`.html`) print the same sections, so both show the same
thing. Layout decisions: Tables III/IV and Figs. 3-6 describe one *main* protocol
(``pair`` when the run has it: the paper's Table III is PAIR-BENCH only); every protocol
appears in the comparison section and in Tables V/VI, whose "Setting" is the protocol.
Best and worst are marked per column among the main protocol's models, following each
metric's direction; ties share a mark and a column whose defined values are all equal
has none. A ``--sweep`` report adds Table VII (each setting's top-1/2/3 marked within the
setting, as the paper colours them) and the τ between the settings' rankings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final, Literal

import msgspec

from ..protocol.protocols import PROTOCOLS
from .accuracy import Accuracy, TalkAccuracy
from .cost import cost_summary, format_cost
from .glossary import PERCENT_METRICS
from .leaderboard import UNPROTECTED_NOTE
from .metrics import ModelMetrics, group_key
from .model import Report
from .ranking import HIGHER_IS_BETTER, TABLE_IV_METRICS, TABLE_V_METRICS
from .sensitivity import AVERAGE_RANK, TABLE_VII_METRICS, Sensitivity, podium

__all__ = [
    "LEVELS",
    "Cell",
    "Section",
    "Table",
    "accuracy_section",
    "extremes",
    "fmt",
    "leaderboard_table",
    "model_order",
    "report_sections",
    "sensitivity_sections",
]

#: best/worst: Table III's top and bottom three; top1..top3: Table VII's places per setting
Mark = Literal["", "best", "worst", "top1", "top2", "top3"]
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
_PERCENT: Final = PERCENT_METRICS
#: The per-protocol comparison's metrics (those every protocol defines).
COMPARISON: Final = ("InitialFix", "FinalFix", "GC", "RepairRate", "PreservationRate", "PMR",
                     "TurnsToFix")
LEVELS: Final = ("L1", "L2", "L3", "L4", "L5", "L6", "unresolved")


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
             higher_is_better: bool = True, top: int = 3) -> dict[str, Mark]:
    """``{key: "best" | "worst" | ""}``: the ``top`` best and ``top`` worst defined values.

    Table III of the paper marks the top three and the bottom three models per metric
    (eight models). With fewer models the marks shrink to ``len // 2`` on each side so
    that they never meet: three models get one best and one worst. A value tied with
    the last marked one shares its mark; with fewer than two defined values, or all of
    them equal, nothing is marked (there is nothing to tell apart).
    """
    defined = sorted((v for v in values.values() if v is not None), reverse=higher_is_better)
    marks: dict[str, Mark] = dict.fromkeys(values, "")
    if len(defined) < 2 or defined[0] == defined[-1]:
        return marks
    k = max(1, min(top, len(defined) // 2))
    best_edge, worst_edge = defined[k - 1], defined[-k]

    def better_or_equal(a: float, b: float) -> bool:
        return a >= b if higher_is_better else a <= b

    for key, v in values.items():
        if v is None:
            continue
        if better_or_equal(v, best_edge):
            marks[key] = "best"
        elif better_or_equal(worst_edge, v):
            marks[key] = "worst"
    return marks


def leaderboard_table(models: Mapping[str, ModelMetrics],
                      order: Sequence[str] | None = None) -> Table:
    """Table III: one row per model, the top and bottom three marked per column (fewer with
    fewer models, see :func:`extremes`); Final Fix shows its gain."""
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


def model_order(report: Report) -> list[str]:
    return sorted(report.average_rank, key=lambda m: (report.average_rank[m], m))


def _rank_table(report: Report) -> Table:
    ranks, order = report.ranks, model_order(report)
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
    for model in model_order(report):
        dist = closure[model]
        shares = dist.shares()
        counts = msgspec.structs.asdict(dist)
        rows.append([Cell(model), *(Cell(f"{100 * shares[k]:.1f} ({counts[k]})") if shares
                                    else Cell("-") for k in LEVELS), Cell(str(dist.attempted))])
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
                         Cell("no" if p in report.unprotected else "yes"),
                         Cell(str(row.instances))])
            first = False
    return Table(header=["Model", "Protocol", *(_LABELS[m] + (" ↓" if m == "TurnsToFix" else
                                                              " (%) ↑") for m in COMPARISON),
                         f"Δ Final Fix vs {report.main} (pp)", "Hidden tests protected",
                         "Episodes"], rows=rows, left=2)


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


def _statistic(value: float | None) -> str:
    """A rank statistic (Kendall τ, footrule) to three decimals; '-' when undefined."""
    return "-" if value is None else f"{value:.3f}"


def _stability_table(report: Report) -> Table:
    rows = [[Cell(p), *(Cell(_statistic(s.per_metric[m])) for m in TABLE_V_METRICS),
             Cell(_statistic(s.average)), Cell(str(s.pairs))] for p, s in report.stability.items()]
    return Table(header=["Setting", "Repair", "Preserve", "Final", "Turns", "Avg.", "Run pairs"],
                 rows=rows)


def _repair_at_k_table(report: Report) -> Table:
    """FeedbackEval's Repair@k from each protocol's cumulative Final Fix series (Fig. 6's
    numbers: the k-th entry is :func:`.metrics.repair_at_k`)."""
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
            given = p in PROTOCOLS and PROTOCOLS[p].starts_from_erroneous
            rows.append([Cell(model if first else ""), Cell(p),
                         Cell("the erroneous program" if given else "unhinted repair"),
                         *(Cell(f"{100 * series[k]:.1f}") for k in ks)])
            first = False
    return Table(header=["Model", "Protocol", "Turn 0", *(f"Repair@{k} (%) ↑" for k in ks)], rows=rows,
                 left=3)


#: FixEval reports pass@k and TCA@k at k = 1, 3, 5, 10; with three runs we show k = 1, 2, 3.
_SAMPLE_KS: Final = (1, 2, 3, 5, 10)


def _sample_ks(n: int) -> list[int]:
    """The k shown for n samples: 1, 2, 3, 5, 10 up to n, and n itself."""
    return sorted({k for k in (*_SAMPLE_KS, n) if 1 <= k <= n})


def _pct(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{100 * value:.{digits}f}"


def _model_protocols(report: Report) -> list[tuple[str, str]]:
    """(model, protocol) of every group, models in name order, protocols in report order."""
    models = sorted({m for v in report.views.values() for m in v.models})
    return [(m, p) for m in models for p in report.protocols if m in report.views[p].models]


def _match_table(report: Report) -> Table:
    """FixEval's Table III on the final programs: EM (with and without comments), BLEU,
    CodeBLEU and its parts, per model and protocol."""
    rows = []
    last = ""
    for model, p in _model_protocols(report):
        s = report.precision.get(group_key(model, p))
        if s is None:
            continue
        cb = s.codebleu
        parts = ([None] * 5 if cb is None else
                 [cb.codebleu, cb.ngram_match, cb.weighted_ngram_match, cb.syntax_match,
                  cb.dataflow_match])
        rows.append([Cell(model if model != last else ""), Cell(p),
                     Cell(_pct(s.exact_match_rate)), Cell(_pct(s.exact_match_code_rate)),
                     Cell(_pct(s.corpus_bleu)), *(Cell(_pct(v)) for v in parts),
                     Cell(str(s.episodes))])
        last = model
    return Table(header=["Model", "Protocol", "EM (%) ↑", "EM w/o comments (%) ↑",
                         "Corpus BLEU (%) ↑", "CodeBLEU (%) ↑", "n-gram (%)", "weighted n-gram (%)", "SM (%)",
                         "DM (%)", "Episodes"], rows=rows, left=2)


def _execution_table(report: Report) -> Table:
    """FixEval's Table IV: pass@k and TCA@k over the runs, final and turn 0 programs."""
    groups = [(m, p, report.views[p].pass_at_k[m]) for m, p in _model_protocols(report)
              if m in report.views[p].pass_at_k]
    ks = _sample_ks(max((g.samples for _, _, g in groups), default=1))

    def values(series: dict[int, float]) -> list[Cell]:
        return [Cell(_pct(series.get(k))) for k in ks]

    rows = []
    last = ""
    for model, p, g in groups:
        for program, passes, tcas in (("final", g.pass_at_k, g.tca_at_k),
                                      ("turn 0", g.initial_pass_at_k, g.initial_tca_at_k)):
            if passes is None or tcas is None:  # turn 0 is the given program: no sample
                continue
            rows.append([Cell(model if model != last else ""), Cell(p if program == "final" else ""),
                         Cell(program), *values(passes), *values(tcas), Cell(str(g.instances)),
                         Cell(str(g.samples))])
            last = model
    return Table(header=["Model", "Protocol", "Program", *(f"pass@{k} (%) ↑" for k in ks),
                         *(f"TCA@{k} (%) ↑" for k in ks), "Instances", "Runs (n)"],
                 rows=rows, left=3)


def _fixeval_section(report: Report) -> Section:
    """FixEval's match-based (Table III) and execution-based (Table IV) metrics."""
    notes = [report.precision_note] if report.precision_note else []
    n = min((g.samples for v in report.views.values() for g in v.pass_at_k.values()),
            default=1)
    if n == 1:
        notes.append("One run per instance: pass@1 is the share of episodes fixed and TCA@1 the "
                     "mean share of hidden tests the final program passes; --runs N gives n = N "
                     "samples.")
    tables = [_execution_table(report)]
    if report.precision:
        tables.insert(0, _match_table(report))
    return Section(
        id="fixeval", title="FixEval: match-based and execution-based metrics",
        intro="Match-based (FixEval Table III), on each episode's final program against the "
              "reference: exact match of the code tokens (whitespace normalised) with and "
              "without comments and docstrings, corpus BLEU-4, and CodeBLEU = (n-gram + "
              "weighted n-gram + syntax match SM + dataflow match DM) / 4. Execution-based "
              "(FixEval Table IV): each run is one sample of an (instance, model, protocol); "
              "pass@k = 1 − C(n−c, k)/C(n, k) with c of the n runs passing every hidden test, "
              "TCA@k the mean share of hidden tests passed by the first k runs, both averaged "
              "over instances; 'final' samples each run's last program, 'turn 0' its unhinted "
              "repair (the static view).",
        tables=tables, notes=notes)


def _agreement_table(report: Report) -> Table:
    rows = [[Cell(f"{g.a} vs {g.b}"), *(Cell(_statistic(g.footrule[m])) for m in TABLE_V_METRICS),
             Cell(_statistic(g.average_footrule)), Cell(_statistic(g.average_tau)),
             Cell(str(g.models))]
            for g in report.agreement]
    return Table(header=["Protocols", "Repair", "Preserve", "Final", "Turns", "Avg. footrule",
                         "Avg. τ", "Models"], rows=rows)


def _tca(a: Accuracy | None) -> str:
    """A TCA as seed 002 prints it: a fraction to three decimals, the standard error in
    parentheses; '-' for a model the setting did not run."""
    if a is None:
        return "-"
    return f"{a.mean:.3f}" + ("" if a.se is None else f" ({a.se:.3f})")


def _accuracy_tables(acc: TalkAccuracy) -> list[Table]:
    """Seed 002's Tables 4-7 (TCA per model and setting), Fig. 3 (each model's rank, Static
    → interactive) and Table 14 (the normalised footrule of each setting against Static)."""
    protocols = list(acc.protocols)
    models = sorted({*acc.static, *(m for a in acc.protocols.values() for m in a.interactive)})
    columns = {"Static": {m: a.mean for m, a in acc.static.items()},
               **{p: {m: a.mean for m, a in acc.protocols[p].interactive.items()} for p in protocols}}
    marks = {k: extremes(v) for k, v in columns.items()}
    rows = [[Cell(m), Cell(_tca(acc.static.get(m)), marks["Static"].get(m, "")),
             *(Cell(_tca(acc.protocols[p].interactive.get(m)), marks[p].get(m, "")) for p in protocols),
             Cell(str(acc.static[m].n) if m in acc.static else "0")] for m in models]
    rows.append([Cell("All models"), Cell(_tca(acc.static_all)),
                 *(Cell(_tca(acc.protocols[p].all_models)) for p in protocols),
                 Cell(str(acc.static_all.n) if acc.static_all else "0")])
    tca = Table(header=["Model", "Static ↑", *(f"{p} ↑" for p in protocols), "Static episodes"], rows=rows,
                caption="Test-case accuracy (standard error)")

    def moved(p: str, m: str) -> Cell:
        change = acc.protocols[p]
        if m not in change.interactive_rank or m not in change.static_rank:
            return Cell("-")
        before, after = change.static_rank[m], change.interactive_rank[m]
        return Cell(f"{before:g} → {after:g}", sup="" if before == after else f"{before - after:+g}")

    ranks = Table(header=["Model", *(f"{p}: Static → interactive rank" for p in protocols)],
                  rows=[[Cell(m), *(moved(p, m) for p in protocols)] for m in models],
                  caption="Rank 1 = highest TCA (ties share their average rank); +k / -k: places gained or "
                          "lost against Static")
    footrules = Table(header=["Protocol", "Normalised footrule vs Static ↓", "Kendall τ-b vs Static ↑", "Models"],
                      rows=[[Cell(p), Cell(_statistic(a.footrule)), Cell(_statistic(a.tau)),
                             Cell(str(len(a.interactive)))] for p, a in acc.protocols.items()])
    return [tca, ranks, footrules]


def accuracy_section(acc: TalkAccuracy, unprotected: Sequence[str] = ()) -> Section:
    """Seed 002's numbers: test-case accuracy static vs interactive, the ranking change, and
    how often the word caps cut the feedback."""
    notes = [f"{p}: {c.cut} of {c.hints} feedback texts were cut at seed 002's {c.cap}-word cap "
             "(the words past it never reached the candidate)" for p, c in acc.word_caps.items()]
    notes += [f"{p}: {UNPROTECTED_NOTE}" for p in acc.protocols if p in unprotected]
    return Section(
        id="test-case-accuracy", title="Test-case accuracy, static vs interactive (When Benchmarks Talk)",
        intro="Test-case accuracy (seed 002's TCA): the share of hidden tests a program passes, averaged "
              "over episodes, standard error in parentheses, as fractions like the paper. Static is turn 0, "
              "the attempt before any feedback, one per (model, run, instance) however many protocols ran "
              "it (they share its prompt and seed); FeedbackEval's protocols, whose turn 0 is the "
              "erroneous program as given, add none. Each "
              "protocol is an interactive setting scored on its episode's last program (an episode stops at "
              "all-pass or after α turns, as the paper's loop stops at a correct solution). The ranking "
              "change is the normalised Spearman footrule between the Static ranking and each setting's, "
              "over the models the setting ran (0 = the same ranking, 1 = reversed; the paper's Table 14), "
              "beside Kendall's τ-b. With --obfuscate, turn 0 sees the one-sentence problem too, whereas "
              "the paper's Static setting sees the full one.",
        tables=_accuracy_tables(acc), notes=notes)


_TABLE_VII_LABELS: Final = {"InitialFix": "Initial Fix (%) ↑", "FinalFix": "Final Fix (%) ↑",
                             "PMR": "Prog. Mono. (%) ↑", "HE": "Hint Eff. (0-6) ↑"}
_TAU_LABELS: Final = {"InitialFix": "Initial", "FinalFix": "Final", "PMR": "Prog. Mono.",
                      "HE": "Hint Eff.", AVERAGE_RANK: "Avg. rank"}
_PLACE: Final[dict[int, Mark]] = {1: "top1", 2: "top2", 3: "top3"}


def _tau(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _settings_table(s: Sensitivity) -> Table:
    rows = [[Cell(info.name + (" (main)" if info.name == s.main else "")),
             Cell(", ".join(f"{k}={v}" for k, v in info.values.items()) or "-"),
             Cell(info.feedback or "-"),
             Cell("-" if info.turns is None else str(info.turns)),
             Cell("-" if info.scenario_turns is None else str(info.scenario_turns)),
             Cell(str(info.runs)), Cell(str(info.episodes))]
            for info in s.settings]
    return Table(header=["Setting", "Swept", "Feedback model", "α (turns)", "β (scenario turns)",
                         "Runs", "Episodes"], rows=rows, left=3)


def _table_vii(s: Sensitivity, protocol: str) -> Table:
    """Per setting × model, the four metrics; each setting's top-1/2/3 values marked."""
    rows = []
    for setting, models in s.metrics[protocol].items():
        marks = {m: podium({name: getattr(row, m) for name, row in models.items()},
                           higher_is_better=HIGHER_IS_BETTER[m]) for m in TABLE_VII_METRICS}
        for k, (name, row) in enumerate(models.items()):
            rows.append([Cell(setting if k == 0 else ""), Cell(name),
                         *(Cell(fmt(m, getattr(row, m)), mark=_PLACE.get(marks[m][name], ""))
                           for m in TABLE_VII_METRICS)])
    return Table(header=["Setting", "Model", *(_TABLE_VII_LABELS[m] for m in TABLE_VII_METRICS)],
                 rows=rows, left=2, caption=f"Protocol {protocol}")


def _setting_tau_table(s: Sensitivity, protocol: str) -> Table:
    keys = [*TABLE_VII_METRICS, AVERAGE_RANK]
    rows = [[Cell(g.a), Cell(g.b), *(Cell(_tau(g.tau[k])) for k in keys), Cell(str(len(g.models)))]
            for g in s.pairs if g.protocol == protocol]
    rows.append([Cell("Mean over pairs"), Cell(""), *(Cell(_tau(s.mean_tau[protocol][k])) for k in keys),
                 Cell("")])
    return Table(header=["Setting A", "Setting B", *(f"τ {_TAU_LABELS[k]}" for k in keys),
                         "Common models"], rows=rows, left=2, caption=f"Protocol {protocol}")


def _setting_tau_notes(s: Sensitivity) -> list[str]:
    notes = [f"{p}: ran in {next(iter(per))} only, no pair of settings to compare."
             for p, per in s.metrics.items() if len(per) < 2]
    for g in s.pairs:
        where = f"{g.protocol}, {g.a} vs {g.b}"
        if g.reason:
            notes.append(f"{where}: no τ ({g.reason}).")
        elif g.only_a or g.only_b:
            notes.append(f"{where}: τ over the {len(g.models)} common models "
                         f"({', '.join(g.models)}); only in {g.a}: {', '.join(g.only_a) or 'none'}; "
                         f"only in {g.b}: {', '.join(g.only_b) or 'none'}.")
    return notes


def _setting_agreement_table(s: Sensitivity) -> Table:
    rows = [[Cell(setting), Cell(f"{g.a} vs {g.b}"),
             *(Cell(_statistic(g.tau[m])) for m in TABLE_V_METRICS), Cell(_statistic(g.average_tau)),
             Cell(_statistic(g.average_footrule)), Cell(str(g.models))]
            for setting, found in s.agreement.items() for g in found]
    return Table(header=["Setting", "Protocols", "τ Repair", "τ Preserve", "τ Final", "τ Turns",
                         "Avg. τ", "Avg. footrule", "Models"], rows=rows, left=2)


def sensitivity_sections(s: Sensitivity) -> list[Section]:
    """Table VII (seed 000, RQ3), the τ between every pair of settings, and the protocols'
    agreement within each setting: what a ``--sweep`` report adds to its main setting's."""
    incomplete = [f"{info.name}: {info.notice}." for info in s.settings if info.notice]
    sections = [
        Section(id="sensitivity", title="Table VII. Hyperparameter sensitivity (RQ3)",
                intro="Every setting of the sweep (one run each: α = --turns, β = --scenario-turns, "
                      "the feedback model), per model, runs pooled; the report above is the main "
                      f"setting's ({s.main}). As in the paper, the top-1, top-2 and top-3 values of "
                      "each setting are marked green, blue and orange (in Markdown and text: "
                      "superscript ¹ ² ³, top-1 also bold in Markdown); tied models share a place, "
                      "and a column whose values are all equal is not marked.",
                tables=[_settings_table(s), *(_table_vii(s, p) for p in s.metrics)],
                notes=incomplete),
        Section(id="setting-tau", title="Ranking stability across settings (Kendall's τ)",
                intro="Kendall's τ-b between the model rankings of every pair of settings, per "
                      "Table VII metric and on the average rank over those four metrics, for each "
                      "protocol, over the models both settings ran (ties share their average rank, "
                      "an undefined metric ranks last). 1 = the same order, -1 = reversed; — where τ "
                      "is undefined (every model tied in one setting, e.g. Hint Efficiency of a "
                      "protocol without hint levels, or fewer than two common models).",
                tables=[_setting_tau_table(s, p) for p, per in s.metrics.items() if len(per) > 1],
                notes=_setting_tau_notes(s)),
    ]
    if s.agreement:
        sections.append(Section(
            id="setting-agreement", title="Ranking agreement between protocols, per setting",
            intro="Within each setting, Kendall's τ-b and the normalised Spearman footrule "
                  "between the model rankings of every pair of protocols (the Table V metrics, as "
                  "in the main report's agreement table).",
            tables=[_setting_agreement_table(s)]))
    return sections


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
    if report.unprotected:
        pairs.append(("Not hidden-test protected", ", ".join(report.unprotected)))
    pairs += [("Main protocol", report.main),
              ("Episodes ranked" if report.notice else "Episodes",
               f"{report.episodes} finished, {report.errored} errored, {report.unfinished} unfinished"
               + (" (on the instances every model finished; see above)" if report.notice else ""))]
    notes = [f"errored: {eid}: {err}" for eid, err in report.errors[:10]]
    if len(report.errors) > 10:
        notes.append(f"... and {len(report.errors) - 10} more errored episodes")
    return Section(id="overview", title="Run (incomplete)" if report.notice.startswith("incomplete") else "Run",
                   intro=f"⚠ {report.notice}." if report.notice else "", tables=[Table(
        header=["Field", "Value"], rows=[[Cell(k), Cell(v)] for k, v in pairs], left=2)],
        notes=notes)


def report_sections(report: Report) -> list[Section]:
    """The page's sections in order; Tables V/VI only with several runs, comparison only
    with several protocols, Table VII and the τ between settings only for a sweep."""
    main, view = report.main, report.views[report.main]
    order = model_order(report)
    hinted = any(d.attempted for d in view.closure.values())
    hcc = [[Cell(m), Cell(fmt("HCC", view.models[m].HCC)), Cell(fmt("HCCShown", view.models[m].HCCShown))]
           for m in order]
    alpha = max((len(s) for s in view.cumulative.values()), default=1) - 1
    given = main in PROTOCOLS and PROTOCOLS[main].starts_from_erroneous
    turn0 = "turn 0: the erroneous program as given" if given else "turn 0: unhinted repair"
    sections = [
        _overview(report),
        Section(id="leaderboard", title=f"Table III. Progress-centric leaderboard ({main})",
                intro="Rates in % averaged over initially failing episodes (Initial and Final Fix: "
                      "all episodes), runs pooled; ↑ higher is better, ↓ lower is better. "
                      "As in the paper, the top three models per column are marked green (bold in "
                      "Markdown) and the bottom three red (italics); with fewer than six models, "
                      "half of them on each side. The superscript on Final Fix is its gain over "
                      "Initial Fix in points.",
                tables=[leaderboard_table(view.models, order)],
                notes=[f"{main}: {UNPROTECTED_NOTE}"] if main in report.unprotected else []),
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
                      "hinted and pass at the end. The paper's \"H ... the set of failing tests "
                      "selected for hints\" reads two ways: HCC takes H = the selected scenarios "
                      "G_t (every test of them; the figure), HCCShown H = the representatives "
                      "sampled from G_t that the feedback model was shown to write the hint (never "
                      "the candidate), a subset, so it is never larger.",
                figure="fig4" if hinted else None, figure_caption="Fig. 4. HintedClosedCoverage.",
                tables=[Table(header=["Model", "HCC (%) ↑", "HCCShown, H = sampled tests (%) ↑"], rows=hcc)]
                if hinted else [],
                notes=[] if hinted else [f"{main} gives no targeted hints: HCC is undefined."]),
        Section(id="fig5-trajectories",
                title=f"Fig. 5. Pass-rate trajectories ({main}, run {report.fig5_run})",
                intro=f"Pass rate (%) after each turn on chosen instances ({turn0}).",
                figure="fig5" if report.fig5 else None,
                figure_caption="Fig. 5. Pass-rate trajectories for chosen repair instances.",
                tables=[Table(header=["Instance", "Model", "Pass rate by turn (%)"], left=3, rows=[
                    [Cell(iid if k == 0 else ""), Cell(model), Cell(_rates(series))]
                    for iid, per in report.fig5.items()
                    for k, (model, series) in enumerate(per.items())])]),
        Section(id="fig6-cumulative", title=f"Fig. 6. Cumulative Final Fix by turn ({main})",
                intro="Share of episodes fully fixed at or before each turn; " + (
                    "turn 0 is the erroneous program as given (no Initial Fix), turn k is "
                    "Repair@k." if given else "turn 0 is Initial Fix."),
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
            tables=[_protocol_rows(report)],
            notes=[f"{p}: {UNPROTECTED_NOTE}; its numbers are not comparable with protected "
                   "protocols'" for p in report.protocols if p in report.unprotected]))
        if report.agreement:
            sections.append(Section(
                id="agreement", title="Ranking agreement between protocols",
                intro="Normalised Spearman footrule (seed 002) between the model rankings of "
                      "every pair of protocols, runs pooled: 0 = the same ranking, 1 = reversed; "
                      "Turns to Fix ranked lower-first. Avg. τ is the mean Kendall τ-b over the "
                      "metrics where it is defined.",
                tables=[_agreement_table(report)]))
    if report.accuracy is not None:
        sections.append(accuracy_section(report.accuracy, report.unprotected))
    if report.sensitivity is not None:
        sections += sensitivity_sections(report.sensitivity)
    sections.append(Section(
        id="repair-at-k", title="Repair@k (FeedbackEval)",
        intro="The share of episodes whose program passes every hidden test after k feedback "
              "rounds. FeedbackEval's protocols (simple, compiler, test, human) start from the "
              "erroneous program with its feedback, as the paper does, so Repair@1 is one "
              "repair iteration; for the others turn 0 is the unhinted repair, which precedes "
              "the k rounds and counts. --turns 1 is FeedbackEval's single-round setting, "
              "--turns 3 its iterative one.",
        tables=[_repair_at_k_table(report)]))
    sections.append(_fixeval_section(report))
    sections.append(_token_section(report))
    return sections
