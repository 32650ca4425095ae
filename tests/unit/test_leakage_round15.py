"""The leakage rules' revision 15 classes (issue 24: precision on hints never seen), on sentences written for
these tests in a domain of their own (a ferry's timetable and tickets), not the labelled sets': each class is
what a span or a clause's subject is, each test holds a sentence revision 14 rejected (so the test fails
without the change) and a neighbour the rule must still reject."""

from __future__ import annotations

from pairbench_async.protocol.evidence import Evidence
from pairbench_async.protocol.leakage import HiddenData, validate_hint


def bare(hint: str, level: int, program: str = "") -> set[str]:
    """The rules that reject ``hint`` (with the candidate's ``program``, if any, and no reference)."""
    reasons = validate_hint(hint, level, Evidence(problem=""), program, HiddenData(reference=""))
    return {reason.split(":", 1)[0] for reason in reasons}


def test_a_literal_of_the_data_in_backticks_is_no_code() -> None:
    assert "code" not in bare('It shows when a sailing leaves at midnight: a row `("Sun", "00:00", 4)` '
                              "and a query for Sunday come back empty.", 2)
    assert "code" not in bare('It fails on ports with two-letter codes, for example `fares = {"AB": 3, "AC": 5}` '
                              "with a trip from AB.", 2)
    # a name of the program outside the strings, an empty container or a method is still code
    assert "code" in bare('It fails when `fares["AB"] = 3` runs twice.', 2)
    assert "code" in bare("Start from `fares = {}` before the loop.", 4)


def test_an_example_and_its_expected_output_is_no_rule_or_change() -> None:
    assert "concept" not in bare("Only return tickets fail: `12/30` should be accepted and `7-9/2` should match "
                                 "7 and 9.", 2)
    assert "direction" not in bare("The failing cases are long routes. For example, '4-0-0-2-7' should convert "
                                   "to '40027X'.", 2)
    # the same predicate on a thing of the program is still a rule or a change
    assert "concept" in bare("A return ticket should be valid for thirty days, not just one.", 2)
    assert "direction" in bare("Each sailing should reset the seat count.", 2)


def test_a_one_letter_example_is_data_even_if_the_program_holds_that_name() -> None:
    program = "def fare(q):\n    return len(q)\n"
    assert "location" not in bare("It fails when the route has one stop, for example `aaaa` or just `q`.", 2,
                                  program)
    # cited as a place, the same name is a quote of the candidate
    assert "location" in bare("The `q` in `fare` is where it goes wrong.", 2, program)
