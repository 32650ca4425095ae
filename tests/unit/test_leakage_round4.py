"""The leakage rules' revision 8 classes (after fresh14, an outside reviewer's set): for each class
members that are not fresh14's sentences, and the neighbours it must still accept (the symptom at
L1, a description of the program at L3, the offline rules model's own wordings)."""

from __future__ import annotations

from pairbench_async.protocol.evidence import Evidence
from pairbench_async.protocol.leakage import HiddenData, rule_reasons

PROBLEM = "Given n and then n integers, print the sum of the positive ones."
PROGRAM = "n = int(input())\ntotal = 0\nfor x in map(int, input().split()):\n    total += x\nprint(total)\n"


def rules(hint: str, level: int) -> set[str]:
    reasons = rule_reasons(hint, level, Evidence(problem=PROBLEM), PROGRAM, HiddenData())
    return {reason.split(":", 1)[0] for reason in reasons}


def test_an_input_named_by_value_or_by_example_is_an_input_pattern() -> None:
    assert rules("Try n = 7: the sum comes out wrong.", 1) == {"input_pattern"}
    assert rules("It breaks on lists like -2 5 -1.", 1) == {"input_pattern"}
    assert rules("The results are off for lists that hold a value below zero.", 1) == {"input_pattern"}
    # a value of the output is the symptom; so are outputs given by example
    assert rules("It prints 4 where 3 is expected; the output n = 4 is one too many.", 1) == set()
    assert rules("Outputs such as 12 show up where the expected answer is 9.", 1) == set()


def test_what_a_held_value_does_over_the_run_is_state() -> None:
    assert rules("The program forgets what the previous value was.", 2) == {"state"}
    assert rules("The total stays at zero for lists of negatives.", 2) == {"state"}
    assert rules("The partial sum is thrown away between lines.", 1) == {"state"}
    # the output, not what the program keeps
    assert rules("Part of the expected output is lost: the tail never appears.", 1) == set()
    assert rules("The printed total stays at the same small value on many tests.", 1) == set()


def test_a_count_word_alone_is_not_state() -> None:
    assert rules("Lists that use the same values a different number of times are misjudged.", 2) == set()


def test_membership_in_what_the_problem_asks_for_is_a_concept() -> None:
    assert rules("Zeros and negatives do not belong to the sum.", 4) == {"concept"}
    assert rules("Each value may be added at most once.", 3) == {"concept"}
    # in a wh-clause it is what the program tracks (the rules model's own L3 wording); of the tests, no rule
    assert rules("The solution does not keep exact account of which items belong in the result.", 3) == set()
    assert rules("The failing test is part of the hidden set; the printed sum is too big.", 1) == set()


def test_a_passive_classification_describes_the_program() -> None:
    assert rules("Negative values are treated as if they were positive.", 3) == set()
    assert rules("Negative values are to be treated as zero.", 3) == {"concept"}


def test_an_opening_verb_with_a_subject_shape_is_no_instruction() -> None:
    assert rules("Output too large on some tests.", 1) == set()
    assert rules("Count values in the output are right, but the total is not.", 1) == set()
    assert rules("Compare your output with the expected one: it is too large.", 1) == set()
    assert rules("You can see that the printed sum is too large.", 1) == set()
    # an instruction after a spaced dash, or a reminder, still is one
    assert "direction" in rules("The sum takes every value - skip the negative ones.", 4)
    assert "direction" in rules("Don't forget to leave out the negative values.", 5)


def test_a_repair_word_in_a_relative_clause_with_its_own_subject_describes() -> None:
    assert rules("The part that the sum should keep is lost before printing.", 3) == set()
    assert rules("The check that decides whether to add a value looks at its position.", 4) == set()
    # said to the programmer, it is one
    assert "direction" in rules("The sum should keep only the positive values.", 3)
