"""What every reported metric means: name, direction, one phrase, formula, source.

One table, so that the text leaderboard's legend, ``pairbench list metrics`` and the
docs cannot drift apart. The formulas are those of ``docs/METRICS.md`` (seed 000,
Section IV-E, unless the source says otherwise); T is the hidden test suite, P_t / F_t
the tests passing / failing after turn t, p_t = |P_t| / |T|, G_t the hinted scenario's
tests, τ the last evaluated turn.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

__all__ = ["METRICS", "PERCENT_METRICS", "MetricInfo", "legend_lines", "metrics_table"]


class MetricInfo(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    #: "higher" or "lower" is better
    better: str
    meaning: str
    formula: str
    source: str
    #: "%" (a rate shown in percent), "0..1" (a fraction), "0..6" or "turns"
    unit: str = "%"


_PAIR = "PAIR-BENCH (seed 000)"

METRICS: tuple[MetricInfo, ...] = (
    MetricInfo(name="InitialFix", better="higher", meaning="fixed by the unhinted turn 0 (- for simple, compiler, test, human: they start "
                                                        "from the erroneous program)",
               formula="mean over all instances of 1[p_0 = 1]", source=f"{_PAIR}, Table III"),
    MetricInfo(name="TRS", better="higher", meaning="Targeted Repair Success: the hinted scenario got fixed",
               formula="|G_t ∩ P_t| / |G_t|, per hinted turn", source=f"{_PAIR}, Table III"),
    MetricInfo(name="BRG", better="higher", meaning="Broader Repair Gain: fixes outside the hinted scenario",
               formula="|(F_{t-1} \\ G_t) ∩ P_t| / |T|, per hinted turn", source=f"{_PAIR}, Table III"),
    MetricInfo(name="BP", better="higher", meaning="Behavior Preservation: one minus the share of tests that regressed",
               formula="1 − |P_{t-1} ∩ F_t| / |T|, per turn", source=f"{_PAIR}, Table III"),
    MetricInfo(name="PMR", better="higher", meaning="Progress Monotonicity Rate: turns that did not lower the pass rate",
               formula="(1/τ) Σ_{t=1..τ} 1[p_t ≥ p_{t-1}]", source=f"{_PAIR}, Table III"),
    MetricInfo(name="HE", better="higher", meaning="Hint Efficiency: scenarios closed at low hint levels score more",
               formula="mean over attempted scenarios of 7 − ℓ_closed (0 if never closed)",
               source=f"{_PAIR}, Table III", unit="0..6"),
    MetricInfo(name="GC", better="higher", meaning="Gap Closure: share of the initial gap closed at the best turn",
               formula="(max_t p_t − p_0) / (1 − p_0)", source=f"{_PAIR}, Table III"),
    MetricInfo(name="FinalFix", better="higher", meaning="fixed at some turn",
               formula="mean over all instances of 1[∃ t ≤ τ: p_t = 1]", source=f"{_PAIR}, Table III"),
    MetricInfo(name="TurnsToFix", better="lower", meaning="turns to the first full pass, over fixed instances",
               formula="mean of min{t : p_t = 1} over initially failing, fixed instances",
               source=f"{_PAIR}, Table III", unit="turns"),
    MetricInfo(name="HCC", better="higher", meaning="Hinted Closed Coverage: initially failing hinted tests passing at the end",
               formula="|F_0 ∩ H ∩ P_τ| / |F_0|, H = ∪ G_t", source=f"{_PAIR}, Table III"),
    MetricInfo(name="HCCShown", better="higher",
               meaning="HCC with H = the tests sampled from G_t for the feedback model (the other reading)",
               formula="|F_0 ∩ H' ∩ P_τ| / |F_0|, H' = ∪ representatives of G_t", source=f"{_PAIR}, §V-A.4"),
    MetricInfo(name="RepairRate", better="higher", meaning="failing tests repaired per turn",
               formula="|F_{t-1} ∩ P_t| / |T|, per turn", source=f"{_PAIR}, Table V"),
    MetricInfo(name="PreservationRate", better="higher",
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
#: The metrics shown in percent (every rate); the rest are levels (HE) or turns.
PERCENT_METRICS: frozenset[str] = frozenset(m.name for m in METRICS if m.unit == "%")


def legend_lines(columns: Iterable[str]) -> list[str]:
    """One line per known column: name, direction, meaning (under a text leaderboard)."""
    lines = []
    for col in columns:
        info = _BY_NAME.get(col)
        if info is not None:
            arrow = "↑" if info.better == "higher" else "↓"
            lines.append(f"  {info.name:<10} {arrow} {info.meaning}")
    return lines


def metrics_table() -> str:
    """Every metric with its direction, formula and source (``pairbench list metrics``)."""
    out = []
    for m in METRICS:
        out.append(f"{m.name} ({m.better} is better; {m.unit})\n    {m.meaning}\n    {m.formula}\n    {m.source}")
    return "\n".join(out)
