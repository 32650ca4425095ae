"""The visual report laid out: the page's sections in order, the composer.

Layout decisions: Tables III/IV and Figs. 3-6 describe one *main* protocol (``pair``
when the run has it: the paper's Table III is PAIR-BENCH only); every protocol appears in
the comparison section and in Tables V/VI, whose "Setting" is the protocol. A ``--sweep``
report adds Table VII and the τ between the settings (:mod:`.sweep_sections`). The tables
are :mod:`.run_tables`' and :mod:`.paper_sections`'; the building blocks :mod:`.layout`'s.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..protocol.protocols import PROTOCOLS
from .cost import cost_summary
from .layout import Cell, Section, Table, fmt, model_order
from .leaderboard import UNPROTECTED_NOTE
from .model import Report
from .paper_sections import accuracy_section, fixeval_section
from .pdb_section import pdb_section
from .run_tables import (
    agreement_table,
    closure_table,
    leaderboard_table,
    protocol_table,
    rank_table,
    repair_at_k_table,
    robustness_table,
    stability_table,
    token_table,
)
from .sweep_sections import sensitivity_sections

__all__ = ["report_sections", "robustness_sections"]


def _rates(series: Sequence[float]) -> str:
    return " → ".join(f"{100 * p:.0f}" for p in series)


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
                   tables=[token_table(report)], notes=notes)


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


def _turn0(protocol: str) -> bool:
    """Is the protocol's turn 0 the erroneous program as given (FeedbackEval's), not a repair?"""
    return protocol in PROTOCOLS and PROTOCOLS[protocol].starts_from_erroneous


def _hinted(report: Report) -> bool:
    """Did the main protocol attempt any scenario (give targeted hints)?"""
    return any(d.attempted for d in report.views[report.main].closure.values())


def _leaderboard_section(report: Report) -> Section:
    main = report.main
    return Section(id="leaderboard", title=f"Table III. Progress-centric leaderboard ({main})",
                   intro="Rates in % averaged over initially failing episodes (Initial and Final Fix: "
                         "all episodes), runs pooled; ↑ higher is better, ↓ lower is better. "
                         "As in the paper, the top three models per column are marked green (bold in "
                         "Markdown) and the bottom three red (italics); with fewer than six models, "
                         "half of them on each side; a column whose values are all equal "
                         "is not marked. "
                         "The superscript on Final Fix is its gain over "
                         "Initial Fix in points.",
                   tables=[leaderboard_table(report.views[main].models, model_order(report))],
                   notes=[f"{main}: {UNPROTECTED_NOTE}"] if main in report.unprotected else [])


def _ranking_section(report: Report) -> Section:
    return Section(id="ranking", title=f"Table IV. Metric-wise ranking ({report.main})",
                   intro="Row r names the model at position r for each metric; a superscript =k "
                         "marks a tie sharing average rank k, n/a an undefined metric (ranked last). "
                         "The average rank is a descriptive profile, not a score. The paper's "
                         "\"Net Gain\" column is Gap Closure (GC): the paper gives it no formula, "
                         "and it is the column Table III calls Gap Closure, in the same place (docs/METRICS.md).",
                   tables=[rank_table(report)])


def _closure_section(report: Report) -> Section:
    main, hinted = report.main, _hinted(report)
    return Section(id="fig3-closure", title=f"Fig. 3. Hint-level closure distribution ({main})",
                   intro="Attempted scenarios by the hint level at which they closed; shares of all "
                         "attempted scenarios, unresolved included (counts in parentheses).",
                   figure="fig3" if hinted else None,
                   figure_caption="Fig. 3. Hint-level success and fail distribution.",
                   tables=[closure_table(report)] if hinted else [],
                   notes=[] if hinted else [f"{main} gives no targeted hints: "
                                            "no scenario attempted."])


def _hcc_section(report: Report) -> Section:
    main, hinted, view = report.main, _hinted(report), report.views[report.main]
    hcc = [[Cell(m), Cell(fmt("HCC", view.models[m].HCC)), Cell(fmt("HCCShown", view.models[m].HCCShown))]
           for m in model_order(report)]
    return Section(id="fig4-hcc", title=f"Fig. 4. HintedClosedCoverage ({main})",
                   intro="|F_0 ∩ H ∩ P_T| / |F_0|: the share of initially failing tests that were "
                         "hinted and pass at the end. The paper's \"H ... the set of failing tests "
                         "selected for hints\" reads two ways: HCC takes H = the selected scenarios "
                         "G_t (every test of them; the figure), HCCShown H = the representatives "
                         "sampled from G_t that the feedback model was shown to write the hint (never "
                         "the candidate), a subset, so it is never larger.",
                   figure="fig4" if hinted else None, figure_caption="Fig. 4. HintedClosedCoverage.",
                   tables=[Table(header=["Model", "HCC (%) ↑", "HCCShown, H = sampled tests (%) ↑"],
                                 rows=hcc)] if hinted else [],
                   notes=[] if hinted else [f"{main} gives no targeted hints: HCC is undefined."])


def _trajectories_section(report: Report) -> Section:
    turn0 = ("turn 0: the erroneous program as given" if _turn0(report.main)
             else "turn 0: unhinted repair")
    return Section(id="fig5-trajectories",
                   title=f"Fig. 5. Pass-rate trajectories ({report.main}, run {report.fig5_run})",
                   intro=f"Pass rate (%) after each turn on chosen instances ({turn0}).",
                   figure="fig5" if report.fig5 else None,
                   figure_caption="Fig. 5. Pass-rate trajectories for chosen repair instances.",
                   tables=[Table(header=["Instance", "Model", "Pass rate by turn (%)"], left=3, rows=[
                       [Cell(iid if k == 0 else ""), Cell(model), Cell(_rates(series))]
                       for iid, per in report.fig5.items()
                       for k, (model, series) in enumerate(per.items())])])


def _cumulative_section(report: Report) -> Section:
    view = report.views[report.main]
    alpha = max((len(s) for s in view.cumulative.values()), default=1) - 1
    return Section(id="fig6-cumulative", title=f"Fig. 6. Cumulative Final Fix by turn ({report.main})",
                   intro="Share of episodes fully fixed at or before each turn; " + (
                       "turn 0 is the erroneous program as given (no Initial Fix), turn k is "
                       "Repair@k." if _turn0(report.main) else "turn 0 is Initial Fix."),
                   figure="fig6", figure_caption="Fig. 6. Cumulative Final Fix Rate by turn.",
                   tables=[Table(header=["Model", *(f"t={t}" for t in range(alpha + 1))], rows=[
                       [Cell(m), *(Cell(f"{100 * v:.1f}") for v in view.cumulative[m])]
                       for m in model_order(report)])])


def robustness_sections(report: Report) -> list[Section]:
    """Tables V and VI, with several runs (the page's, and the text report's)."""
    return [
        Section(id="robustness", title="Table V. Robustness across repeated runs",
                intro="Mean ± sample standard deviation over runs, per model and setting (protocol); "
                      "Repair Rate = |F_{t-1} ∩ P_t| / |T| per turn. Init. Fix varies too: the protocols "
                      "of a run share its turn 0 (§V-B: \"Both settings start from the same initial "
                      "candidate repairs\"), but each run draws turn 0 again.",
                tables=[robustness_table(report)]),
        Section(id="stability", title="Table VI. Ranking stability (Kendall's τ)",
                intro="τ-b between the model rankings of every pair of runs, averaged over pairs; "
                      "Turns to Fix ranked lower-first; '-' where τ is undefined in every pair (fewer "
                      "than two models, or every model tied).",
                tables=[stability_table(report)]),
    ]


def _protocol_sections(report: Report) -> list[Section]:
    """The per-protocol comparison and, where defined, the protocols' ranking agreement."""
    sections = [Section(
        id="protocols", title="Per-protocol comparison",
        intro="Every protocol on the same instances; Δ is the Final Fix difference to the main "
              f"protocol ({report.main}) in percentage points.",
        figure="fig7", figure_caption="Cumulative Final Fix by turn, per model and protocol.",
        tables=[protocol_table(report)],
        notes=[f"{p}: {UNPROTECTED_NOTE}; its numbers are not comparable with protected "
               "protocols'" for p in report.protocols if p in report.unprotected])]
    if report.agreement:
        sections.append(Section(
            id="agreement", title="Ranking agreement between protocols",
            intro="Normalised Spearman footrule (seed 002) between the model rankings of "
                  "every pair of protocols, runs pooled: 0 = the same ranking, 1 = reversed; "
                  "Turns to Fix ranked lower-first. Avg. τ is the mean Kendall τ-b over the "
                  "metrics where it is defined.",
            tables=[agreement_table(report)]))
    return sections


