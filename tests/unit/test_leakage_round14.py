"""The leakage rules' revision 14 classes (issue 24: precision on hints never seen), on sentences written for
these tests in a domain of their own (a library's loans and fines), not the labelled sets': each class narrows
a rule whose first-seen wrong-alone count was not below its right-alone count, and each test holds a sentence
revision 13 rejected (so the test fails without the change) and a neighbour the rule must still reject."""

from __future__ import annotations

from pairbench_async.protocol.evidence import Evidence
from pairbench_async.protocol.leakage import HiddenData, rule_reasons


def bare(hint: str, level: int) -> set[str]:
    """The rules that reject ``hint`` with no task at all (the wording classes alone)."""
    reasons = rule_reasons(hint, level, Evidence(problem=""), "", HiddenData(reference=""))
    return {reason.split(":", 1)[0] for reason in reasons}


def test_a_contrast_with_an_article_picks_a_place_not_the_rule() -> None:
    assert "concept" not in bare("The suspicious piece is the fine computation after the due-date check, "
                                 "not the scan that collects the loans.", 4)
    assert "concept" not in bare("The suspicious piece is the final fine decision after the overdue count, "
                                 "not the double loop over members.", 4)
    # a contrast of extent is still the rule
    assert "concept" in bare("A loan is overdue after fourteen days, not just after thirty.", 4)


def test_a_modal_in_a_comparative_is_the_expected_output() -> None:
    assert "direction" not in bare("The queue holds fewer tickets than should advance to the desk.", 2)
    # the same modal as the clause's own predicate still tells what to do (above L1: see the L1 class below)
    assert "direction" in bare("Each overdue loan should advance the fine by a day.", 2)


def test_an_l5_passive_norm_on_a_thing_of_the_problem_states_what_holds() -> None:
    assert "direction" not in bare("A fine has to be added only once per overdue book.", 5)
    # below L5 it is still a direction; a program part as its subject, or steps ordered, are at L5 too
    assert "direction" in bare("A fine has to be added only once per overdue book.", 4)
    assert "direction" in bare("The counter has to be reset for each member.", 5)
    assert "direction" in bare("Fines have to be added before the loans are sorted.", 5)


def test_a_plural_that_comes_out_wrong_is_the_output() -> None:
    assert "input_pattern" not in bare("Some shelf labels come out wrong.", 1)
    assert "input_pattern" not in bare("Some receipt lines come out wrong: the fine is larger than expected.", 1)
    # a plural of the input with its failure, or with a feature, is still the input pattern
    assert "input_pattern" in bare("Overdue loans trip the program up.", 1)
    assert "input_pattern" in bare("Members with overdue loans come out wrong.", 1)


def test_code_spans_pair_their_backticks_in_order() -> None:
    # the prose between a closing and the next opening backtick was read as a span
    assert "code" not in bare("Loans such as `7` fail, and (as noted) `9` too.", 2)
    assert "code" in bare("`total += fine` is where it goes wrong.", 4)
    assert "code" in bare("Loans such as `7` fail; `total += fine` is the reason.", 4)


def test_comparing_a_part_with_how_another_is_done_points_not_directs() -> None:
    assert "direction" not in bare("The fault is in how `fines` is built - compare it with how `loans` is filled.", 4)
    assert "direction" in bare("Compare against zero instead of one in the fine check.", 4)


FINE_PROBLEM = ("Given a list of loans with days late, return the total fine: each started week late costs the "
                "weekly rate.")
FINE = """\
def total_fine(loans, rate):
    total = 0
    for late in loans:
        weeks = late // 7
        total += weeks * rate
    return total
"""
FINE_REFERENCE = FINE.replace("late // 7", "(late + 6) // 7")


def rules(hint: str, level: int) -> set[str]:
    reasons = rule_reasons(hint, level, Evidence(problem=FINE_PROBLEM), FINE, HiddenData(reference=FINE_REFERENCE))
    return {reason.split(":", 1)[0] for reason in reasons}


def test_an_l5_formula_in_mathematical_notation_states_the_rule_not_code() -> None:
    assert "code" not in rules("A loan late by d days is charged for ceil(d/7) weeks.", 5)
    assert "code" not in rules("The identity total = weeks * rate holds only when every week is started.", 5)
    # at L6 a formula is a change; at L5 one the program is told to take, a builtin or a Python operator is code
    assert "code" in rules("A loan late by d days is charged for ceil(d/7) weeks.", 6)
    assert "code" in rules("Update total to weeks * rate rather than late * rate.", 5)
    assert "code" in rules("A loan is charged round(d/7) weeks.", 5)
    assert "code" in rules("Use weeks = (late + 6) // 7 for each loan.", 5)


def test_a_modal_is_not_what_the_program_still_holds() -> None:
    assert "state" not in bare("Sometimes a late loan is charged while it should still have been inside its grace "
                               "week; the total drifts from the expected one.", 1)
    assert "state" in bare("The fines you add up still give a charge for the grace week.", 1)


def test_a_noun_and_its_infinitive_heading_a_colon_is_no_instruction() -> None:
    assert "direction" not in bare("Rule to keep: a member's total never exceeds the cap.", 5)
    assert "direction" in bare("Switch to integer weeks when computing the fine.", 5)
    assert "direction" in bare("Remember to cap it: a member's total never exceeds the cap.", 5)


def test_at_l1_a_modal_on_a_thing_of_the_problem_is_the_expected_behaviour() -> None:
    assert "direction" not in bare("On some members the total fine printed must drop to zero, but it stays "
                                   "positive.", 1)
    assert "direction" not in bare("Overdue weeks should advance the fine, yet the printed total lags.", 1)
    # above L1, and at L1 on the programmer or the program, it is still a repair
    assert "direction" in bare("Overdue weeks should advance the fine, yet the printed total lags.", 2)
    assert "direction" in bare("The total is too high; you should subtract the grace week.", 1)
    assert "direction" in bare("The total is too high; your loop should skip the grace week.", 1)


def test_a_property_in_the_subject_of_a_verdict_picks_out_inputs() -> None:
    assert "concept" not in bare("Returns strictly below or strictly above the due time are handled correctly.", 2)
    assert "concept" not in bare("Fines strictly greater than the cap pass.", 2)
    # given as the verdict's reason, or stated on its own, it is still the rule
    assert "concept" in bare("Fines equal to the cap fail, because a fine strictly greater than the cap is clipped.", 2)
    assert "concept" in bare("Only a fine strictly greater than the cap is clipped.", 2)
