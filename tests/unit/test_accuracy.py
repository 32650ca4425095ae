"""When Benchmarks Talk's test-case accuracy, static vs interactive, worked by hand.

Seed 002: "TCA = # Test Cases Passed / Total # Test Cases" (Appendix A.5), averaged per
model and setting with its standard error (Tables 4-7); Static is "the first attempt"
with no feedback; the ranking change is the normalised Spearman footrule between the
Static and each interactive ranking (Table 14).
"""

from __future__ import annotations

import math

import pytest

from pairbench_async.report.accuracy import (
    Accuracy,
    WordCapCuts,
    mean_accuracy,
    static_vs_interactive,
    talk_accuracy,
    word_cap_cuts,
)
from pairbench_async.report.trajectory import Trajectory, TurnOutcome
from pairbench_async.runlog.records import EpisodeRecord, HintRecord, Record, TurnRecord


def _traj(model: str, protocol: str, iid: str, n_tests: int, passing: list[int], run: int = 0) -> Trajectory:
    """An episode whose turn t passes the first ``passing[t]`` of ``n_tests`` tests."""
    tests = [f"t{k}" for k in range(n_tests)]
    return Trajectory(instance_id=iid, model=model, protocol=protocol, run=run, test_ids=tests,
                      turns=[TurnOutcome(turn=t, passed=frozenset(tests[:k])) for t, k in enumerate(passing)])


# Three models, two protocols, two questions: i1 has 4 tests, i2 has 2.
#                       p_0 (static)     p_tau (interactive, the LAST program)
# A paragraph i1 [1,4]  1/4 = .25        4/4 = 1
# A paragraph i2 [0,0,1] 0/2 = 0         1/2 = .5
# A sentence  i1 [1,2]  .25              2/4 = .5
# A sentence  i2 [0,0]  0                0
# B paragraph i1 [2,2]  .5               .5
# B paragraph i2 [2]    1 (fixed at turn 0, tau = 0)  1
# B sentence  i1 [2,3]  .5               .75
# B sentence  i2 [2]    1                1
# C paragraph i1 [3,1,3] .75             .75
# C paragraph i2 [1,0]  .5               0 (a regression at the last turn counts)
# C sentence  i1 [3,4]  .75              1
# C sentence  i2 [1,1]  .5               .5
TRAJS = [
    _traj("A", "paragraph", "i1", 4, [1, 4]), _traj("A", "paragraph", "i2", 2, [0, 0, 1]),
    _traj("A", "sentence", "i1", 4, [1, 2]), _traj("A", "sentence", "i2", 2, [0, 0]),
    _traj("B", "paragraph", "i1", 4, [2, 2]), _traj("B", "paragraph", "i2", 2, [2]),
    _traj("B", "sentence", "i1", 4, [2, 3]), _traj("B", "sentence", "i2", 2, [2]),
    _traj("C", "paragraph", "i1", 4, [3, 1, 3]), _traj("C", "paragraph", "i2", 2, [1, 0]),
    _traj("C", "sentence", "i1", 4, [3, 4]), _traj("C", "sentence", "i2", 2, [1, 1]),
]


def _close(a: Accuracy, mean: float, se: float | None, n: int) -> None:
    assert a.n == n and math.isclose(a.mean, mean, abs_tol=1e-12)
    assert (a.se is None) if se is None else (a.se is not None and math.isclose(a.se, se, abs_tol=1e-9))


def test_mean_and_standard_error_by_hand() -> None:
    # [1, .5]: mean .75; s = sqrt(2 * .25² / 1) = .353553; se = s / sqrt(2) = .25
    _close(mean_accuracy([1.0, 0.5]), 0.75, 0.25, 2)
    _close(mean_accuracy([0.4]), 0.4, None, 1)  # one episode: no standard error
    with pytest.raises(ValueError, match="no episode"):
        mean_accuracy([])


