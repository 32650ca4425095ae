"""The leakage rules' revision 9 classes, built from closed word classes rather than verb lists (after
fresh15, an outside reviewer's set): for each class, members that are not fresh15's sentences and whose
verbs no earlier revision listed, and the neighbours close to the boundary it must still accept."""

from __future__ import annotations

import pytest

from pairbench_async.protocol.evidence import Evidence
from pairbench_async.protocol.leakage import HiddenData, rule_reasons
from pairbench_async.protocol.leakage_grammar import (
    constructed_imperative,
    example_inputs,
    request_verb,
)

PROBLEM = "Given n and then n integers, print the largest sum of a contiguous non-empty run of them."
PROGRAM = ("n = int(input())\na = list(map(int, input().split()))\nbest = 0\ncur = 0\nfor x in a:\n"
           "    cur = max(x, cur + x)\n    best = max(best, cur)\nprint(best)\n")


def rules(hint: str, level: int) -> set[str]:
    reasons = rule_reasons(hint, level, Evidence(problem=PROBLEM), PROGRAM, HiddenData())
    return {reason.split(":", 1)[0] for reason in reasons}


@pytest.mark.parametrize("hint", [
    "Prime the maximum with the opening value of the list.",            # a verb no revision listed
    "Also, forbid an empty run before you compare.",                    # after a lead word
    "When every value is below zero, hand the answer its own first element.",  # main clause after an adverbial
    "The start is wrong - anchor it at the first element.",             # after a spaced dash
    "Rewire best so that it follows the first value.",                  # a program name as the object
    "Fold 1 into the running total.",                                  # a number as a quantity
    "Iterate across the values once more.",                             # a preposition opening a complement
    "Keep searching past the first negative value.",                    # an aspectual verb with a gerund
])
def test_an_imperative_with_any_verb_is_a_direction(hint: str) -> None:
    assert "direction" in rules(hint, 5)


@pytest.mark.parametrize("hint", [
    "Could you seed the maximum from the data rather than from a constant?",
    "Please drop the zero start.",
    "Try anchoring the maximum at the first value.",
    "Can you trace the loop and then reseed the maximum with the first value?",  # coordinated change
])
def test_a_request_whose_verb_changes_the_program_is_a_direction(hint: str) -> None:
    assert "direction" in rules(hint, 5)


@pytest.mark.parametrize("hint", [
    # pointing and diagnostic verbs: the candidate is asked to look, not to change
    "Trace the loop by hand on a list of negatives.",
    "Consider the value the maximum starts from.",
    "Could you walk through the loop with all values negative?",
    "Try tracing the first iteration.",
    "Can you reproduce the failure with a list of negatives?",
    "Could you confirm the answer for a single negative value?",
    "Take a look at how the maximum starts.",
    # a subject, not a verb: a noun and its finite verb, an adjective and its plural, a numbered noun
    "Negative inputs are where it goes wrong.",
    "Odd runs fail too.",
    "Start value is the problem here.",
    "Line 3 of the output is off.",
    "Even the first answer is too large.",
    # closed-class openings
    "Every answer is too large when all the values are negative.",
    "Maybe the maximum starts too high.",
    # a parenthetical between commas and a header before a colon open no instruction
    "The maximum, seeded before the loop, never drops below zero.",
    "Symptom: the answer is zero when it should be negative.",
    # testing the program on an input is observing, not changing
    "Give it a list of only negative numbers and compare.",
    # pointing idioms, pointing again, where to start, an exercise by hand
    "Keep an eye on the maximum as the loop runs.",
    "Retrace the loop with the values -3 and -1.",
    "Start by tracing the first two iterations.",
    "Compute the expected answer by hand for a list of negatives.",
    "Count the runs by hand on a short list.",
    "Beware the value the maximum starts from.",
])
def test_pointing_verbs_and_subjects_are_no_direction(hint: str) -> None:
    assert "direction" not in rules(hint, 5)


def test_the_construction_reads_the_verb_and_its_object() -> None:
    assert constructed_imperative("Seed the best with the first element", frozenset()) == "Seed"
    assert constructed_imperative("Seeded values are fine", frozenset()) is None
    assert constructed_imperative("best = 0 is the problem", frozenset({"best"})) is None
    assert request_verb("could you look one character ahead and subtract the current value") == "subtract"
    assert request_verb("could you look one character ahead and see what happens") is None


