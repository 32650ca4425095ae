"""Hand-worked and property tests of the repair-precision metrics.

The code: report/edits.py, report/verdicts.py, report/precision.py.

Every expected number is worked out in a comment from the definition in
docs/PRECISION.md, with the line sets or token lists written out, so that changing a
definition (another tolerance rule, smoothing p_1, pooling turns instead of averaging
per episode, counting turn 0, ...) breaks a test. "mutation:" names the altered rule a
test is there to catch.
"""

from __future__ import annotations

import math

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pairbench_async.core.errors import ConfigError
from pairbench_async.core.types import Instance, Test
from pairbench_async.report.edits import (
    EditSet,
    changed_lines,
    edit_precision,
    edit_recall,
    regenerated,
)
from pairbench_async.report.precision import (
    PrecisionSummary,
    TurnPrecision,
    bleu,
    code_tokens,
    corpus_bleu,
    exact_match,
    precision_by_model,
    turn_precision,
)
from pairbench_async.report.verdicts import VERDICT_KEYS, compiles, verdict_mix
from pairbench_async.runlog.records import EpisodeRecord, Record, TurnRecord

# The buggy program of most cases: six lines, numbered as written.
BUGGY = "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\nf = 6\n"
# The reference changes line 3 only: R = {3}.
REFERENCE = "a = 1\nb = 2\nc = 30\nd = 4\ne = 5\nf = 6\n"


def edit(**lines: str) -> str:
    """BUGGY with the named lines (a..f) replaced: edit(c="c = 30") changes line 3."""
    return "".join(f"{lines.get(name, f'{name} = {i}')}\n" for i, name in enumerate("abcdef", 1))


# --------------------------------------------------------------------------- changed_lines


def test_changed_lines_replacement_and_deletion() -> None:
    # replace line 3, delete line 5: changed {3, 5}, nothing inserted
    new = "a = 1\nb = 2\nc = 30\nd = 4\nf = 6\n"
    assert changed_lines(BUGGY, new) == EditSet(
        changed=frozenset({3, 5}), inserted=frozenset(), lines=6
    )


def test_insertion_points_name_the_line_they_precede() -> None:
    # "x" between lines 3 and 4 -> point 4; "y" after the last line -> point 7
    new = "a = 1\nb = 2\nc = 3\nx\nd = 4\ne = 5\nf = 6\ny\n"
    result = changed_lines(BUGGY, new)
    assert result.changed == frozenset()
    assert result.inserted == frozenset({4, 7})
    assert result.points == frozenset({4, 7})


def test_whitespace_normalisation_ignores_trailing_space_crlf_and_blank_runs() -> None:
    # trailing spaces/tabs, CRLF line ends, extra blank lines and a missing final newline
    new = "a = 1   \r\n\r\n\r\nb = 2\t\r\nc = 3\n\n\nd = 4\ne = 5\nf = 6"
    assert changed_lines(BUGGY, new).points == frozenset()


def test_blank_lines_keep_their_numbers_but_never_count() -> None:
    # base lines: 1 "x = 1", 2 "", 3 "", 4 "y = 2"; changing y is line 4, and the base has
    # two non-blank lines. Deleting the blank lines is no edit. mutation: numbering the
    # non-blank lines only (y would be line 2).
    base = "x = 1\n\n\ny = 2\n"
    result = changed_lines(base, "x = 1\ny = 3\n")
    assert result == EditSet(changed=frozenset({4}), inserted=frozenset(), lines=2)
    # an insertion at the end sits one past the last non-blank line, trailing blanks aside
    assert changed_lines(base + "\n\n", "x = 1\n\n\ny = 2\nz = 3\n").inserted == frozenset({5})


def test_reindenting_is_an_edit_but_trailing_whitespace_is_not() -> None:
    base = "if x:\n    y = 1\n"
    assert changed_lines(base, "if x:\n  y = 1\n").changed == frozenset({2})
    assert changed_lines(base, "if x:\n    y = 1    \n").changed == frozenset()