def test_static_takes_one_turn_0_per_model_run_and_instance_by_hand() -> None:
    # Every protocol's turn 0 is the same prompt under the same seed: one Static draw per
    # (model, run, instance), not one per protocol (that would shrink the standard error
    # without a new draw; mutation: pooling both protocols' copies gives n = 4).
    acc = static_vs_interactive(TRAJS, ["paragraph", "sentence"])
    # A: p_0 = .25 (i1), 0 (i2) -> mean .125; s = sqrt(2 * .125² / 1) = .1767767, se = s / sqrt(2) = .125
    _close(acc.static["A"], 0.125, 0.125, 2)
    # B: .5, 1 -> .75; s = sqrt(2 * .25²) = .3535534, se = .25
    _close(acc.static["B"], 0.75, 0.25, 2)
    # C: .75, .5 -> .625; se = .125
    _close(acc.static["C"], 0.625, 0.125, 2)
    # over the 6 distinct draws: (.25 + 0 + .5 + 1 + .75 + .5) / 6 = 3 / 6 = .5
    assert acc.static_all is not None and acc.static_all.n == 6 and math.isclose(acc.static_all.mean, 0.5)
    # the copy kept is the first protocol's in the order given: a sentence-first order reads
    # the sentence episodes' turn 0 (here equal, so the numbers do not move)
    again = static_vs_interactive(TRAJS, ["sentence", "paragraph"])
    assert {m: (a.mean, a.n) for m, a in again.static.items()} == {m: (a.mean, a.n) for m, a in acc.static.items()}


def test_interactive_tca_per_model_and_protocol_by_hand() -> None:
    acc = static_vs_interactive(TRAJS, ["paragraph", "sentence"])
    assert list(acc.protocols) == ["paragraph", "sentence"]
    para, sent = acc.protocols["paragraph"], acc.protocols["sentence"]
    # paragraph: A (1 + .5) / 2 = .75, se .25; B (.5 + 1) / 2 = .75, se .25;
    #            C (.75 + 0) / 2 = .375, s = sqrt(2 * .375²) = .53033, se = .375
    _close(para.interactive["A"], 0.75, 0.25, 2)
    _close(para.interactive["B"], 0.75, 0.25, 2)
    _close(para.interactive["C"], 0.375, 0.375, 2)
    # sentence: A (.5 + 0) / 2 = .25; B (.75 + 1) / 2 = .875; C (1 + .5) / 2 = .75
    assert [sent.interactive[m].mean for m in "ABC"] == [0.25, 0.875, 0.75]
    # all models: paragraph (1 + .5 + .5 + 1 + .75 + 0) / 6 = 3.75 / 6 = .625;
    #             sentence (.5 + 0 + .75 + 1 + 1 + .5) / 6 = .625
    assert para.all_models.n == 6 and math.isclose(para.all_models.mean, 0.625)
    assert math.isclose(sent.all_models.mean, 0.625)


def test_ranking_change_is_the_normalised_footrule_by_hand() -> None:
    acc = static_vs_interactive(TRAJS, ["paragraph", "sentence"])
    para, sent = acc.protocols["paragraph"], acc.protocols["sentence"]
    # Static: B .75 (1), C .625 (2), A .125 (3)
    assert para.static_rank == {"A": 3.0, "B": 1.0, "C": 2.0}
    # paragraph: A = B = .75 share positions 1, 2 -> 1.5; C .375 -> 3
    assert para.interactive_rank == {"A": 1.5, "B": 1.5, "C": 3.0}
    # footrule: |3 - 1.5| + |1 - 1.5| + |2 - 3| = 1.5 + .5 + 1 = 3, over floor(3² / 2) = 4 -> .75
    assert para.footrule == 0.75
    # tau-b: (A,B) static +, paragraph tied -> 0; (A,C) static +, paragraph - -> discordant;
    #        (B,C) static -, paragraph - -> concordant; (1 - 1) / sqrt((3 - 0)(3 - 1)) = 0
    assert para.tau == 0.0
    # sentence: B .875 (1), C .75 (2), A .25 (3): the Static ranking -> footrule 0, tau 1
    assert sent.interactive_rank == sent.static_rank == {"A": 3.0, "B": 1.0, "C": 2.0}
    assert sent.footrule == 0.0 and sent.tau == 1.0


def test_a_protocol_with_one_model_has_no_ranking_and_order_defaults_to_sorted() -> None:
    trajs = [*TRAJS, _traj("A", "code", "i1", 4, [1, 4])]
    acc = static_vs_interactive(trajs)
    assert list(acc.protocols) == ["code", "paragraph", "sentence"]
    code = acc.protocols["code"]
    assert code.footrule is None and code.tau is None and code.interactive_rank == {"A": 1.0}
    # A's code episode on i1 is a third copy of (A, run 0, i1)'s turn 0: Static still counts
    # one draw per instance, (.25 + 0) / 2 = .125 (mutation: pooling copies gives .15 over 5)
    assert math.isclose(acc.static["A"].mean, 0.125) and acc.static["A"].n == 2


