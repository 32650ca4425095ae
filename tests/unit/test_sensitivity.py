"""Table VII (seed 000, RQ3) and the Kendall τ between a sweep's settings, worked by hand."""

from __future__ import annotations

import math

import pytest

from pairbench_async.report.html import build_report, render_html, render_markdown
from pairbench_async.report.metrics import ModelMetrics
from pairbench_async.report.sensitivity import (
    AVERAGE_RANK,
    TABLE_VII_METRICS,
    podium,
    protocol_metrics,
    sensitivity,
    sensitivity_json,
    setting_pairs,
)
from pairbench_async.runlog.records import EpisodeRecord, Record, TargetRecord, TurnRecord

TESTS = ("a", "b")


def episode(model: str, turns: list[tuple[str, str | None, int | None]],
            protocol: str = "pair") -> list[Record]:
    """One finished episode on a two-test instance; each turn is (passing tests, the
    targeted scenario's tests or None, hint level or None)."""
    out: list[Record] = []
    for t, (passed, target, level) in enumerate(turns):
        out.append(TurnRecord(
            run_id="r", episode_id=f"{model}-{protocol}", instance_id="i", model=model,
            protocol=protocol, run=0, seed=0, turn=t, program="", passed=sorted(passed),
            failed=sorted(set(TESTS) - set(passed)), pass_rate=len(passed) / len(TESTS),
            target=TargetRecord(scenario_id=target, tests=sorted(target), grouping="g",
                                failure="wrong") if target else None,
            hint_level=level))
    out.append(EpisodeRecord(run_id="r", episode_id=f"{model}-{protocol}", instance_id="i",
                             model=model, protocol=protocol, run=0, seed=0, status="done",
                             turns=len(turns) - 1))
    return out


# S1: A fixes both tests at L1; B fixes nothing at L1, both at L2; C starts with a, loses it
# at turn 1 (a regression), gets it back at turn 2 but never fixes b.
S1 = [*episode("A", [("", None, None), ("ab", "ab", 1)]),
      *episode("B", [("", None, None), ("", "ab", 1), ("ab", "ab", 2)]),
      *episode("C", [("a", None, None), ("", "b", 1), ("a", "b", 2)])]
# S2: A passes only a at L1; B fixes both at L1; C fixes b at L1. D is only here.
S2 = [*episode("A", [("", None, None), ("a", "ab", 1)]),
      *episode("B", [("", None, None), ("ab", "ab", 1)]),
      *episode("C", [("a", None, None), ("ab", "b", 1)]),
      *episode("D", [("", None, None), ("ab", "ab", 1)])]
# S3 shares only A with the others.
S3 = [*episode("A", [("", None, None), ("ab", "ab", 1)]),
      *episode("E", [("", None, None), ("a", "ab", 1)])]


def test_table_vii_metrics_from_records_by_hand() -> None:
    m = protocol_metrics(S1)["pair"]
    # InitialFix: nobody passes both tests at turn 0 -> 0 for all three.
    assert [m[x].InitialFix for x in "ABC"] == [0.0, 0.0, 0.0]
    # FinalFix: A (turn 1) and B (turn 2) reach 2/2, C never -> 1, 1, 0.
    assert [m[x].FinalFix for x in "ABC"] == [1.0, 1.0, 0.0]
    # PMR = share of turns with p_t >= p_{t-1}: A 1/1, B (0 -> 0 -> 2) 2/2, C (1 -> 0 -> 1) 1/2.
    assert [m[x].PMR for x in "ABC"] == [1.0, 1.0, 0.5]
    # HE = 7 - closing level of the one scenario, 0 if unresolved: A L1 -> 6, B L2 -> 5,
    # C's scenario {b} never passes -> 0.
    assert [m[x].HE for x in "ABC"] == [6.0, 5.0, 0.0]
    m2 = protocol_metrics(S2)["pair"]
    # S2: FinalFix A 0, B 1, C 1; PMR 1 for all; HE A 0 (unresolved), B 6, C 6.
    assert [m2[x].FinalFix for x in "ABC"] == [0.0, 1.0, 1.0]
    assert [m2[x].PMR for x in "ABC"] == [1.0, 1.0, 1.0]
    assert [m2[x].HE for x in "ABC"] == [0.0, 6.0, 6.0]