def test_edit_of_an_empty_base() -> None:
    result = changed_lines("", "x = 1\n")
    assert result == EditSet(changed=frozenset(), inserted=frozenset({1}), lines=0)
    assert result.changed_share is None


# --------------------------------------------------------------------------- precision / recall


def test_the_brief_example_precision_half_recall_one() -> None:
    # buggy lines 1..6; reference R = {3}; candidate C = {3, 5}
    # precision = |{3}| / |{3, 5}| = 1/2 (5 is 2 lines from 3, beyond tolerance 1)
    # recall = |{3}| / |{3}| = 1
    candidate = edit(c="c = 30", e="e = 50")
    assert edit_precision(BUGGY, candidate, REFERENCE) == 0.5
    assert edit_recall(BUGGY, candidate, REFERENCE) == 1.0


def test_tolerance_one_lets_a_neighbouring_line_count() -> None:
    # C = {4}, R = {3}: |4 - 3| = 1 <= 1 -> precision 1, recall 1; with tolerance 0 both 0.
    # mutation: a strict comparison (< tolerance).
    candidate = edit(d="d = 40")
    assert edit_precision(BUGGY, candidate, REFERENCE, tolerance=1) == 1.0
    assert edit_recall(BUGGY, candidate, REFERENCE, tolerance=1) == 1.0
    assert edit_precision(BUGGY, candidate, REFERENCE, tolerance=0) == 0.0
    assert edit_recall(BUGGY, candidate, REFERENCE, tolerance=0) == 0.0


def test_tolerance_two_reaches_line_five() -> None:
    # C = {5}, R = {3}: distance 2 -> 0 at tolerance 1, 1 at tolerance 2
    candidate = edit(e="e = 50")
    assert edit_precision(BUGGY, candidate, REFERENCE, tolerance=1) == 0.0
    assert edit_precision(BUGGY, candidate, REFERENCE, tolerance=2) == 1.0


def test_partial_recall_and_insertion_points() -> None:
    # reference R = {2, 5}; candidate inserts before line 3 (point 3) and changes line 6:
    # C = {3, 6}. Tolerance 1: 3 is near 2, 6 is near 5 -> precision 2/2; recall: 2 near 3,
    # 5 near 6 -> 2/2. Tolerance 0: nothing coincides -> 0 and 0.
    reference = edit(b="b = 20", e="e = 50")
    candidate = "a = 1\nb = 2\nprint(b)\nc = 3\nd = 4\ne = 5\nf = 60\n"
    assert changed_lines(BUGGY, candidate).points == frozenset({3, 6})
    assert edit_precision(BUGGY, candidate, reference) == 1.0
    assert edit_recall(BUGGY, candidate, reference) == 1.0
    assert edit_precision(BUGGY, candidate, reference, tolerance=0) == 0.0
    # candidate C = {2}: precision 1/1, recall 1/2 (5 is 3 lines away)
    only_b = edit(b="b = 20")
    assert edit_precision(BUGGY, only_b, reference) == 1.0
    assert edit_recall(BUGGY, only_b, reference) == 0.5


def test_undefined_precision_and_recall_are_none() -> None:
    # the candidate changes nothing: precision undefined, recall 0/1
    assert edit_precision(BUGGY, BUGGY, REFERENCE) is None
    assert edit_recall(BUGGY, BUGGY, REFERENCE) == 0.0
    # the reference changes nothing: recall undefined, every candidate change is unneeded
    assert edit_recall(BUGGY, REFERENCE, BUGGY) is None
    assert edit_precision(BUGGY, REFERENCE, BUGGY) == 0.0


def test_negative_tolerance_is_rejected() -> None:
    with pytest.raises(ValueError, match="tolerance"):
        edit_precision(BUGGY, REFERENCE, REFERENCE, tolerance=-1)
    with pytest.raises(ValueError, match="tolerance"):
        edit_recall(BUGGY, REFERENCE, REFERENCE, tolerance=-1)


# --------------------------------------------------------------------------- regeneration


