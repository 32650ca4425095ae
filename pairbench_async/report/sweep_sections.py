"""What a ``--sweep`` report adds to its main setting's: Table VII (seed 000, RQ3; each
setting's top-1/2/3 marked within the setting, as the paper colours them), the Kendall τ
between the settings' model rankings, and the protocols' agreement within each setting."""

from __future__ import annotations

from typing import Final

from .layout import Cell, Mark, Section, Table, fmt, statistic
from .ranking import HIGHER_IS_BETTER, TABLE_V_METRICS
from .registry import metric
from .sensitivity import AVERAGE_RANK, TABLE_VII_METRICS, Sensitivity, podium

__all__ = ["sensitivity_sections"]

#: Table VII's shorter column labels (the registry's label where none is given here)
_TABLE_VII_LABELS: Final = {"PMR": "Prog. Mono.", "HE": "Hint Eff."}
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
    return Table(header=["Setting", "Model", *(metric(m).header(_TABLE_VII_LABELS.get(m))
                                               for m in TABLE_VII_METRICS)],
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
             *(Cell(statistic(g.tau[m])) for m in TABLE_V_METRICS), Cell(statistic(g.average_tau)),
             Cell(statistic(g.average_footrule)), Cell(str(g.models))]
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