def test_kendall_tau_between_settings_by_hand() -> None:
    s = sensitivity([("S1", S1, None, ""), ("S2", S2, None, ""), ("S3", S3, None, "")])
    assert s.main == "S1" and list(s.metrics) == ["pair"]
    assert [(g.a, g.b) for g in s.pairs] == [("S1", "S2"), ("S1", "S3"), ("S2", "S3")]
    g = s.pairs[0]
    # S1 vs S2 over the common models A, B, C (D only in S2).
    assert g.models == ["A", "B", "C"] and g.only_a == [] and g.only_b == ["D"] and not g.reason
    # InitialFix is 0 for every model in both settings: all tied, τ undefined.
    assert g.tau["InitialFix"] is None
    # FinalFix ranks: S1 (1, 1, 0) -> A 1.5, B 1.5, C 3; S2 (0, 1, 1) -> A 3, B 1.5, C 1.5.
    # Pairs: (A,B) tied in S1 -> 0; (A,C) S1 A ahead, S2 C ahead -> discordant -1;
    # (B,C) tied in S2 -> 0. n_c - n_d = -1; n_0 = 3, one tie in each ranking:
    # τ_b = -1 / sqrt((3 - 1)(3 - 1)) = -1/2.
    assert g.tau["FinalFix"] == pytest.approx(-0.5)
    # PMR is 1 for all of S2: all tied there, τ undefined.
    assert g.tau["PMR"] is None
    # HE ranks: S1 (6, 5, 0) -> A 1, B 2, C 3; S2 (0, 6, 6) -> A 3, B 1.5, C 1.5.
    # (A,B) -1, (A,C) -1, (B,C) tied in S2 -> 0: n_c - n_d = -2; ties: 0 in S1, 1 in S2:
    # τ_b = -2 / sqrt(3 * 2) = -0.816497.
    assert g.tau["HE"] == pytest.approx(-2 / math.sqrt(6))
    # Average rank over the four Table VII metrics:
    # S1: Initial all 2; Final A 1.5 B 1.5 C 3; PMR A 1.5 B 1.5 C 3; HE A 1 B 2 C 3
    #     -> A (2+1.5+1.5+1)/4 = 1.5, B (2+1.5+1.5+2)/4 = 1.75, C (2+3+3+3)/4 = 2.75;
    # S2: Initial all 2; Final A 3 B 1.5 C 1.5; PMR all 2; HE A 3 B 1.5 C 1.5
    #     -> A (2+3+2+3)/4 = 2.5, B (2+1.5+2+1.5)/4 = 1.75, C 1.75.
    # (A,B) -1, (A,C) -1, (B,C) tied in S2 -> τ_b = -2 / sqrt(3 * 2), as for HE.
    assert g.tau[AVERAGE_RANK] == pytest.approx(-2 / math.sqrt(6))
    # S3 shares one model with each: no ranking to compare, and the reason says so.
    for pair in s.pairs[1:]:
        assert pair.models == ["A"] and pair.reason == "1 common model: a ranking needs two"
        assert set(pair.tau.values()) == {None}
    assert s.pairs[1].only_a == ["B", "C"] and s.pairs[1].only_b == ["E"]
    # the mean over pairs is over the pairs where τ is defined: S1 vs S2 only
    assert s.mean_tau["pair"]["FinalFix"] == pytest.approx(-0.5)
    assert s.mean_tau["pair"]["PMR"] is None
    # one protocol per setting: no protocol agreement to show
    assert s.agreement == {}