def test_regeneration_needs_more_than_the_threshold() -> None:
    # 3 of 6 lines changed = 1/2, not > 1/2; 4 of 6 > 1/2. mutation: >= instead of >.
    three = edit(a="a = 0", c="c = 0", e="e = 0")
    four = edit(a="a = 0", c="c = 0", e="e = 0", f="f = 0")
    assert not regenerated(BUGGY, three)
    assert regenerated(BUGGY, four)
    assert regenerated(BUGGY, three, threshold=0.25)
    assert changed_lines(BUGGY, three).changed_share == 0.5


def test_regeneration_ignores_insertions_and_blank_lines() -> None:
    # twelve inserted lines leave every buggy line in place: not a regeneration
    assert not regenerated(BUGGY, BUGGY + "x = 0\n" * 12)
    # base with blank lines: 2 non-blank lines, 2 changed -> 2/2 > 1/2, blanks not counted
    assert regenerated("x = 1\n\n\n\ny = 2\n", "p = 1\nq = 2\n")
    assert not regenerated("", "x = 1\n")


def test_threshold_outside_unit_interval_is_rejected() -> None:
    with pytest.raises(ValueError, match="threshold"):
        regenerated(BUGGY, REFERENCE, threshold=1.5)


# --------------------------------------------------------------------------- tokens, EM


def test_code_tokens_reduce_layout_to_structure_tokens() -> None:
    source = "if x:   # check  \n    y = f(1,\n          2)\n\nz = 3"
    assert code_tokens(source) == [
        "if", "x", ":", "# check", "NEW_LINE",
        "INDENT", "y", "=", "f", "(", "1", ",", "2", ")", "NEW_LINE",
        "DEDENT", "z", "=", "3", "NEW_LINE",
    ]  # fmt: skip


def test_code_tokens_fall_back_to_a_regex_on_untokenizable_text() -> None:
    # an unclosed bracket makes tokenize fail ("EOF in multi-line statement")
    assert code_tokens("if x:\n    y = f(1,\n") == [
        "if", "x", ":", "NEW_LINE", "INDENT", "y", "=", "f", "(", "1", ",", "NEW_LINE", "DEDENT",
    ]  # fmt: skip
    assert code_tokens("a==b  # c\n(") == ["a", "==", "b", "# c", "NEW_LINE", "(", "NEW_LINE"]


def test_exact_match_normalises_whitespace_only() -> None:
    reference = "def f(a, b):\n    return a + b\n"
    assert exact_match("def f(a,b):\n  return a+b   \n\n\n", reference)
    assert exact_match("def f(a,\n      b):\n    return a + b", reference)
    # a comment is content; so is the indentation structure; so is any name or literal
    assert not exact_match("def f(a, b):\n    return a + b  # sum\n", reference)
    assert not exact_match("def f(a, b):\n    pass\nreturn a + b\n", reference)
    assert not exact_match("def f(a, b):\n    return a + c\n", reference)


# --------------------------------------------------------------------------- BLEU


def test_bleu_hand_computed_equal_lengths() -> None:
    # c = [x, =, a, +, b, NEW_LINE], r = [x, =, a, -, b, NEW_LINE]  (6 tokens each)
    # p1 = 5/6 (unsmoothed)
    # p2: c bigrams x=, =a, a+, +b, bNL; 3 in r -> (3+1)/(5+1) = 4/6
    # p3: x=a, =a+, a+b, +bNL; 1 in r -> (1+1)/(4+1) = 2/5
    # p4: 3 four-grams, none in r -> (0+1)/(3+1) = 1/4
    # BP = exp(1 - 6/6) = 1;  BLEU = (5/6 * 4/6 * 2/5 * 1/4)^(1/4) = (1/18)^(1/4)
    assert bleu("x = a + b", "x = a - b") == pytest.approx((1 / 18) ** 0.25, rel=1e-12)