@pytest.mark.parametrize("hint", [
    "Lists such as 3 -1 -2 give the wrong answer.",
    "It fails on sequences like -5 -7 -1.",
    "Arrays, e.g. '-1 -2', come out wrong.",
    "Sequences that contain no positive value at all end up with the wrong answer.",
    "Hmm, runs whose every element is negative come out as 0.",
    "Sequences that dip below zero and climb back get the wrong answer.",  # a relative clause with any verb
    "Hmm, lists that start with a drop come out wrong.",
    "Runs made of numerals such as XIV or IX are misread.",             # upper-case literals as examples
])
def test_a_class_of_inputs_by_example_or_relative_clause_is_an_input_pattern(hint: str) -> None:
    assert "input_pattern" in rules(hint, 1)


@pytest.mark.parametrize("hint", [
    # examples of the output, and relative clauses over the program or the output: the symptom
    "Answers such as 0 appear where a negative number is expected.",
    "Values such as 0 appear in your output where the expected output is negative.",
    "Numbers that the program prints are sometimes too large.",
    "Tests that fail all print 0.",
    "The program stops with a ValueError on some tests.",
    "It looks like the answer is too large on some tests.",
    "Some answers are too large.",
    "It fails for lists like this one.",                                # "like" without a literal example
    "Cases like that are wrong.",
])
def test_outputs_by_example_and_the_program_s_relative_clauses_are_no_input_pattern(hint: str) -> None:
    assert "input_pattern" not in rules(hint, 1)
    assert example_inputs(hint) is None


def test_a_cause_that_is_a_classification_is_not_state() -> None:
    # the program breaking a rule of the problem (concept) is not what it fails to keep (state)
    assert "state" not in rules("The answer is too large because the solution treats an empty run as allowed.", 2)
    assert "state" in rules("The answer is too large because the program never updates the best after a drop.", 2)
    assert "state" in rules("Mazes fail because the search treats the last row as if it were the first.", 2)


def test_relative_clauses_with_a_modal_are_no_direction() -> None:
    assert "direction" not in rules("The best never drops below any sum you can actually get.", 3)
    assert "direction" not in rules("The index ends up one past the person who should go.", 3)
    assert "direction" not in rules("The invariant you need: the best covers every run seen so far.", 5)
    assert "direction" in rules("You need a different starting value for the best.", 5)


def test_a_classification_or_norm_told_of_a_part_of_the_code_is_not_the_problem_s_rule() -> None:
    # the program's doing described (state, L3) or a change asked of a code part: not a concept
    assert "concept" not in rules("Some cells stay unvisited, so the scan later treats them as the start of a run.", 3)
    assert "concept" not in rules("One value stays unseen, so it gets counted again as the start of a run.", 2)
    assert "concept" not in rules("The division in the print statement should be a true division.", 4)
    # the problem's rule, even told through the solution, still is one
    assert "concept" in rules("The solution needs to distinguish between a value seen once and one seen twice.", 4)
    assert "concept" in rules("Equal values are to be treated as one value.", 3)


def test_a_verb_before_like_is_no_plural_noun_with_examples() -> None:
    # "looks like 1+2": a verb ending in -s, a guess at the cause, not a class of inputs
    assert "input_pattern" not in rules("The answer is too large: it looks like 3 and -1 are added twice.", 1)
    assert "input_pattern" in rules("It breaks on lists like 3 -1 2.", 1)


def test_a_construct_word_in_a_relative_clause_about_the_output_is_no_location() -> None:
    # "print" is a construct ("the final print"), but in "the length you print" it is the verb
    # of a relative clause on the output: the symptom (tests/integration/test_call_records.py's
    # feedback model writes it at every level; revision 8 read it as a location)
    from pairbench_async.protocol.leakage_patterns import location_reasons

    for clean in ("Look at the length you print.", "Check the totals that print late.",
                  "The numbers we print for the second case are off."):
        assert location_reasons(clean, set()) == [], clean
    for placed in ("Look at the print statement at the end.", "The final print is the suspect.",
                   "The print inside the loop is where it goes wrong."):
        assert location_reasons(placed, set()), placed