def test_identical_settings_have_tau_one_and_a_chosen_main() -> None:
    s = sensitivity([("x", S1, None, ""), ("y", S1, None, "")], main="y")
    assert s.main == "y"
    # same records, same ranks: every defined τ is 1 (InitialFix is all tied: None)
    assert s.pairs[0].tau == {"InitialFix": None, "FinalFix": 1.0, "PMR": 1.0, "HE": 1.0,
                              AVERAGE_RANK: 1.0}
    with pytest.raises(ValueError, match="not in the sweep"):
        sensitivity([("x", S1, None, "")], main="z")


def test_setting_pairs_on_metrics_reversed_and_per_protocol_agreement() -> None:
    def mm(final: float) -> ModelMetrics:
        return ModelMetrics(InitialFix=0.1 * final, FinalFix=final, PMR=final, HE=6 * final)

    up = {"A": mm(0.9), "B": mm(0.5), "C": mm(0.1)}
    down = {"A": mm(0.1), "B": mm(0.5), "C": mm(0.9)}
    (pair,) = setting_pairs({"up": up, "down": down}, "pair")
    # a full reversal of three models: 3 discordant pairs, no ties -> τ = -3/3 = -1
    assert all(pair.tau[k] == pytest.approx(-1.0) for k in (*TABLE_VII_METRICS, AVERAGE_RANK))
    with pytest.raises(ValueError, match="unknown metric"):
        setting_pairs({"up": up}, "pair", ("Nope",))
    # two protocols in one setting: their agreement is computed within it
    both = [*S1, *(r for r in episode("A", [("", None, None), ("ab", None, None)], "vanilla")),
            *(r for r in episode("B", [("", None, None), ("a", None, None)], "vanilla"))]
    s = sensitivity([("only", both, None, "")])
    assert list(s.metrics) == ["pair", "vanilla"]
    (agree,) = s.agreement["only"]
    assert (agree.a, agree.b, agree.models) == ("pair", "vanilla", 2)


def test_podium_marks_the_top_three_distinct_values() -> None:
    # 0.9 is the best value (top-1, shared by a and c), 0.5 the second, 0.2 the third;
    # 0.1 is fourth (unmarked), None is undefined (unmarked)
    assert podium({"a": 0.9, "b": 0.5, "c": 0.9, "d": 0.2, "e": 0.1, "f": None}) == {
        "a": 1, "b": 2, "c": 1, "d": 3, "e": 0, "f": 0}
    # lower is better: 2 turns is top-1
    assert podium({"a": 2.0, "b": 3.0}, higher_is_better=False) == {"a": 1, "b": 2}
    # nothing to tell apart: one value, or all equal
    assert podium({"a": 0.5, "b": 0.5}) == {"a": 0, "b": 0}
    assert podium({"a": None, "b": 0.5}) == {"a": 0, "b": 0}


def test_report_pages_carry_table_vii_with_its_marks() -> None:
    s = sensitivity([("S1", S1, None, ""), ("S2", S2, None, ""), ("S3", S3, None, "")])
    report = build_report(S1, title="sweep", sensitivity=s)
    page = render_html(report)
    assert '<section id="sensitivity"><h2>Table VII. Hyperparameter sensitivity (RQ3)</h2>' in page
    assert '<section id="setting-tau">' in page
    # S1's HE column: A 6.00 top-1 (green), B 5.00 top-2 (blue), C 0.00 top-3 (orange)
    assert '<td class="top1" title="top-1 of its setting">6.00</td>' in page
    assert '<td class="top2" title="top-2 of its setting">5.00</td>' in page
    assert '<td class="top3" title="top-3 of its setting">0.00</td>' in page
    assert "S1 vs S3: no τ (1 common model: a ranking needs two)." in page
    md = render_markdown(report)
    assert "## Table VII. Hyperparameter sensitivity (RQ3)" in md
    assert "| S1 | S2 | — | -0.500 | — | -0.816 | -0.816 | 3 |" in md
    assert "| **6.00**¹ |" in md and "| 5.00² |" in md
    data = sensitivity_json(s)
    assert data["table_vii"]["pair"]["S2"]["A"] == {"InitialFix": 0.0, "FinalFix": 0.0, "PMR": 1.0,
                                                    "HE": 0.0}
    assert data["setting_tau"][0]["tau"]["FinalFix"] == pytest.approx(-0.5)
    # a single run's report has none of it
    assert "Table VII" not in render_markdown(build_report(S1))