def test_bleu_hand_computed_brevity_penalty() -> None:
    # c = [x, =, a, NEW_LINE] (4), r = [x, =, a, +, b, NEW_LINE] (6)
    # p1 = 4/4; p2: x=, =a match, aNL not -> (2+1)/(3+1) = 3/4
    # p3: x=a matches, =aNL not -> (1+1)/(2+1) = 2/3; p4: x=aNL not -> 1/2
    # geometric mean = (1 * 3/4 * 2/3 * 1/2)^(1/4) = (1/4)^(1/4) = 2^(-1/2)
    # BP = exp(1 - 6/4) = exp(-1/2). mutation: BP = exp(1 - c/r) or no BP.
    expected = 2**-0.5 * math.exp(-0.5)
    assert bleu("x = a", "x = a + b") == pytest.approx(expected, rel=1e-12)


def test_bleu_edge_cases() -> None:
    assert bleu(REFERENCE, REFERENCE) == 1.0
    # no shared unigram: c = ["# a"] (a comment line has no NEW_LINE), r = [x, NEW_LINE].
    # p1 = 0 -> BLEU 0. mutation: smoothing p1 too would give a positive score.
    assert bleu("# a\n", "x\n") == 0.0
    assert bleu("", "x = 1\n") == 0.0
    assert bleu("", "\n\n") == 1.0


def test_corpus_bleu_sums_statistics_before_the_geometric_mean() -> None:
    # pairs of the two tests above:
    #   matches 5+4=9 / totals 6+4=10; 3+2=5 / 5+3=8; 1+1=2 / 4+2=6; 0+0=0 / 3+1=4
    #   p1 = 9/10, p2 = 6/9, p3 = 3/7, p4 = 1/5; product 9/175
    #   c = 10, r = 12 -> BP = exp(1 - 12/10) = exp(-0.2)
    pairs = [("x = a + b", "x = a - b"), ("x = a", "x = a + b")]
    expected = math.exp(-0.2) * (9 / 175) ** 0.25
    assert corpus_bleu(pairs) == pytest.approx(expected, rel=1e-12)
    assert corpus_bleu([]) is None
    assert corpus_bleu([("x = a", "x = a + b")]) == bleu("x = a", "x = a + b")


# --------------------------------------------------------------------------- verdicts, CE


def turn_record(
    turn: int,
    program: str,
    verdicts: dict[str, int],
    *,
    episode: str = "e1",
    instance: str = "i1",
    model: str = "m",
    protocol: str = "pair",
) -> TurnRecord:
    return TurnRecord(
        run_id="r",
        episode_id=episode,
        instance_id=instance,
        model=model,
        protocol=protocol,
        run=0,
        seed=0,
        turn=turn,
        program=program,
        passed=[],
        failed=[],
        pass_rate=0.0,
        verdicts=verdicts,
    )


def end(
    episode: str,
    status: str = "done",
    *,
    instance: str = "i1",
    model: str = "m",
    protocol: str = "pair",
) -> EpisodeRecord:
    return msgspec.convert(
        {
            "run_id": "r",
            "episode_id": episode,
            "instance_id": instance,
            "model": model,
            "protocol": protocol,
            "run": 0,
            "seed": 0,
            "status": status,
            "turns": 1,
        },
        EpisodeRecord,
    )


def test_compiles() -> None:
    assert compiles("x = 1\n")
    assert not compiles("def f(:\n    pass\n")
    assert not compiles("if x:\n        a\n    b\n")  # IndentationError
    assert not compiles("x = 1\x00\n")  # null byte: ValueError or SyntaxError
    assert not compiles("x = " + "(" * 300 + ")" * 300)  # too many nested parentheses
    assert not compiles("x = " + "-" * 100_000 + "1")  # parser stack overflow
    # an invalid escape only warns; pytest runs with warnings as errors, and that must not
    # make it a compile error. mutation: not silencing warnings around compile().
    assert compiles('x = "\\d"\n')


def test_a_program_that_does_not_compile_turns_re_into_ce() -> None:
    # 3 RE + 1 SF on a syntax error: CE 3/4, SF 1/4 (only RE moves)
    mix = verdict_mix(turn_record(1, "def f(:\n", {"RE": 3, "SF": 1}))
    assert list(mix) == list(VERDICT_KEYS)
    assert mix == {"AC": 0.0, "WA": 0.0, "TLE": 0.0, "RE": 0.0, "MLE": 0.0, "CE": 0.75,
                   "OLE": 0.0, "SF": 0.25}  # fmt: skip


