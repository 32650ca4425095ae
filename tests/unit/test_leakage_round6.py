"""The leakage rules' revision 10 classes (:mod:`pairbench_async.protocol.leakage_mechanisms`): each boundary
recognised by a mechanism. Members invented for these tests (none is a labelled set's sentence), and the
neighbours close to the boundary that each class must still accept."""

from __future__ import annotations

import pytest

from pairbench_async.protocol.evidence import Evidence
from pairbench_async.protocol.leakage import HiddenData, rule_reasons
from pairbench_async.protocol.leakage_mechanisms import (
    failing_class_reasons,
    held_value_reasons,
)

PROBLEM = ("A parking garage logs cars entering and leaving. Given the log lines, print the largest number of "
           "cars inside at any moment.")
PROGRAM = ("n = int(input())\ninside = 0\npeak = 0\nfor _ in range(n):\n    kind = input().split()[0]\n"
           "    if kind == 'in':\n        inside += 1\n    peak = max(peak, inside)\nprint(peak)\n")


def rules(hint: str, level: int) -> set[str]:
    reasons = rule_reasons(hint, level, Evidence(problem=PROBLEM), PROGRAM, HiddenData())
    return {reason.split(":", 1)[0] for reason in reasons}


@pytest.mark.parametrize("hint", [
    "The occupancy your program keeps climbs but never comes down again.",          # a relative clause: program keeps
    "The number of cars you start from is off after a departure.",                   # ... "you" as the program
    "The stored peak drifts away from the real occupancy over the day.",             # a participle of keeping
    "After a car leaves, its spot is still marked taken.",                           # a mark left in place
    "Once the garage empties, the running count is never lowered.",                  # never changed, held noun
    "The running figure for cars inside is not reset when the day rolls over.",      # negated change, held noun
    "Nothing ever takes them back off the count when they drive out.",               # nothing <verb>s them
    "The occupancy tally ends up one car higher with each departure.",               # what a held thing ends up
    "The departure counter never moves.",                                             # a role only a program has
    "Leftover entries from an earlier log line skew the figure.",                    # stale data
])
def test_a_value_attributed_to_what_the_program_holds_is_state(hint: str) -> None:
    assert held_value_reasons(hint), hint
    assert "state" in rules(hint, 2)


@pytest.mark.parametrize("hint", [
    "The printed peak is never shown for the second log.",        # of the output: the symptom
    "Some cars are never parked for long.",                       # a fact of the input, no held quantity
    "The last line is never reached on the largest test.",        # control flow, not a held value
    "The result you print is too large on most logs.",            # the output, by a relative clause of printing
    "It prints one number where the expected output has another.",
])
def test_the_symptom_and_the_input_are_no_held_value(hint: str) -> None:
    assert not held_value_reasons(hint), hint


@pytest.mark.parametrize("hint", [
    "The peak is too low. Logs ending with several departures come out wrong.",      # a class as failing subject
    "Is it possible that garages with no arrivals at all are where it goes wrong?",   # after "that"
    "Wrong on most logs, especially the ones where two cars arrive together.",       # a salient member
    "The answer differs for a log like 'in out in'.",                                 # a single input by example
    "The answer is off unless every car that arrives also leaves.",                  # an "unless" condition
])
def test_a_class_of_failing_inputs_is_an_input_pattern(hint: str) -> None:
    assert "input_pattern" in rules(hint, 1), hint


@pytest.mark.parametrize("hint", [
    "Lines of the output with large numbers come out wrong.",      # of the output
    "Several tests fail, including test 3.",                       # a test named, not an input class
    "The printed value looks like 7 when 8 is expected.",          # the output by example
])
def test_the_output_is_no_failing_class(hint: str) -> None:
    assert not failing_class_reasons(hint), hint


@pytest.mark.parametrize("hint", [
    "The number of logs read on the first line is never used after that.",     # a line of the input
    "The last line of the output shows a number that is one too small.",       # a line of the output
    "Log 4 is the only test where a car leaves twice, and it fails.",          # a test case, not a condition
])
def test_a_line_or_test_of_the_data_is_no_location(hint: str) -> None:
    assert "location" not in rules(hint, 2), hint


@pytest.mark.parametrize("hint", [
    "The last line is where the peak goes wrong.",                             # the program's last line
    "The test in the loop is the suspect.",                                    # a condition test, placed
    "Look at the first line that updates the count.",
])
def test_a_line_or_test_of_the_program_is_still_a_location(hint: str) -> None:
    assert "location" in rules(hint, 2), hint


@pytest.mark.parametrize("hint", [
    "Each new log line replaces the count instead of adding to it.",                  # destroyed where it should grow
    "The program only remembers the latest arrival.",                                 # only keeps
    "The peak is not accumulated across log lines.",                                  # not accumulated
    "The figure it holds for the garage never exceeds one car.",                      # held, after its noun ("it")
    "Its record of each car is thrown out on every line.",                            # a possessive record
    "The totals from before are gone by the last line.",                              # destroyed, held noun
    "Spots used by an earlier car remain taken for the next one.",                    # state outliving its scope
    "The program still believes the garage is empty after a departure.",             # the program's belief
    "A car's spot is never released when it leaves.",                                 # a mark never undone
])
def test_more_ways_of_saying_what_the_program_holds_are_state(hint: str) -> None:
    assert "state" in rules(hint, 2), hint


@pytest.mark.parametrize("hint", [
    "Repeated plates are where the peak goes wrong.",                 # a featured plural, failing
    "Midnight departures trip the program up.",                       # any modifier of an opening plural
    "With two arrivals for one car, the printed peak is off.",        # a quantity per one thing
    "Any log with a departure first goes wrong.",                     # a quantified subject with a property
    "Only logs without departures come out right.",                   # the passing class characterised
    "It fails on logs with several cars arriving together.",          # a quantity as the property
])
def test_more_ways_of_characterising_the_failing_inputs_are_input_patterns(hint: str) -> None:
    assert "input_pattern" in rules(hint, 1), hint


@pytest.mark.parametrize("hint", [
    "The number of cars comes out too high.",                         # a measure of the output
    "Some tests fail on the peak.",                                   # tests
    "Printed peaks come out wrong on two logs.",                      # the output
    "The count printed for the third test is off by one.",            # a test case (no location either)
])
def test_the_output_and_the_tests_are_no_class_of_inputs(hint: str) -> None:
    assert not (rules(hint, 1) & {"input_pattern", "location"}), hint
