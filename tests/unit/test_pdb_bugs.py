"""Hand-worked tests of PDB's bug-level recall and fix-verified edit-level precision.

The code: report/bugs.py (one final program) and report/precision.py (per model, from
records). The definitions, quoted from seed 003 and read as docs/PRECISION.md states:

* candidate bugs = hunks of the buggy -> reference line diff; a candidate is a bug when the
  reference with that hunk alone put back fails the tests (k = the bugs);
* the model's edits = hunks of the buggy -> final diff; an edit is mapped to a bug when it
  lies within ε lines of it; bug i is fixed when an edit is mapped to it and its
  pseudo-fixed program (the model's edits mapped to i + the reference's other hunks that
  do not clash with them) passes every test;
* recall = fixed / k; precision = Σ over groups of (edits, bugs) joined by the mapping of
  min(edited lines, Σ over the group's fixed bugs of (bug's lines + ε)) / edited lines.

Every verdict here comes from running the program on a small suite (``runs``), so "fixed"
is checked by execution, never by proximity. Each expected number is worked out in a
comment. "mutation:" names the altered rule a test is there to catch.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec
import pytest

from pairbench_async.core.types import Instance, Test
from pairbench_async.report.bugs import (
    BugScore,
    apply_hunks,
    bug_programs,
    canonical,
    hunks,
    score_bugs,
)
from pairbench_async.report.precision import (
    pdb_programs,
    precision_by_model,
    verdict_key,
)
from pairbench_async.runlog.records import EpisodeRecord, Record, TurnRecord

# Three single-line bugs, on lines 3, 6 and 9 (three lines apart, so that with ε = 1 an edit
# maps to at most one of them), as PDB combines atomic bugs with a minimum stride.
BUGGY = '''def stats(xs):
    """Sum and mean of xs."""
    total = 1
    for x in xs:
        total += x
    count = len(xs) + 1
    if count == 0:
        return 0, 0.0
    mean = total // count
    result = (total, mean)
    return result
'''
REFERENCE = BUGGY.replace("total = 1", "total = 0").replace("len(xs) + 1", "len(xs)").replace(
    "total // count", "total / count")
# the hidden tests: each bug alone fails one (total=1: 7 != 6; count+1: mean 1.5 != 2.0;
# //: 3 // 2 = 1 != 1.5)
CASES = (([1, 2, 3], (6, 2.0)), ([4], (4, 4.0)), ([1, 2], (3, 1.5)))


def runs(program: str) -> bool:
    """Does ``program`` pass every case? (Executed, as the sandbox would.)"""
    space: dict[str, object] = {}
    try:
        exec(compile(program, "<program>", "exec"), space)  # noqa: S102 - test programs of this file
        stats = space["stats"]
        assert callable(stats)
        return all(stats(list(xs)) == want for xs, want in CASES)
    except Exception:  # noqa: BLE001 - any failure is a failed test
        return False


Verdict = Callable[[str], bool | None]


def counted(verdict: Verdict) -> tuple[Verdict, list[str]]:
    """``verdict`` that also records every program it is asked about."""
    asked: list[str] = []

    def wrapped(program: str) -> bool | None:
        asked.append(program)
        return verdict(program)

    return wrapped, asked


def test_the_example_is_what_it_claims() -> None:
    assert runs(REFERENCE) and not runs(BUGGY)
    spans = [(h.first, h.last, h.size) for h in hunks(BUGGY, REFERENCE)]
    assert spans == [(3, 3, 1), (6, 6, 1), (9, 9, 1)]


# --------------------------------------------------------------------------- one final program


def test_two_of_three_bugs_fixed_one_differently_plus_an_unrelated_edit() -> None:
    # line 3 fixed as the reference; line 6 fixed otherwise; line 9 left; line 11 edited
    # (unrelated, harmless).
    final = (BUGGY.replace("total = 1", "total = 0")
             .replace("len(xs) + 1", "sum(1 for _ in xs)")
             .replace("return result", "return tuple(result)"))
    # edits: {3}, {6}, {11}, one line each -> |Ê| = 3. With ε = 1: {3} -> bug 1 (distance 0),
    # {6} -> bug 2, {11} is 2 lines from bug 3 (line 9) -> mapped to nothing.
    # bug 1: pseudo = buggy + model's line 3 + reference lines 6, 9 = the reference: passes.
    # bug 2: pseudo = buggy + model's line 6 + reference lines 3, 9: runs, passes.
    # bug 3: nothing mapped: not fixed.
    # recall = 2/3. precision: {3}+bug 1 -> min(1, 1 + 1) = 1; {6}+bug 2 -> 1; {11} -> 0:
    # 2/3. mutation: crediting every edit near nothing (precision 1), or counting bug 3 as
    # fixed because the final program "covers" it (it does not) would change these.
    score = score_bugs(BUGGY, REFERENCE, final, runs)
    assert score == BugScore(candidates=3, bugs=3, fixed=2, recall=pytest.approx(2 / 3), edited=3,
                             credited=2, precision=pytest.approx(2 / 3))
    assert not runs(final)  # the final program itself fails (bug 3): recall gives partial credit


def test_a_fix_near_the_bug_that_does_not_run_is_not_fixed() -> None:
    # line 6 edited but wrongly (len(xs) + 2): mapped to bug 2 (same line), its pseudo-fixed
    # program fails. Line 3 fixed exactly. recall = 1/3; precision = 1 credited / 2 edited.
    # mutation: "fixed" by proximity alone would give recall 2/3 and precision 1.
    final = BUGGY.replace("total = 1", "total = 0").replace("len(xs) + 1", "len(xs) + 2")
    score = score_bugs(BUGGY, REFERENCE, final, runs)
    assert score is not None
    assert (score.fixed, score.recall, score.credited, score.edited, score.precision) == (
        1, pytest.approx(1 / 3), 1, 2, pytest.approx(1 / 2))


def test_no_edits_fix_nothing_and_precision_is_undefined() -> None:
    # final = buggy: no edit maps to any bug -> 0 of 3 fixed; |Ê| = 0 -> precision None.
    # The reverts are asked (is each hunk a bug?), no pseudo-fixed program is.
    verdict, asked = counted(runs)
    score = score_bugs(BUGGY, REFERENCE, BUGGY, verdict)
    assert score == BugScore(candidates=3, bugs=3, fixed=0, recall=0.0, edited=0, credited=0,
                             precision=None)
    reverts = [apply_hunks(BUGGY, [h for j, h in enumerate(hunks(BUGGY, REFERENCE)) if j != i])
               for i in range(3)]
    assert asked == reverts


def test_a_regenerated_program_fixes_every_bug_at_a_low_precision() -> None:
    # No line in common with the buggy program: one hunk, buggy lines 1..11 (11 non-blank)
    # -> 8 lines, size max(11, 8) = 11, within ε of all three bugs. Every pseudo-fixed
    # program is the final program (the hunk clashes with each reference fix), which
    # passes: recall 3/3. One group, three fixed bugs: credit min(11, 3 * (1 + 1)) = 6;
    # precision = 6/11. mutation: crediting a fixing hunk whole would give precision 1.
    final = '''def stats(values):
    s = 0
    for v in values:
        s += v
    n = len(values)
    if n == 0:
        return (0, 0.0)
    return s, s / n
'''
    assert runs(final)
    assert [(h.first, h.last, h.size) for h in hunks(BUGGY, final)] == [(1, 11, 11)]
    score = score_bugs(BUGGY, REFERENCE, final, runs)
    assert score == BugScore(candidates=3, bugs=3, fixed=3, recall=1.0, edited=11, credited=6,
                             precision=pytest.approx(6 / 11))
    # ε = 0 caps the credit at the bugs' own lines: min(11, 3 * 1) = 3 -> 3/11
    assert score_bugs(BUGGY, REFERENCE, final, runs, tolerance=0).precision == pytest.approx(3 / 11)


def test_the_reference_itself_scores_one_and_is_run_not_assumed() -> None:
    # final = reference: every pseudo-fixed program is the reference; it is run like any
    # other program (3 reverts, then the reference for each of the 3 bugs).
    verdict, asked = counted(runs)
    score = score_bugs(BUGGY, REFERENCE, REFERENCE, verdict)
    assert score is not None and (score.recall, score.precision) == (1.0, 1.0)
    assert [canonical(p) == canonical(REFERENCE) for p in asked] == [False] * 3 + [True] * 3
    # a reference that fails its own tests fixes nothing, however exactly it is copied
    # mutation: assuming the reference passes would give recall 1 here.
    score = score_bugs(BUGGY, REFERENCE, REFERENCE,
                       lambda p: False if canonical(p) == canonical(REFERENCE) else runs(p))
    assert score is not None and (score.fixed, score.recall, score.precision) == (0, 0.0, 0.0)


def test_a_reference_hunk_the_tests_do_not_need_is_no_bug() -> None:
    # The reference also rewrites line 11 (return result -> return (total, mean)), a change
    # no test sees: its revert passes, so it is a candidate but not a bug (k = 3 of 4).
    # The model fixes the three bugs as the reference and leaves line 11: its edits {3},
    # {6}, {9} are each credited 1 -> recall 3/3, precision 3/3.
    # mutation: counting every hunk as a bug would give recall 3/4.
    reference = REFERENCE.replace("return result", "return (total, mean)")
    final = REFERENCE
    score = score_bugs(BUGGY, reference, final, runs)
    assert score == BugScore(candidates=4, bugs=3, fixed=3, recall=1.0, edited=3, credited=3,
                             precision=1.0)
    # editing only that cosmetic line fixes nothing and earns nothing: recall 0, precision 0
    cosmetic = BUGGY.replace("return result", "return (total, mean)")
    score = score_bugs(BUGGY, reference, cosmetic, runs)
    assert score is not None and (score.recall, score.precision) == (0.0, 0.0)


def test_a_wordy_fix_is_credited_up_to_the_bugs_lines_plus_epsilon() -> None:
    # bug 1 fixed with three lines in place of line 3 (total = 0; a comment; a no-op):
    # one hunk of size max(1, 3) = 3 mapped to bug 1, pseudo-fixed program passes. Bugs 2
    # and 3 fixed as the reference. Credits: min(3, 1 + 1) = 2, 1, 1 -> 4 of 5 edited lines.
    final = REFERENCE.replace("    total = 0\n", "    total = 0\n    # start from zero\n    pass\n")
    score = score_bugs(BUGGY, REFERENCE, final, runs)
    assert score is not None
    assert (score.fixed, score.edited, score.credited) == (3, 5, 4)
    assert score.precision == pytest.approx(4 / 5)


def test_no_bugs_leave_recall_undefined() -> None:
    # reference = buggy: no candidate, recall None; an edit earns nothing (precision 0);
    # no edit either: both None.
    edited = BUGGY.replace("return result", "return tuple(result)")
    assert score_bugs(BUGGY, BUGGY, edited, runs) == BugScore(
        candidates=0, bugs=0, fixed=0, recall=None, edited=1, credited=0, precision=0.0)
    assert score_bugs(BUGGY, BUGGY, BUGGY, runs) == BugScore(
        candidates=0, bugs=0, fixed=0, recall=None, edited=0, credited=0, precision=None)


def test_an_unknown_verdict_leaves_the_score_unknown() -> None:
    final = BUGGY.replace("len(xs) + 1", "sum(1 for _ in xs)")
    assert score_bugs(BUGGY, REFERENCE, final, lambda program: None) is None
    # bug_programs lists exactly what score_bugs asks (3 reverts + bug 2's pseudo-fix)
    verdict, asked = counted(runs)
    assert score_bugs(BUGGY, REFERENCE, final, verdict) is not None
    assert bug_programs(BUGGY, REFERENCE, final) == asked and len(asked) == 4


def test_apply_hunks_keeps_blank_lines_outside_the_hunks_and_refuses_clashes() -> None:
    base = "a = 1\n\nb = 2\nc = 3\n"
    new = "a = 1\n\nb = 20\nc = 3\nd = 4\n"
    got = hunks(base, new)
    # b's line replaced (base line 3), d inserted after the last line (point 5)
    assert [(h.start, h.end, h.first, h.last, h.lines) for h in got] == [
        (1, 2, 3, 3, ("b = 20",)), (3, 3, 5, 5, ("d = 4",))]
    assert apply_hunks(base, got) == new
    assert apply_hunks(base, got[:1]) == "a = 1\n\nb = 20\nc = 3\n"
    with pytest.raises(ValueError, match="conflict"):
        apply_hunks(base, [got[0], *hunks(base, "a = 1\nb = 21\nc = 3\n")])


# ------------------------------------------------------------------ per model, from records


def instance(iid: str) -> Instance:
    return Instance(id=iid, problem="p", buggy=BUGGY, reference=REFERENCE,
                    tests=[Test(id="t1", input="", output="")], kind="call", entry_point="stats",
                    time_limit=1.0, memory_limit_mb=64)


def turn(episode: str, t: int, program: str, iid: str = "i1", model: str = "m",
         passed: bool | None = None) -> TurnRecord:
    """A turn record; ``passed`` None: not evaluated (no test results)."""
    return TurnRecord(run_id="r", episode_id=episode, instance_id=iid, model=model, protocol="pair",
                      run=0, seed=0, turn=t, program=program,
                      passed=["t1"] if passed else [], failed=["t1"] if passed is False else [],
                      pass_rate=1.0 if passed else 0.0)


def end(episode: str, status: str = "done", iid: str = "i1", model: str = "m") -> EpisodeRecord:
    return msgspec.convert({"run_id": "r", "episode_id": episode, "instance_id": iid,
                            "model": model, "protocol": "pair", "run": 0, "seed": 0,
                            "status": status, "turns": 1}, EpisodeRecord)


TWO_FIXED = (BUGGY.replace("total = 1", "total = 0").replace("len(xs) + 1", "sum(1 for _ in xs)")
             .replace("return result", "return tuple(result)"))


def records() -> list[Record]:
    return [
        # A: final = TWO_FIXED -> recall 2/3, precision 2/3 (worked out above); the earlier
        # turn's program does not count (the final program is scored, not turns)
        turn("A", 0, REFERENCE, passed=True), turn("A", 1, TWO_FIXED, passed=False), end("A"),
        # B: final = buggy -> recall 0, precision None (no edit)
        turn("B", 0, BUGGY, passed=False), end("B"),
        # C errored: counts nowhere
        turn("C", 0, REFERENCE, passed=True), end("C", "error"),
    ]


def test_per_model_means_over_final_programs_with_verdicts_run_by_the_caller() -> None:
    instances = {"i1": instance("i1")}
    needed = pdb_programs(records(), instances)
    # A needs 3 reverts + bug 1's pseudo-fix (the reference, recorded as passing at A turn 0)
    # + bug 2's; B the same reverts; the buggy program (B turn 0) is none of them: 4 to run.
    assert len(needed) == 4 and all(inst.id == "i1" for inst, _ in needed)
    verdicts = {verdict_key(inst.id, program): runs(program) for inst, program in needed}
    summary = precision_by_model(records(), instances, bug_verdicts=verdicts)["m"]
    # recall: mean(2/3, 0) = 1/3; precision: mean over defined (A's 2/3; B's None left out)
    # = 2/3; bugs 3 + 3 = 6, fixed 2 + 0. mutation: averaging over turns, or counting B's
    # undefined precision as 0 (-> 1/3), would change these.
    assert summary.pdb_recall == pytest.approx(1 / 3)
    assert summary.pdb_precision == pytest.approx(2 / 3)
    assert (summary.pdb_episodes, summary.pdb_bugs, summary.pdb_fixed,
            summary.pdb_unverified) == (2, 6, 2, 0)


def test_without_the_callers_verdicts_an_episode_is_unverified_not_guessed() -> None:
    # No verdicts supplied and none recorded for the reverts: both episodes unverified,
    # both measures None (not 0). mutation: a missing verdict read as "fails" would give
    # recall 0.
    summary = precision_by_model(records(), {"i1": instance("i1")})["m"]
    assert (summary.pdb_recall, summary.pdb_precision) == (None, None)
    assert (summary.pdb_episodes, summary.pdb_unverified) == (0, 2)


def test_recorded_verdicts_are_used_and_nothing_recorded_is_asked_again() -> None:
    # Record the three reverts and bug 2's pseudo-fix as turn programs of another episode
    # (as if some model had written them): pdb_programs then needs nothing more, and
    # the summary equals the one with the caller's verdicts.
    instances = {"i1": instance("i1")}
    needed = pdb_programs(records(), instances)
    extra: list[Record] = [turn("D", t, program, passed=runs(program))
                           for t, (_, program) in enumerate(needed)]
    extra.append(end("D", "error"))  # an errored episode's evaluated programs still count
    assert pdb_programs([*records(), *extra], instances) == []
    summary = precision_by_model([*records(), *extra], instances)["m"]
    assert (summary.pdb_recall, summary.pdb_precision, summary.pdb_unverified) == (
        pytest.approx(1 / 3), pytest.approx(2 / 3), 0)