def test_a_program_that_compiles_keeps_its_runtime_errors() -> None:
    # AC 1, WA 2, RE 1 over 4 tests
    mix = verdict_mix(turn_record(1, "print(1 / 0)\n", {"AC": 1, "WA": 2, "RE": 1}))
    assert (mix["AC"], mix["WA"], mix["RE"], mix["CE"]) == (0.25, 0.5, 0.25, 0.0)
    assert math.fsum(mix.values()) == 1.0


def test_verdict_mix_without_counts_and_with_unknown_verdicts() -> None:
    assert verdict_mix(turn_record(1, "x\n", {})) == {}
    with pytest.raises(ValueError, match="unknown verdict"):
        verdict_mix(turn_record(1, "x\n", {"XX": 1}))


# --------------------------------------------------------------------------- per turn, per model


def instance(iid: str = "i1", buggy: str = BUGGY, reference: str = REFERENCE) -> Instance:
    return Instance(
        id=iid,
        problem="p",
        buggy=buggy,
        reference=reference,
        tests=[Test(id="t1", input="", output="")],
        kind="stdio",
        time_limit=1.0,
        memory_limit_mb=64,
    )


def test_turn_precision_of_one_record() -> None:
    # the brief example as a turn: C = {3, 5}, R = {3}; 2 of 6 lines changed
    record = turn_record(2, edit(c="c = 30", e="e = 50"), {"AC": 1, "WA": 1})
    result = turn_precision(record, instance())
    assert result == TurnPrecision(
        episode_id="e1", instance_id="i1", model="m", protocol="pair", run=0, turn=2,
        edit_precision=0.5, edit_recall=1.0, changed_share=2 / 6, regenerated=False,
        exact_match=False, exact_match_code=False, bleu=result.bleu, compiles=True,
        verdicts={"AC": 0.5, "WA": 0.5, "TLE": 0.0, "RE": 0.0, "MLE": 0.0, "CE": 0.0,
                  "OLE": 0.0, "SF": 0.0},
    )  # fmt: skip
    assert result.bleu == bleu(record.program, REFERENCE)
    with pytest.raises(ValueError, match="scored against"):
        turn_precision(record, instance("other"))


# Two finished episodes of model m on instance i1 (BUGGY, REFERENCE: R = {3}), tolerance 1.
#
# Episode A
#   t0 program = BUGGY                 WA 4        (turn 0: only in the by-turn mix)
#   t1 program = REFERENCE             AC 4        precision 1, recall 1, regen no
#   final = REFERENCE: exact match, BLEU 1
#   means over t >= 1: precision 1, recall 1, regen 0/1, mix {AC 1}
#
# Episode B
#   t0 every line rewritten            WA 4        (regenerated, but turn 0 is not counted)
#   t1 every line rewritten, "F(" does not compile   RE 4 -> CE 4
#      C = {1..6}; within 1 of 3: {2, 3, 4} -> precision 3/6; recall 1; 6/6 > 1/2 -> regen
#   t2 REFERENCE plus "print(1)" appended  AC 3, WA 1
#      C = {3, 7} (7 = insertion after the last line) -> precision 1/2; recall 1; 1/6 -> no
#   final = t2: no exact match
#   BLEU: r = REFERENCE tokens, 6 lines x [name, =, number, NEW_LINE] = 24 tokens;
#     c = r + [print, (, 1, ), NEW_LINE] = 29 tokens, r is a prefix of c:
#     p1 = 24/29, p2 = (23+1)/(28+1), p3 = (22+1)/(27+1), p4 = (21+1)/(26+1); BP = 1 (29 > 24)
#   means over t >= 1: precision (1/2 + 1/2)/2 = 1/2, recall 1, regen 1/2,
#     mix mean of {CE 1} and {AC 3/4, WA 1/4} = {AC 3/8, WA 1/8, CE 1/2}
#
# Summary (episode means, then the mean over the two episodes):
#   precision (1 + 1/2)/2 = 3/4   (pooling the 3 turns would give 2/3: mutation)
#   recall 1; regeneration (0 + 1/2)/2 = 1/4   (pooled: 1/3)
#   exact match 1/2; BLEU (1 + BLEU_B)/2
#   corpus BLEU: matches / totals summed over A (final = r) and B:
#     24+24 / 24+29, 23+23 / 23+28, 22+22 / 22+27, 21+21 / 21+26; c = 53 > r = 48 -> BP 1;
#     p1 = 48/53, p2 = (46+1)/(51+1), p3 = (44+1)/(49+1), p4 = (42+1)/(47+1)
#   mix over t >= 1: AC (1 + 3/8)/2 = 11/16, WA (0 + 1/8)/2 = 1/16, CE (0 + 1/2)/2 = 1/4
#   by turn: t0 {WA 1}; t1 {AC 1/2, CE 1/2}; t2 {AC 3/4, WA 1/4} (only B reached t2)
REWRITE = "A = 1\nB = 2\nC = 3\nD = 4\nE = 5\nF = 6\n"
BROKEN = "A = 1\nB = 2\nC = 3\nD = 4\nE = 5\nF(\n"
APPENDED = REFERENCE + "print(1)\n"