def test_repeated_runs_are_pooled_and_an_episode_twice_is_refused() -> None:
    acc = static_vs_interactive([_traj("A", "paragraph", "i1", 4, [1, 4], run=0),
                                 _traj("A", "paragraph", "i1", 4, [2, 2], run=1)])
    # run 0 ends at 1, run 1 at .5: (1 + .5) / 2 = .75; Static (.25 + .5) / 2 = .375
    assert acc.protocols["paragraph"].interactive["A"].mean == 0.75 and acc.static["A"].mean == 0.375
    with pytest.raises(ValueError, match="duplicate"):
        static_vs_interactive([TRAJS[0], TRAJS[0]])
    with pytest.raises(ValueError, match="no episode"):
        static_vs_interactive([])


def _turn(protocol: str, turn: int, hint: HintRecord | None, passed: int = 0) -> TurnRecord:
    return TurnRecord(run_id="r", episode_id=f"{protocol}-e", instance_id="i", model="m", protocol=protocol,
                      run=0, seed=0, turn=turn, program="pass", passed=["t0"] if passed else [],
                      failed=[] if passed else ["t0"], pass_rate=float(passed), hint=hint)


def test_word_cap_cuts_count_the_recorded_cuts() -> None:
    records: list[Record] = [
        _turn("paragraph", 0, None),
        _turn("paragraph", 1, HintRecord(level=0, text="x", words_cut=30)),
        _turn("paragraph", 2, HintRecord(level=0, text="x")),
        _turn("sentence", 1, HintRecord(level=0, text="x")),
        _turn("vanilla", 1, HintRecord(level=0, text="x", words_cut=3)),  # no cap: not counted
    ]
    assert word_cap_cuts(records) == {"paragraph": WordCapCuts(cap=100, hints=2, cut=1),
                                      "sentence": WordCapCuts(cap=50, hints=1, cut=0)}


def test_talk_accuracy_reads_finished_episodes_of_records() -> None:
    def done(protocol: str) -> EpisodeRecord:
        return EpisodeRecord(run_id="r", episode_id=f"{protocol}-e", instance_id="i", model="m",
                             protocol=protocol, run=0, seed=0, status="done", turns=1, stop_reason="all_pass")

    records: list[Record] = [_turn("paragraph", 0, None),
                             _turn("paragraph", 1, HintRecord(level=0, text="x", words_cut=5), passed=1),
                             done("paragraph"), _turn("sentence", 0, None)]  # sentence unfinished
    acc = talk_accuracy(records)
    assert acc is not None and list(acc.protocols) == ["paragraph"]
    assert acc.static["m"].mean == 0.0 and acc.protocols["paragraph"].interactive["m"].mean == 1.0
    assert acc.word_caps["paragraph"].cut == 1
    assert talk_accuracy(records[:1]) is None


def test_static_leaves_out_episodes_that_start_from_the_given_program() -> None:
    # FeedbackEval's protocols evaluate the erroneous program itself at turn 0: that is
    # no Static attempt. Model A: an unhinted episode p = (1/2, 1) and a given-start one
    # p = (0, 1); Static(A) = 1/2 over the unhinted one only (mutation: pooling gives 1/4).
    # Model B runs only the given-start protocol: no Static value, no rank change.
    def traj(model: str, protocol: str, given: bool, *passed: str) -> Trajectory:
        return Trajectory(instance_id="i", model=model, protocol=protocol, test_ids=["a", "b"],
                          given_start=given,
                          turns=[TurnOutcome(turn=t, passed=frozenset(p)) for t, p in enumerate(passed)])

    acc = static_vs_interactive([traj("A", "pair", False, "a", "ab"), traj("A", "simple", True, "", "ab"),
                                 traj("B", "simple", True, "a", "a")])
    assert acc.static["A"].mean == pytest.approx(1 / 2) and acc.static["A"].n == 1
    assert "B" not in acc.static
    assert acc.static_all is not None and acc.static_all.n == 1
    # simple: interactive A = 1, B = 1/2, but only A has a Static value: no comparison
    assert acc.protocols["simple"].interactive["B"].mean == pytest.approx(1 / 2)
    assert acc.protocols["simple"].footrule is None and acc.protocols["simple"].tau is None
    only_given = static_vs_interactive([traj("B", "simple", True, "a", "a")])
    assert only_given.static == {} and only_given.static_all is None