def _repair_at_k_section(report: Report) -> Section:
    return Section(
        id="repair-at-k", title="Repair@k (FeedbackEval)",
        intro="The share of episodes whose program passes every hidden test after k feedback "
              "rounds. FeedbackEval's protocols (simple, compiler, test, human) start from the "
              "erroneous program with its feedback, as the paper does, so Repair@1 is one "
              "repair iteration; for the others turn 0 is the unhinted repair, which precedes "
              "the k rounds and counts. --turns 1 is FeedbackEval's single-round setting, "
              "--turns 3 its iterative one.",
        tables=[repair_at_k_table(report)])


def report_sections(report: Report) -> list[Section]:
    """The page's sections in order; Tables V/VI only with several runs, comparison only
    with several protocols, Table VII and the τ between settings only for a sweep."""
    sections: list[Section] = [
        _overview(report), _leaderboard_section(report), _ranking_section(report),
        _closure_section(report), _hcc_section(report), _trajectories_section(report),
        _cumulative_section(report),
    ]
    if report.robustness:
        sections += robustness_sections(report)
    if len(report.protocols) > 1:
        sections += _protocol_sections(report)
    if report.accuracy is not None:
        sections.append(accuracy_section(report.accuracy, report.unprotected))
    if report.sensitivity is not None:
        sections += sensitivity_sections(report.sensitivity)
    # PDB's measures where the text report has them: after Repair@k, before FixEval's
    sections += [_repair_at_k_section(report), pdb_section(report), fixeval_section(report),
                 _token_section(report)]
    return sections