def two_episodes() -> list[Record]:
    return [
        turn_record(0, BUGGY, {"WA": 4}, episode="A"),
        turn_record(1, REFERENCE, {"AC": 4}, episode="A"),
        end("A"),
        turn_record(0, REWRITE, {"WA": 4}, episode="B"),
        turn_record(1, BROKEN, {"RE": 4}, episode="B"),
        turn_record(2, APPENDED, {"AC": 3, "WA": 1}, episode="B"),
        end("B"),
        # an errored and an unfinished episode count nowhere
        turn_record(0, REWRITE, {"WA": 4}, episode="C"),
        turn_record(1, BUGGY, {"WA": 4}, episode="C"),
        end("C", "error"),
        turn_record(0, REWRITE, {"WA": 4}, episode="D"),
    ]


def mix(**shares: float) -> dict[str, float]:
    return {key: shares.get(key, 0.0) for key in VERDICT_KEYS}


def test_aggregation_over_two_episodes_by_hand() -> None:
    result = precision_by_model(two_episodes(), {"i1": instance()})
    assert list(result) == ["m"]
    summary = result["m"]
    bleu_b = (24 / 29 * 24 / 29 * 23 / 28 * 22 / 27) ** 0.25
    corpus = (48 / 53 * 47 / 52 * 45 / 50 * 43 / 48) ** 0.25
    assert bleu(APPENDED, REFERENCE) == pytest.approx(bleu_b, rel=1e-12)
    assert summary.episodes == 2
    assert summary.turns == 3
    assert summary.edit_precision == 0.75
    assert summary.edit_recall == 1.0
    assert summary.regeneration_rate == 0.25
    assert summary.exact_match_rate == 0.5
    assert summary.bleu == pytest.approx((1 + bleu_b) / 2, rel=1e-12)
    assert summary.corpus_bleu == pytest.approx(corpus, rel=1e-12)
    assert summary.verdict_mix == mix(AC=11 / 16, WA=1 / 16, CE=0.25)
    assert summary.verdict_mix_by_turn == {
        0: mix(WA=1.0),
        1: mix(AC=0.5, CE=0.5),
        2: mix(AC=0.75, WA=0.25),
    }


def test_summary_round_trips_through_json() -> None:
    summary = precision_by_model(two_episodes(), {"i1": instance()})["m"]
    decoded = msgspec.json.decode(msgspec.json.encode(summary), type=PrecisionSummary)
    assert decoded == summary


