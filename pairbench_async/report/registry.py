"""The metric registry: every reported metric once, with what each report needs of it.

One table (:data:`METRICS`) gives each metric its name (the key in ``report --json``,
the export's ``metric`` column and :class:`~.metrics.ModelMetrics`' field), its display
label, its direction, its unit (and so how it is printed), its meaning, formula and
source, the paper's Table III stage it belongs to and whether the text leaderboard shows
it. Everything else is derived from it: the per-model metric names
(:data:`.metrics.METRIC_NAMES`, in :class:`~.metrics.ModelMetrics`' field order, which is
the JSON order), the directions (:data:`.ranking.HIGHER_IS_BETTER`), the text
leaderboard's columns (:data:`.leaderboard.LEADERBOARD_COLUMNS`), the page's headers
and formats (:mod:`.layout`), the legend and ``pairbench list metrics``
(:mod:`.glossary`). The formulas are those of ``docs/METRICS.md`` (seed 000, Section
IV-E, unless the source says otherwise); T is the hidden test suite, P_t / F_t the tests
passing / failing after turn t, p_t = |P_t| / |T|, G_t the hinted scenario's tests, τ
the last evaluated turn.

To add a metric: its entry here, its field in :class:`~.metrics.ModelMetrics` when it is
a per-model number (a test checks the two agree), its formula in ``docs/METRICS.md``.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

import msgspec

__all__ = ["BY_NAME", "METRICS", "PERCENT_METRICS", "MetricInfo", "metric"]

#: how a unit reads in a column header ("turns" needs none)
_UNIT_HEADER: Final = {"%": " (%)", "0..6": " (0-6)", "0..1": " (0-1)", "turns": ""}


class MetricInfo(msgspec.Struct, frozen=True, kw_only=True):
    """One metric: what it is called, shown as, measures, and which way is better."""

    name: str
    #: "higher" or "lower" is better
    better: str
    meaning: str
    formula: str
    source: str
    #: "%" (a rate shown in percent), "0..1" (a fraction), "0..6" or "turns"
    unit: str = "%"
    #: the name a table column shows ("Initial Fix"); the name itself when not given
    label: str = ""
    #: the paper's Table III column group ("Before feedback", "Interactive repair", ...)
    stage: str = ""
    #: a column of the text leaderboard (Table III and HCCShown; not Table V's rates)
    leaderboard: bool = False

    @property
    def higher_is_better(self) -> bool:
        return self.better == "higher"

    @property
    def percent(self) -> bool:
        """Shown in percent (a rate), not as a level or a number of turns."""
        return self.unit == "%"

    @property
    def arrow(self) -> str:
        return "↑" if self.higher_is_better else "↓"

    def header(self, label: str | None = None) -> str:
        """A column header: label, unit and direction (``Initial Fix (%) ↑``, ``Turns to Fix ↓``)."""
        return f"{label or self.label or self.name}{_UNIT_HEADER.get(self.unit, '')} {self.arrow}"

    def format(self, value: float | None, digits: int = 2) -> str:
        """A value for display: a rate in % with ``digits`` decimals, a level or a number of
        turns with two; ``-`` when undefined."""
        if value is None:
            return "-"
        return f"{100 * value:.{digits}f}" if self.percent else f"{value:.2f}"


_PAIR = "PAIR-BENCH (seed 000)"

METRICS: tuple[MetricInfo, ...] = (
    MetricInfo(name="InitialFix", label="Initial Fix", stage="Before feedback", leaderboard=True,
               better="higher", meaning="fixed by the unhinted turn 0 (- for simple, compiler, test, "
                                        "human: they start from the erroneous program)",
               formula="mean over all instances of 1[p_0 = 1]", source=f"{_PAIR}, Table III"),
    MetricInfo(name="TRS", label="Targeted Repair", stage="Interactive repair", leaderboard=True,
               better="higher", meaning="Targeted Repair Success: the hinted scenario got fixed",
               formula="|G_t ∩ P_t| / |G_t|, per hinted turn", source=f"{_PAIR}, Table III"),
    MetricInfo(name="BRG", label="Broader Repair", stage="Interactive repair", leaderboard=True,
               better="higher", meaning="Broader Repair Gain: fixes outside the hinted scenario",
               formula="|(F_{t-1} \\ G_t) ∩ P_t| / |T|, per hinted turn", source=f"{_PAIR}, Table III"),
    MetricInfo(name="BP", label="Behavior Preservation", stage="Interactive repair", leaderboard=True,
               better="higher", meaning="Behavior Preservation: one minus the share of tests that regressed",
               formula="1 − |P_{t-1} ∩ F_t| / |T|, per turn", source=f"{_PAIR}, Table III"),
    MetricInfo(name="PMR", label="Progress Monotonicity", stage="Interactive repair", leaderboard=True,
               better="higher", meaning="Progress Monotonicity Rate: turns that did not lower the pass rate",
               formula="(1/τ) Σ_{t=1..τ} 1[p_t ≥ p_{t-1}]", source=f"{_PAIR}, Table III"),
    MetricInfo(name="HE", label="Hint Efficiency", stage="Interactive repair", leaderboard=True,
               better="higher", meaning="Hint Efficiency: scenarios closed at low hint levels score more",
               formula="mean over attempted scenarios of 7 − ℓ_closed (0 if never closed)",
               source=f"{_PAIR}, Table III", unit="0..6"),
    MetricInfo(name="GC", label="Gap Closure", stage="After feedback / outcome", leaderboard=True,
               better="higher", meaning="Gap Closure: share of the initial gap closed at the best turn",
               formula="(max_t p_t − p_0) / (1 − p_0)", source=f"{_PAIR}, Table III"),
    MetricInfo(name="FinalFix", label="Final Fix", stage="After feedback / outcome", leaderboard=True,
               better="higher", meaning="fixed at some turn",
               formula="mean over all instances of 1[∃ t ≤ τ: p_t = 1]", source=f"{_PAIR}, Table III"),
    MetricInfo(name="TurnsToFix", label="Turns to Fix", stage="After feedback / outcome", leaderboard=True,
               better="lower", meaning="turns to the first full pass, over fixed instances",
               formula="mean of min{t : p_t = 1} over initially failing, fixed instances",
               source=f"{_PAIR}, Table III", unit="turns"),
    MetricInfo(name="HCC", label="Hinted Closed Coverage", stage="After feedback / outcome", leaderboard=True,
               better="higher", meaning="Hinted Closed Coverage: initially failing hinted tests passing at the end",
               formula="|F_0 ∩ H ∩ P_τ| / |F_0|, H = ∪ G_t", source=f"{_PAIR}, Table III"),
    MetricInfo(name="HCCShown", label="Hinted Closed Coverage (tests shown)", leaderboard=True,
               better="higher",
               meaning="HCC with H = the tests sampled from G_t for the feedback model (the other reading)",
               formula="|F_0 ∩ H' ∩ P_τ| / |F_0|, H' = ∪ representatives of G_t", source=f"{_PAIR}, §V-A.4"),
    MetricInfo(name="RepairRate", label="Repair Rate",
               better="higher", meaning="failing tests repaired per turn",
               formula="|F_{t-1} ∩ P_t| / |T|, per turn", source=f"{_PAIR}, Table V"),
    MetricInfo(name="PreservationRate", label="Preservation Rate",
               better="higher",
               meaning="one minus the share of tests that regressed per turn (Table V; equals BP)",
               formula="1 − |P_{t-1} ∩ F_t| / |T|, per turn", source=f"{_PAIR}, Table V"),
    MetricInfo(name="Repair@k", better="higher", meaning="episodes fixed within k feedback rounds",
               formula="share of episodes with p_t = 1 for some t ≤ k", source="FeedbackEval (seed 001)"),
    MetricInfo(name="TCA", better="higher",
               meaning="test-case accuracy: the share of hidden tests passed (Static: turn 0; a protocol: "
                       "its last program)",
               formula="mean over episodes of p_0 (Static) or p_τ (interactive), with its standard error",
               source="When Benchmarks Talk (seed 002), Tables 1 and 4-7", unit="0..1"),
    MetricInfo(name="Footrule", better="lower",
               meaning="how far a protocol's TCA ranking of the models is from the Static one",
               formula="Σ_i |σ_Static(i) − σ_protocol(i)| / ⌊n²/2⌋ (0 = same ranking, 1 = reversed)",
               source="When Benchmarks Talk (seed 002), Table 14", unit="0..1"),
    MetricInfo(name="pass@k", better="higher",
               meaning="chance that one of k runs' programs passes every hidden test (unbiased)",
               formula="mean over instances of 1 − C(n−c, k) / C(n, k), c of n runs passing",
               source="FixEval (seed 004), Eq. (1)"),
    MetricInfo(name="TCA@k", better="higher",
               meaning="Test Case Average: share of hidden tests passed by the first k runs' programs",
               formula="mean over instances of (1/k) Σ_{i=1..k} |P^i| / |T|",
               source="FixEval (seed 004), Eq. (2)"),
    MetricInfo(name="ExactMatch", better="higher",
               meaning="final program equals the reference token for token (whitespace normalised; "
                       "also reported without comments and docstrings)",
               formula="share of episodes with tokens(final) = tokens(reference)",
               source="FixEval (seed 004), Table III"),
    MetricInfo(name="CodeBLEU", better="higher",
               meaning="n-gram, keyword-weighted n-gram, AST subtree (SM) and data-flow (DM) match "
                       "of the final programs (codebleu extra)",
               formula="(BLEU + BLEU_weighted + SM + DM) / 4, corpus-level per model",
               source="FixEval (seed 004), Table III; Ren et al. 2020"),
)
_BY_NAME = {m.name: m for m in METRICS}
#: every metric by name
BY_NAME: Final[Mapping[str, MetricInfo]] = MappingProxyType(_BY_NAME)
#: The metrics shown in percent (every rate); the rest are levels (HE) or turns.
PERCENT_METRICS: frozenset[str] = frozenset(m.name for m in METRICS if m.percent)


def metric(name: str) -> MetricInfo:
    """The registry's entry for ``name``; ``ValueError`` for an unknown name."""
    info = _BY_NAME.get(name)
    if info is None:
        raise ValueError(f"unknown metric {name!r}; expected one of {', '.join(_BY_NAME)}")
    return info
