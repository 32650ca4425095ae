"""The labelled hint set: its format, the precision/recall arithmetic (worked by hand), and
the rules' precision and recall on the committed sets (CI floors: measured level minus a
margin; the numbers themselves are computed here from the files)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pairbench_async.core.errors import ConfigError
from pairbench_async.protocol.hint_labels import (
    LabelledHint,
    judge_prediction,
    parse_labelled_set,
    rule_prediction,
    score,
    validator_prediction,
)
from pairbench_async.protocol.hints import HINT_LEVELS
from pairbench_async.protocol.leakage import JudgeVerdict
from pairbench_async.protocol.leakage_model import leakage_model

DATA = Path(__file__).resolve().parents[1] / "data"
MAIN = DATA / "labelled_hints.jsonl"
HOLDOUT = DATA / "labelled_hints_holdout.jsonl"
#: the reviewer's 64 hints (issue 14 attack) and a second holdout written before the rules were revised
ATTACK = DATA / "labelled_hints_attack.jsonl"
HOLDOUT2 = DATA / "labelled_hints_holdout2.jsonl"


def _load(path: Path):  # type: ignore[no-untyped-def]
    return parse_labelled_set(path.read_bytes().splitlines(), str(path))


def _hint(hid: str, level: int, broken: list[str]) -> LabelledHint:
    return LabelledHint(id=hid, task="t", level=level, text=hid, broken=broken)  # type: ignore[arg-type]


def test_precision_and_recall_worked_by_hand() -> None:
    hints = [_hint("a", 1, ["input_pattern"]), _hint("b", 1, []), _hint("c", 3, ["location", "direction"]),
             _hint("d", 5, ["direction"])]
    predicted = {"a": frozenset({"input_pattern"}), "b": frozenset({"state"}), "c": frozenset({"location"}),
                 "d": frozenset()}
    got = {s.name: s for s in score(hints, predicted)}
    # input_pattern: a labelled and predicted -> TP 1, FP 0, FN 0: precision 1/1, recall 1/1
    assert (got["input_pattern"].tp, got["input_pattern"].fp, got["input_pattern"].fn) == (1, 0, 0)
    assert got["input_pattern"].precision == 1.0 and got["input_pattern"].recall == 1.0
    # state: only b predicted, no label -> TP 0, FP 1: precision 0/1 = 0; recall 0/0: undefined
    assert got["state"].precision == 0.0 and got["state"].recall is None
    # direction: labelled on c and d, predicted on neither -> FN 2: precision 0/0 undefined, recall 0/2
    assert got["direction"].positives == 2 and got["direction"].precision is None
    assert got["direction"].recall == 0.0
    # overall (rejected or not): labels a, c, d; predictions a, b, c -> TP 2 (a, c), FP 1 (b),
    # FN 1 (d): precision 2/3, recall 2/3
    assert (got["overall"].tp, got["overall"].fp, got["overall"].fn) == (2, 1, 1)
    assert got["overall"].precision == pytest.approx(2 / 3) and got["overall"].recall == pytest.approx(2 / 3)


def test_a_judge_prediction_is_its_rejection_only() -> None:
    assert judge_prediction(None) == frozenset()
    assert judge_prediction(JudgeVerdict(verdict="accept", boundary="location")) == frozenset()
    assert judge_prediction(JudgeVerdict(verdict="malformed")) == frozenset()
    assert judge_prediction(JudgeVerdict(verdict="reject", boundary="state")) == {"state"}
    assert judge_prediction(JudgeVerdict(verdict="reject")) == {"other"}


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([{"kind": "hint", "id": "h", "task": "t", "level": 1, "text": "x"}], "unknown task"),
        ([{"kind": "task", "id": "t", "problem": "p", "program": "q"},
          {"kind": "hint", "id": "h", "task": "t", "level": 4, "text": "x", "broken": ["location"]}],
         "L4: that level may reveal it"),
        ([{"kind": "task", "id": "t", "problem": "p", "program": "q"},
          {"kind": "hint", "id": "h", "task": "t", "level": 7, "text": "x"}], "level 7"),
        ([{"kind": "task", "id": "t", "problem": "p", "program": "q"},
          {"kind": "hint", "id": "h", "task": "t", "level": 2, "text": "x", "broken": ["vibes"]}], "vibes"),
        ([{"kind": "task", "id": "t", "problem": "p", "program": "q"},
          {"kind": "hint", "id": "h", "task": "t", "level": 2, "text": "x"},
          {"kind": "hint", "id": "h", "task": "t", "level": 3, "text": "y"}], "used twice"),
    ],
)
def test_a_malformed_set_is_refused_with_its_line(rows: list[dict[str, object]], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_labelled_set([json.dumps(r) for r in rows], "set")


def test_the_committed_sets_are_as_the_issue_asks() -> None:
    labelled = _load(MAIN)
    per_level = {lv: [h for h in labelled.hints if h.level == lv] for lv in range(1, 7)}
    assert len(labelled.hints) >= 90 and all(len(hs) >= 15 for hs in per_level.values())
    breaking = sum(1 for h in labelled.hints if h.broken)
    assert 0.4 <= breaking / len(labelled.hints) <= 0.6
    # every boundary a level reserves is represented, and every bug kind differs
    assert {b for h in labelled.hints for b in h.broken} == {"input_pattern", "state", "location", "concept",
                                                              "direction", "code"}
    assert len({t.bug for t in labelled.tasks.values()}) == len(labelled.tasks) >= 10
    # the paper's six Table II examples, each at its own level, labelled clean, and accepted
    for lv in HINT_LEVELS:
        found = [h for h in per_level[lv.number] if h.text == lv.example]
        assert len(found) == 1 and found[0].source == "table2" and found[0].broken == []
        assert rule_prediction(found[0], labelled.tasks[found[0].task]) == frozenset()
    assert len(_load(HOLDOUT).hints) == 60


#: (set, overall precision, overall recall, per-boundary floor): the levels measured when the
#: rules were written (main: 1.00 / 0.98; holdout 1.00 / 0.97, and 1.00 / 0.67 before the rules
#: were revised on what it showed) minus a margin of about one hint
FLOORS = [(MAIN, 0.95, 0.95, 0.75), (HOLDOUT, 0.95, 0.93, 0.6)]
#: attack (first measured 0.90 / 0.87) and holdout2 (first measured 1.00 / 0.64), both 1.00 / 1.00
#: after the rules were revised on the reviewer's classes: floor = measured minus one hint's worth
#: (1/30, 1/28 of the breaking hints); per boundary: attack's lowest is 0.50 (state precision, 2 of
#: 4), holdout2's is 0.00 (state recall: both state hints are read as concept), so no floor there
FLOORS += [(ATTACK, 1.0 - 1 / 30 - 0.005, 1.0 - 1 / 30 - 0.005, 0.5),
           (HOLDOUT2, 1.0 - 1 / 28 - 0.005, 1.0 - 1 / 28 - 0.005, 0.0)]


@pytest.mark.parametrize(("path", "precision", "recall", "floor"), FLOORS,
                         ids=["main", "holdout", "attack", "holdout2"])
def test_the_rules_precision_and_recall_on_the_labelled_sets(path: Path, precision: float, recall: float,
                                                              floor: float) -> None:
    labelled = _load(path)
    predicted = {h.id: rule_prediction(h, labelled.tasks[h.task]) for h in labelled.hints}
    got = {s.name: s for s in score(labelled.hints, predicted)}
    overall = got.pop("overall")
    assert overall.precision is not None and overall.precision >= precision, overall
    assert overall.recall is not None and overall.recall >= recall, overall
    for name, s in got.items():
        assert s.positives > 0, name
        assert s.recall is not None and s.recall >= floor, s
        assert s.precision is None or s.precision >= floor, s


#: issue 24's fresh sets, each written before the rule revision that first measured it (fresh6, fresh7
#: and fresh9 generated by the scripts beside them). First measured, overall P / R (the estimate for
#: unseen hints): fresh1 0.94 / 0.50 and fresh2 0.79 / 0.66 by the rules before issue 24; fresh2 0.83 / 0.71
#: by revision 1, fresh3 0.90 / 0.78 and fresh4 0.89 / 0.82 by revision 2, fresh5 0.88 / 0.78 by revision 3,
#: fresh6 0.88 / 0.79, fresh7 0.95 / 0.77 and fresh8 0.96 / 0.96 by revision 4, fresh9 0.93 / 0.77 by revision 5.
#: Round 3: fresh11 0.83 / 0.70 by revision 5, fresh12 0.86 / 0.72 by revision 6, fresh13 0.83 / 0.60 by
#: revision 7 (each written before the revision that first measured it). fresh14 (an outside reviewer's 72
#: hints over 6 new tasks): 0.92 / 0.71 by revision 7. Floors: the current rules' level (revision 8, fitted on
#: every set, fresh14 included) minus one hint's worth.
FRESH = {1: (1.0, 1.0, 34), 2: (34 / 35, 32 / 35, 35), 3: (1.0, 33 / 36, 36), 4: (1.0, 36 / 39, 39),
         5: (34 / 35, 34 / 36, 36), 6: (1.0, 46 / 48, 48), 7: (45 / 46, 45 / 48, 48), 8: (1.0, 1.0, 28),
         9: (1.0, 43 / 48, 48), 11: (26 / 27, 26 / 27, 27), 12: (1.0, 24 / 25, 25),
         13: (19 / 21, 19 / 25, 25), 14: (1.0, 1.0, 34)}
#: fresh10 (39 hints over 5 new tasks, written for the local-judge measurement and labelled before any
#: validator saw it): first measured by revision 5 (main f92990e) and by revision 7 (main deae6df),
#: neither fitted on it: 14 / 14 and 14 / 18 both times; revision 8 (fitted on it): 16 / 16 and 16 / 18.
FRESH[10] = (1.0, 16 / 18, 18)
#: Round 4, sets written blind by outside reviewers (helpers that saw no rule), each measured first by the
#: revision before it was seen: fresh15 by revisions 7 and 8 0.88 / 0.65 (revision 9 was then fitted on it:
#: 1.00 / 0.85); fresh16 0.93 / 0.74 and fresh17 0.83 / 0.69 by revision 8, 0.93 / 0.74 and 0.83 / 0.71 by
#: revision 9; fresh18 0.88 / 0.63 and fresh19 0.82 / 0.66 by revision 9 with the relative-clause fix to
#: location. Floors: those levels (no rule was revised on fresh16-fresh19), minus one hint's worth.
#: Revision 10 was designed on fresh14-fresh16 (fresh17-fresh19 held out, scored only in aggregate by
#: bench.validator_heldout): fresh15 1.00 / 0.88, fresh16 0.94 / 0.91 after it; the floors of those two raised.
FRESH.update({15: (1.0, 30 / 34, 34), 16: (32 / 34, 32 / 35, 35), 17: (25 / 30, 25 / 35, 35),
              18: (22 / 25, 22 / 35, 35), 19: (23 / 28, 23 / 35, 35)})
#: Round 5, four more sets written blind by helpers that saw no rule (stop 30), each measured first by a
#: revision that had not seen it: fresh20 0.90 / 0.82 and fresh21 0.87 / 0.75 by revisions 9 and 10 alike;
#: fresh22 0.91 / 0.89 and fresh23 0.76 / 0.69 by revision 10. Floors: those levels minus one hint's worth.
FRESH.update({20: (28 / 31, 28 / 34, 34), 21: (27 / 31, 27 / 36, 36), 22: (32 / 35, 32 / 36, 36),
              23: (25 / 33, 25 / 36, 36)})
#: Revision 11 was designed on fresh20-fresh21 (fresh22-fresh23 held out, scored only in aggregate by
#: bench.validator_heldout; pooled 0.84 / 0.79 before, 0.86 / 0.82 after): fresh16 0.97 / 0.91, fresh17
#: 0.86 / 0.71, fresh18 0.92 / 0.66, fresh19 0.83 / 0.69, fresh20 1.00 / 0.79 (one hint caught before only by
#: the code rule it did not break), fresh21 0.96 / 0.75, fresh22 0.91 / 0.89, fresh23 0.79 / 0.75 after it;
#: the floors raised where it rose (fresh20's recall floor kept where it was).
FRESH.update({16: (32 / 33, 32 / 35, 35), 17: (25 / 29, 25 / 35, 35), 18: (23 / 25, 23 / 35, 35),
              19: (24 / 29, 24 / 35, 35), 20: (1.0, 28 / 34, 34), 21: (27 / 28, 27 / 36, 36),
              23: (27 / 34, 27 / 36, 36)})
#: fresh24 and fresh25, two more blind sets: 0.84 / 0.72 and 0.87 / 0.75 by revision 10, 0.87 / 0.72 and
#: 0.87 / 0.75 by revision 11 (neither had seen them). Floors: revision 10's level minus one hint's worth.
FRESH.update({24: (26 / 31, 26 / 36, 36), 25: (27 / 31, 27 / 36, 36)})
#: Revision 12 was designed on fresh22-fresh25 (fresh20-fresh21 held out, scored only in aggregate by
#: bench.validator_heldout: pooled 0.98 / 0.77 before and after): fresh22 0.97 / 0.89, fresh23 1.00 / 0.75,
#: fresh24 1.00 / 0.72, fresh25 1.00 / 0.75 after it (fresh19 0.85 / 0.66: one hint labelled code for quoting
#: the candidate's own statement passes); the floors raised where it rose.
FRESH.update({22: (32 / 33, 32 / 36, 36), 23: (1.0, 27 / 36, 36), 24: (1.0, 26 / 36, 36),
              25: (1.0, 27 / 36, 36)})
#: fresh26-fresh29, four more blind sets (fresh28-29 in domains no earlier set has), committed after their
#: first measurement: revision 11 0.80 / 0.78, 0.90 / 0.78, 0.90 / 0.78, 0.79 / 0.75; revision 12 (which
#: had not seen them either) 0.84 / 0.75, 0.97 / 0.78, 0.93 / 0.78, 0.79 / 0.75. Floors: revision 12's
#: level minus one hint's worth.
FRESH.update({26: (27 / 32, 27 / 36, 36), 27: (28 / 29, 28 / 36, 36), 28: (28 / 30, 28 / 36, 36),
              29: (27 / 34, 27 / 36, 36)})
#: fresh31-fresh32, two more blind sets (stop 31; domains of their own), committed after their first
#: measurement: revision 12 0.86 / 0.89 and 0.76 / 0.71, revision 13 (which had not seen them either)
#: 0.86 / 0.89 and 0.83 / 0.71. Floors: revision 13's level minus one hint's worth.
FRESH.update({31: (31 / 36, 31 / 35, 35), 32: (25 / 30, 25 / 35, 35)})
#: Revision 14 was designed on fresh20-fresh25 and fresh31-fresh32 (fresh26-fresh28 held out: 0.91 / 0.77
#: before and after): fresh31 1.00 / 0.89 and fresh32 0.96 / 0.71 after it, the floors raised. fresh30, fresh33
#: and fresh34, three more blind sets its author never saw: revision 13 0.76 / 0.81, 0.74 / 0.71, 0.77 / 0.86;
#: revision 14 0.81 / 0.81, 0.76 / 0.71, 0.81 / 0.86. Floors: revision 14's level minus one hint's worth.
FRESH.update({31: (1.0, 31 / 35, 35), 32: (25 / 26, 25 / 35, 35), 30: (29 / 36, 29 / 36, 36),
              33: (25 / 33, 25 / 35, 35), 34: (30 / 37, 30 / 35, 35)})
#: Revision 15 was designed on fresh20-fresh25 and fresh30-fresh34 (fresh26-fresh28 held out: 0.91 / 0.77 before
#: and after) on the classes of revision 14's 22 first-seen false positives on fresh30, fresh33 and fresh34: after
#: it 0.97 / 0.81, 0.93 / 0.71 and 0.97 / 0.86 (recall unchanged); those precision floors raised.
FRESH.update({30: (29 / 30, 29 / 36, 36), 33: (25 / 27, 25 / 35, 35), 34: (30 / 31, 30 / 35, 35)})
#: fresh35-fresh36, two more blind sets (hints asked to read like a feedback model's: short, natural), committed
#: after their first measurement: revision 14 0.92 / 0.63 and 0.85 / 0.80; revision 15, whose author never saw
#: them, 0.92 / 0.63 and 0.88 / 0.80. Floors: revision 15's level minus one hint's worth.
FRESH.update({35: (22 / 24, 22 / 35, 35), 36: (28 / 32, 28 / 35, 35)})
#: fresh37-fresh38, two more blind sets (stop 32; fresh37 near a Table II boundary, fresh38 short and natural),
#: committed after their first measurement: revision 15, whose author never saw them, 0.84 / 0.79 and 0.80 / 0.67
#: (pooled 0.82 / 0.73). Floors: that level minus one hint's worth.
FRESH.update({37: (27 / 32, 27 / 34, 34), 38: (24 / 30, 24 / 36, 36)})
#: Revision 16 was designed on fresh20-fresh25 and fresh30-fresh38 (fresh26-fresh28 held out: 0.91 / 0.77 before and
#: after, every boundary's counts identical) on the classes of revision 15's 17 first-seen false positives on
#: fresh35-fresh38: after it 1.00 / 0.63, 1.00 / 0.80, 1.00 / 0.79 and 1.00 / 0.67 (recall unchanged); those
#: precision floors raised.
FRESH.update({35: (1.0, 22 / 35, 35), 36: (1.0, 28 / 35, 35), 37: (1.0, 27 / 34, 34), 38: (1.0, 24 / 36, 36)})

#: fresh39-fresh41, three more blind sets (stop 32: fresh39 short and natural, fresh40 near a boundary, fresh41
#: mixed), committed after their first measurement: revision 15 0.91 / 0.86, 0.88 / 0.60, 0.86 / 0.74 (pooled
#: 0.89 / 0.73); revision 16, whose author never saw them, 0.91 / 0.86, 0.91 / 0.60, 0.86 / 0.74 (pooled
#: 0.90 / 0.73). Floors: revision 16's level minus one hint's worth.
FRESH.update({39: (31 / 34, 31 / 36, 36), 40: (21 / 23, 21 / 35, 35), 41: (25 / 29, 25 / 34, 34)})
#: Revision 17 was designed on fresh20-fresh25 and fresh30-fresh41 (fresh26-fresh28 held out: 0.91 / 0.77 before and
#: after) on the classes of revision 16's 9 first-seen false positives on fresh39-fresh41: after it 0.97 / 0.86,
#: 1.00 / 0.60 and 0.96 / 0.74 (pooled 0.97 / 0.73, recall unchanged); those precision floors raised.
FRESH.update({39: (31 / 32, 31 / 36, 36), 40: (1.0, 21 / 35, 35), 41: (25 / 26, 25 / 34, 34)})
#: fresh42-fresh44, three more blind sets (stop 33: fresh42 short and natural, fresh43 near a boundary, fresh44
#: mixed), committed after their first measurement: revision 16 0.91 / 0.83, 0.96 / 0.69, 0.87 / 0.72 (pooled
#: 0.91 / 0.75, 79 TP, 8 FP, 27 FN); revision 17, whose author never saw them, exactly the same, hint by hint.
#: Floors: that level minus one hint's worth.
FRESH.update({42: (29 / 32, 29 / 35, 35), 43: (24 / 25, 24 / 35, 35), 44: (26 / 30, 26 / 36, 36)})
#: Revision 18 was designed on fresh20-fresh25 and fresh30-fresh44 (fresh26-fresh28 held out, pooled only) on the
#: classes of revision 17's 8 first-seen false positives on fresh42-fresh44: after it 1.00 / 0.83, 1.00 / 0.71 and
#: 1.00 / 0.72 (pooled 1.00 / 0.75, recall unchanged or up), fresh32 0.96 / 0.74; those floors raised.
FRESH.update({32: (26 / 27, 26 / 35, 35), 42: (1.0, 29 / 35, 35), 43: (1.0, 25 / 35, 35), 44: (1.0, 26 / 36, 36)})
#: fresh45-fresh47, three more blind sets (stop 33: fresh45 short and natural, fresh46 near a boundary, fresh47
#: mixed), committed after their first measurement: revision 17 0.90 / 0.72, 0.77 / 0.71, 0.86 / 0.74 (pooled
#: 0.84 / 0.72); revision 18, whose author never saw them, 0.93 / 0.72, 0.77 / 0.71, 0.89 / 0.74 (pooled 0.86 /
#: 0.72, 75 TP, 12 FP, 29 FN). Floors: revision 18's level minus one hint's worth.
FRESH.update({45: (26 / 28, 26 / 36, 36), 46: (24 / 31, 24 / 34, 34), 47: (25 / 28, 25 / 34, 34)})
#: fresh48-fresh53, six more blind sets (stop 34, styles imposed per set: chatty, terse, a mix with quoted failing
#: tests, a careful tutor's, a heading word per hint, long LLM-like), committed after their first measurement:
#: revision 18 0.81 / 0.74, 0.80 / 0.69, 0.82 / 0.78 (fresh48-50, pooled 0.81 / 0.73) and 0.83 / 0.59, 0.83 / 0.74,
#: 0.67 / 0.63 (fresh51-53, pooled 0.77 / 0.66); revision 19 (the code span below L3 read as data unless it is
#: Python over names) first on fresh48-50 as 0.82 / 0.73 pooled, then, after its bare-annotation case (`price:
#: int`) was added looking at fresh49, first on fresh51-53, whose author never saw them: 0.83 / 0.59, 0.85 / 0.74,
#: 0.67 / 0.63 (pooled 0.78 / 0.66). Floors: revision 19's level minus one hint's worth.
FRESH.update({48: (25 / 31, 25 / 34, 34), 49: (24 / 28, 24 / 35, 35), 50: (28 / 34, 28 / 36, 36),
              51: (20 / 24, 20 / 34, 34), 52: (29 / 34, 29 / 39, 39), 53: (22 / 33, 22 / 35, 35)})
#: fresh54-fresh59, six more blind sets (stop 34, after the learned reading's procedure was fixed), committed after
#: their first measurement: the rules alone 0.82 / 0.77, 0.84 / 0.64, 0.93 / 0.77, 0.85 / 0.83, 0.76 / 0.83,
#: 0.79 / 0.79 (pooled 0.83 / 0.77). Floors: that level minus one hint's worth.
FRESH.update({54: (27 / 33, 27 / 35, 35), 55: (21 / 25, 21 / 33, 33), 56: (27 / 29, 27 / 35, 35),
              57: (29 / 34, 29 / 35, 35), 58: (29 / 38, 29 / 35, 35), 59: (27 / 34, 27 / 34, 34)})
#: fresh60-fresh71, twelve more blind sets (stop 34), committed after their first measurement: the rules alone
#: 0.78 / 0.74, 0.87 / 0.76, 0.79 / 0.79, 0.88 / 0.83, 0.63 / 0.76, 0.92 / 0.94 (fresh60-65, pooled 0.81 / 0.81) and
#: 0.83 / 0.69, 0.97 / 0.83, 0.63 / 0.83, 0.96 / 0.75, 0.74 / 0.79, 0.81 / 0.83 (fresh66-71, pooled 0.80 / 0.79).
#: Floors: that level minus one hint's worth.
FRESH.update({60: (25 / 32, 25 / 34, 34), 61: (26 / 30, 26 / 34, 34), 62: (27 / 34, 27 / 34, 34),
              63: (29 / 33, 29 / 35, 35), 64: (26 / 41, 26 / 34, 34), 65: (34 / 37, 34 / 36, 36),
              66: (25 / 30, 25 / 36, 36), 67: (29 / 30, 29 / 35, 35), 68: (29 / 46, 29 / 35, 35),
              69: (27 / 28, 27 / 36, 36), 70: (26 / 35, 26 / 33, 33), 71: (29 / 36, 29 / 35, 35)})
#: fresh72-fresh77, six more blind sets (stop 34: markdown lists and headings, terse symptoms, padded
#: encouragement), committed after their first measurement: the rules alone 0.81 / 0.83, 0.90 / 0.72, 0.85 / 0.78,
#: 0.93 / 0.77, 0.83 / 0.71, 0.87 / 0.57 (pooled 0.86 / 0.73). Floors: that level minus one hint's worth.
FRESH.update({72: (30 / 37, 30 / 36, 36), 73: (26 / 29, 26 / 36, 36), 74: (28 / 33, 28 / 36, 36),
              75: (27 / 29, 27 / 35, 35), 76: (25 / 30, 25 / 35, 35), 77: (20 / 23, 20 / 35, 35)})
#: The validator's default (the learned reading with the rules' exact checks) on sets its model never trained on
#: (its provenance lists the sets it did). Four models were each measured first on six new sets: the first
#: (trained on 57 sets) on fresh54-59, 0.94 / 0.88; the second (63) on fresh60-65, 0.87 / 0.87; the third (69) on
#: fresh66-71, 0.93 / 0.91; the packaged fourth (75 sets; the hint normalised, too little known text left to the
#: rules, nested levels) on fresh72-77: 0.95 / 0.97, 0.91 / 0.81, 0.97 / 0.86, 0.93 / 0.80, 0.91 / 0.86, 0.94 /
#: 0.86, pooled 0.93 / 0.86 (183 TP, 13 FP, 30 FN). Floors: the packaged model's level on fresh72-77 minus one
#: hint's worth.
LEARNED = {72: (35 / 37, 35 / 36, 36), 73: (29 / 32, 29 / 36, 36), 74: (31 / 32, 31 / 36, 36),
           75: (28 / 30, 28 / 35, 35), 76: (30 / 33, 30 / 35, 35), 77: (30 / 32, 30 / 35, 35)}
#: fresh78-fresh83, six more blind sets written after the packaged model was fixed (bug reports, Socratic questions,
#: non-native English, very long, review comments, a mix), measured first: the packaged model 0.97 / 0.91, 0.89 /
#: 0.94, 0.94 / 0.85, 0.94 / 0.85, 0.97 / 0.92, 0.93 / 0.80 (pooled 0.94 / 0.88, 184 TP, 12 FP, 25 FN); the rules
#: alone 0.85 / 0.94, 0.94 / 0.85, 0.93 / 0.74, 0.86 / 0.91, 0.87 / 0.70, 0.81 / 0.86 (pooled 0.87 / 0.83).
#: Floors: those levels minus one hint's worth.
LEARNED.update({78: (32 / 33, 32 / 35, 35), 79: (32 / 36, 32 / 34, 34), 80: (29 / 31, 29 / 34, 34),
                81: (29 / 31, 29 / 34, 34), 82: (34 / 35, 34 / 37, 37), 83: (28 / 30, 28 / 35, 35)})
FRESH.update({78: (33 / 39, 33 / 35, 35), 79: (29 / 31, 29 / 34, 34), 80: (25 / 27, 25 / 34, 34),
              81: (31 / 36, 31 / 34, 34), 82: (26 / 30, 26 / 37, 37), 83: (30 / 37, 30 / 35, 35)})


@pytest.mark.parametrize("number", sorted(LEARNED), ids=[f"fresh{n}" for n in sorted(LEARNED)])
def test_the_validator_on_sets_its_model_never_trained_on(number: int) -> None:
    precision, recall, positives = LEARNED[number]
    name = f"labelled_hints_fresh{number}.jsonl"
    # a model retrained on these sets must be measured on new blind ones: these floors would be fitted figures
    assert name not in leakage_model().provenance["sets"]  # type: ignore[operator]
    labelled = _load(DATA / name)
    predicted = {h.id: validator_prediction(h, labelled.tasks[h.task]) for h in labelled.hints}
    overall = {s.name: s for s in score(labelled.hints, predicted)}["overall"]
    assert overall.positives == positives
    assert overall.precision is not None and overall.precision >= precision - 1 / positives - 0.005, overall
    assert overall.recall is not None and overall.recall >= recall - 1 / positives - 0.005, overall

@pytest.mark.parametrize("number", sorted(FRESH), ids=[f"fresh{n}" for n in sorted(FRESH)])
def test_the_rules_on_the_fresh_sets(number: int) -> None:
    precision, recall, positives = FRESH[number]
    labelled = _load(DATA / f"labelled_hints_fresh{number}.jsonl")
    predicted = {h.id: rule_prediction(h, labelled.tasks[h.task]) for h in labelled.hints}
    overall = {s.name: s for s in score(labelled.hints, predicted)}["overall"]
    assert overall.positives == positives
    assert overall.precision is not None and overall.precision >= precision - 1 / positives - 0.005, overall
    assert overall.recall is not None and overall.recall >= recall - 1 / positives - 0.005, overall


@pytest.mark.parametrize("number", [6, 7, 9])
def test_the_generated_fresh_sets_are_their_scripts_output(number: int, tmp_path: Path) -> None:
    # the generator writes next to itself: run a copy in a temporary folder and compare
    script = DATA / f"labelled_hints_fresh{number}.py"
    copy = tmp_path / script.name
    copy.write_text(script.read_text())
    import runpy
    runpy.run_path(str(copy))
    assert copy.with_suffix(".jsonl").read_bytes() == script.with_suffix(".jsonl").read_bytes()