def test_protocol_joins_the_key_only_when_there_are_several() -> None:
    records: list[Record] = [
        *two_episodes(),
        turn_record(0, BUGGY, {"WA": 4}, episode="V", protocol="vanilla"),
        turn_record(1, REFERENCE, {"AC": 4}, episode="V", protocol="vanilla"),
        end("V", protocol="vanilla"),
    ]
    result = precision_by_model(records, {"i1": instance()})
    assert list(result) == ["m|pair", "m|vanilla"]
    assert result["m|pair"].edit_precision == 0.75
    assert result["m|vanilla"].exact_match_rate == 1.0
    pooled = precision_by_model(records, {"i1": instance()}, with_protocol=False)
    assert list(pooled) == ["m"]
    assert pooled["m"].episodes == 3


def test_an_episode_finished_at_turn_zero_has_no_turn_means() -> None:
    records: list[Record] = [turn_record(0, REFERENCE, {"AC": 4}, episode="Z"), end("Z")]
    summary = precision_by_model(records, {"i1": instance()})["m"]
    assert (summary.turns, summary.edit_precision, summary.regeneration_rate) == (0, None, None)
    assert summary.verdict_mix == {}
    assert summary.exact_match_rate == 1.0
    assert summary.verdict_mix_by_turn == {0: mix(AC=1.0)}


def test_a_rewritten_turn_record_replaces_the_earlier_one() -> None:
    # a resumed run may log turn 1 twice; the last record of a turn is the one scored
    records: list[Record] = [
        turn_record(0, BUGGY, {"WA": 4}, episode="A"),
        turn_record(1, BROKEN, {"RE": 4}, episode="A"),
        turn_record(1, REFERENCE, {"AC": 4}, episode="A"),
        end("A"),
    ]
    summary = precision_by_model(records, {"i1": instance()})["m"]
    assert (summary.turns, summary.edit_precision, summary.exact_match_rate) == (1, 1.0, 1.0)


def test_a_record_of_an_unknown_instance_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="i1"):
        precision_by_model(two_episodes(), {"other": instance("other")})


# --------------------------------------------------------------------------- properties

LINES = st.sampled_from(["x = 1", "y = 2", "z = x + y", "print(z)", "", "    pass", "# c"])
PROGRAMS = st.lists(LINES, max_size=10).map(lambda lines: "\n".join(lines) + "\n")


@settings(max_examples=200, deadline=None)
@given(PROGRAMS, PROGRAMS, PROGRAMS, st.integers(min_value=0, max_value=3))
def test_precision_and_recall_are_shares(
    buggy: str, candidate: str, reference: str, tolerance: int
) -> None:
    precision = edit_precision(buggy, candidate, reference, tolerance)
    recall = edit_recall(buggy, candidate, reference, tolerance)
    for value in (precision, recall):
        assert value is None or 0.0 <= value <= 1.0
    # precision of C against R is recall of R against C
    assert precision == edit_recall(buggy, reference, candidate, tolerance)
    # a wider tolerance never lowers either
    wider = edit_precision(buggy, candidate, reference, tolerance + 1)
    assert precision is None or (wider is not None and wider >= precision)


@settings(max_examples=200, deadline=None)
@given(PROGRAMS, PROGRAMS, st.integers(min_value=0, max_value=3))
def test_the_reference_edit_itself_is_perfect(buggy: str, program: str, tolerance: int) -> None:
    if not changed_lines(buggy, program).points:
        assert edit_precision(buggy, program, program, tolerance) is None
        assert edit_recall(buggy, program, program, tolerance) is None
    else:
        assert edit_precision(buggy, program, program, tolerance) == 1.0
        assert edit_recall(buggy, program, program, tolerance) == 1.0


@settings(max_examples=200, deadline=None)
@given(PROGRAMS, PROGRAMS)
def test_bleu_is_a_share_and_exact_match_implies_one(candidate: str, reference: str) -> None:
    score = bleu(candidate, reference)
    assert 0.0 <= score <= 1.0
    assert bleu(candidate, candidate) == 1.0
    if exact_match(candidate, reference):
        assert score == 1.0
    assert corpus_bleu([(candidate, reference)]) == score
