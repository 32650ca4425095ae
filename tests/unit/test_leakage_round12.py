"""The leakage rules' revision 12 classes (issue 24, item 1: precision on hints never seen), on sentences
written for these tests in a domain of their own, not the labelled sets': the candidate's own code quoted
to name a place (a location, never code, unless the reference adds it or the hint says to write it)."""

from __future__ import annotations

from pairbench_async.protocol.evidence import Evidence
from pairbench_async.protocol.leakage import HiddenData, rule_reasons

RISE_PROBLEM = ("Write a function longest_rise(temps) that returns the length of the longest run of strictly "
                "increasing consecutive readings in the list temps (0 for an empty list).")
RISE = """\
def longest_rise(temps):
    best = cur = 0
    log = []
    for i in range(len(temps)):
        if i > 0 and temps[i] >= temps[i - 1]:
            cur += 1
        else:
            cur = 1
        best = max(best, cur)
        log.append(cur)
    return best
"""
RISE_REFERENCE = RISE.replace(">=", ">")
#: the reference moves the running maximum into the reset branch: that statement is what it adds
MOVED_REFERENCE = RISE.replace("            cur = 1\n        best = max(best, cur)\n",
                               "            best = max(best, cur)\n            cur = 1\n        best = max(best, cur)\n")


def rules(hint: str, level: int, reference: str = RISE_REFERENCE) -> set[str]:
    reasons = rule_reasons(hint, level, Evidence(problem=RISE_PROBLEM), RISE, HiddenData(reference=reference))
    return {reason.split(":", 1)[0] for reason in reasons}


# --------------------------------------------------------------------------- the candidate's code quoted


def test_the_candidates_code_quoted_as_a_place_is_a_location_never_code() -> None:
    for hint in ("The fault sits in the `if` that compares `temps[i]` with `temps[i - 1]`.",
                 "Think about what `best = max(best, cur)` does right after a reset.",
                 "Take a look at the `log.append(...)` call and when it runs.",
                 "Look at the `if i > 0 and temps[i] >= temps[i - 1]` line."):
        assert rules(hint, 4) == set(), hint
        assert rules(hint, 3) == {"location"}, hint


def test_the_fix_stays_code_whoever_quotes_it() -> None:
    # what the reference adds: the changed comparison, a statement it moves
    assert "code" in rules("Make it `temps[i] > temps[i - 1]` and it works.", 6)
    assert "code" in rules("The best = max(best, cur) inside the else is what counts.", 6, MOVED_REFERENCE)
    # told to write or move the candidate's own statement
    assert "code" in rules("Move best = max(best, cur) above cur = 1.", 6)
    assert "code" in rules("Write `cur = 1` before the loop as well.", 6)
    # a chain of statements is a patch
    assert "code" in rules("In the else: cur = 1; best = max(best, cur).", 6)


# --------------------------------------------------------------------------- an example input is data


def test_an_example_call_or_a_parameter_given_a_literal_is_data_at_l2() -> None:
    for hint in ("It breaks on readings that level off, e.g. longest_rise([3, 5, 5, 6]) should be 2.",
                 "Try longest_rise([1, 2, 2]): the first run '1 2' is only two readings long and must not grow.",
                 "Readings that repeat a value trip it up, e.g. temps=[4, 4] with the answer 1."):
        assert rules(hint, 2) == set(), hint
        assert "input_pattern" in rules(hint, 1), hint


def test_a_program_variable_given_a_value_or_a_call_to_make_stays_code() -> None:
    # ``cur`` is the program's, not the problem's: a statement
    assert "code" in rules("Readings that repeat trip it up; then best = 1 must happen.", 2)
    # the problem's name, but the hint says to write it
    assert "code" in rules("Set temps = sorted(temps) first.", 6)
    # the rest of a sentence without an example is read as before
    assert "concept" in rules("A run must not grow when two readings are equal.", 2)


# --------------------------------------------------------------------------- L5: what must hold


def test_at_l5_a_modal_stating_what_must_hold_is_the_invariant_not_a_direction() -> None:
    for hint in ("The streak count has to run over every reading, the last one included.",
                 "Every climb has to be paired with its predecessor, and a plateau ends a streak.",
                 "A streak must never absorb a reading that merely equals the one before it."):
        assert "direction" not in rules(hint, 5), hint


def test_at_l5_an_instruction_to_change_the_program_stays_a_direction() -> None:
    for hint in ("Runs are strict, so the comparison should use a strict inequality.",
                 "Equal readings end a run, so you must reset the run length there.",
                 "Equal readings end a run, so the check ought to reject them rather than extend the run.",
                 "A run ends on equal readings, so cur has to restart from 1 there."):
        assert "direction" in rules(hint, 5), hint


# --------------------------------------------------------------------------- L1-L3: the output, the problem's names


def test_the_problems_own_names_and_what_the_output_lacks_are_no_location_or_direction() -> None:
    # the problem's parameter quoted alone is the problem's word, not a place in the program
    assert rules("It fails whenever `temps` holds two equal readings in a row.", 2) == set()
    # the problem's function named at the start of a sentence is no imperative ("longest" / "count")
    count_problem = "Write count_rises(temps) returning how many readings are higher than the one before."
    count_program = "def count_rises(temps):\n    return sum(b >= a for a, b in zip(temps, temps[1:]))\n"
    said = rule_reasons("count_rises returns too many rises for some readings.", 1, Evidence(problem=count_problem),
                         count_program, HiddenData(reference=count_program.replace(">=", ">")))
    assert not [reason for reason in said if reason.startswith("direction")], said
    # what a result lacks or how data changes over time is the symptom
    assert "direction" not in rules("The reported length is missing one reading: a run is cut short.", 3)
    assert "direction" not in rules("The lengths come out equal, even where readings keep changing from one day to "
                                    "the next.", 1)
    # the program's own name quoted below L4 is still a location; a change asked for is still a direction
    assert "location" in rules("It fails whenever `cur` is reset on equal readings.", 2)
    assert "direction" in rules("Try changing the comparison to a strict one.", 3)
    assert "direction" in rules("The check is missing: add it before the loop.", 3)


def test_the_part_just_named_told_to_act_otherwise_by_contrast_is_a_direction() -> None:
    assert "direction" in rules("The `else` branch is the culprit; it should close the streak, not stretch it.", 4)
    # a condition that must hold, with a contrast, is no instruction
    assert "direction" not in rules("A strict climb is a condition that must hold at every reading, not just the "
                                    "first.", 5)