def test_a_protocol_run_in_one_setting_only_has_no_tau_table() -> None:
    vanilla = [*episode("A", [("", None, None), ("ab", None, None)], "vanilla"),
               *episode("B", [("", None, None), ("a", None, None)], "vanilla")]
    s = sensitivity([("S1", [*S1, *vanilla], None, ""), ("S2", S2, None, "")])
    # vanilla is in S1 only: Table VII shows it, the τ section says why it has no table
    assert list(s.metrics["vanilla"]) == ["S1"] and {g.protocol for g in s.pairs} == {"pair"}
    md = render_markdown(build_report([*S1, *vanilla], sensitivity=s))
    tau_part = md.split("## Ranking stability across settings")[1].split("\n## ")[0]
    assert "*Protocol pair*" in tau_part and "*Protocol vanilla*" not in tau_part
    assert "vanilla: ran in S1 only, no pair of settings to compare." in tau_part


def test_a_markdown_table_prints_its_caption_once() -> None:
    # two changes each added the caption to markdown_table: it was printed twice
    from pairbench_async.report.html import markdown_table
    from pairbench_async.report.layout import Cell, Table

    text = markdown_table(Table(header=["A"], rows=[[Cell("1")]], caption="Protocol pair"))
    assert text.count("Protocol pair") == 1 and text.startswith("*Protocol pair*")


def test_protocols_follow_the_manifest_order_not_the_records_order(tmp_path: object) -> None:
    # records arrive in completion order (a protocol with no turn-0 call finishes first):
    # Table VII and the per-setting agreement list the protocols as the run did
    from pairbench_async.report.sensitivity import sensitivity
    from pairbench_async.runlog.records import EpisodeRecord, RunManifest, TurnRecord

    def episode(protocol: str, model: str, passed: bool) -> list[object]:
        eid = f"{protocol}-{model}"
        return [TurnRecord(run_id="r", episode_id=eid, instance_id="i", model=model, protocol=protocol, run=0,
                           seed=0, turn=0, program="p", passed=["t"] if passed else [],
                           failed=[] if passed else ["t"], pass_rate=float(passed)),
                EpisodeRecord(run_id="r", episode_id=eid, instance_id="i", model=model, protocol=protocol,
                              run=0, seed=0, status="done", turns=0)]

    records = [*episode("test", "a", True), *episode("test", "b", False),
               *episode("pair", "a", True), *episode("pair", "b", False)]
    manifest = RunManifest(run_id="r", created="now", software_version="0", dataset=[], dataset_hash="h",
                           instances=1, candidates=["a", "b"], feedback="rules", protocols=["pair", "test"],
                           runs=1, seed=0, params={"turns": 1})
    s = sensitivity([("turns=1", records, manifest, ""), ("turns=2", records, manifest, "")])  # type: ignore[list-item]
    assert list(s.metrics) == ["pair", "test"]
    assert [(g.a, g.b) for g in s.agreement["turns=1"]] == [("pair", "test")]


def test_every_rate_metric_is_shown_in_percent_everywhere() -> None:
    # HCCShown was shown as a fraction (0.09) in Fig. 4's table while the text said 8.9:
    # one list of the percent metrics (the glossary's units) serves every renderer
    from pairbench_async.report.layout import fmt
    from pairbench_async.report.leaderboard import _fmt
    from pairbench_async.report.metrics import METRIC_NAMES

    for name in METRIC_NAMES:
        expected = ("0.25", "0.25") if name in ("HE", "TurnsToFix") else ("25.00", "25.0")
        assert (fmt(name, 0.25), _fmt(name, 0.25)) == expected, name
