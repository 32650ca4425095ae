"""The leakage rules' revision 15 classes (issue 24: precision on hints never seen), on sentences written for
these tests in a domain of their own (a ferry's timetable and tickets), not the labelled sets': each class is
what a span or a clause's subject is, each test holds a sentence revision 14 rejected (so the test fails
without the change) and a neighbour the rule must still reject."""

from __future__ import annotations

from pairbench_async.protocol.evidence import Evidence
from pairbench_async.protocol.leakage import HiddenData, rule_reasons


def bare(hint: str, level: int, program: str = "") -> set[str]:
    """The rules that reject ``hint`` (with the candidate's ``program``, if any, and no reference)."""
    reasons = rule_reasons(hint, level, Evidence(problem=""), program, HiddenData(reference=""))
    return {reason.split(":", 1)[0] for reason in reasons}


def test_a_literal_of_the_data_in_backticks_is_no_code() -> None:
    assert "code" not in bare('It shows when a sailing leaves at midnight: a row `("Sun", "00:00", 4)` '
                              "and a query for Sunday come back empty.", 2)
    assert "code" not in bare('It fails on ports with two-letter codes, for example `fares = {"AB": 3, "AC": 5}` '
                              "with a trip from AB.", 2)
    # a name of the program outside the strings, an empty container or a method is still code
    assert "code" in bare('It fails when `fares["AB"] = 3` runs twice.', 2)
    assert "code" in bare("Start from `fares = {}` before the loop.", 4)
    # a span after "like" that the hint offers to write is code, not an example
    assert "code" in bare("Short routes fail; something like `fare - discount` would do instead.", 2)


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


#: a candidate and the reference that fixes it (the multiplication moved before the rounding)
CANDIDATE = ("def seat_index(deck):\n    n = 0\n    for ch in deck:\n"
             "        n = n * 26 + ord(ch) - 65\n    return n\n\n\n"
             "def book(adults, children, rate):\n    fare = round(rate)\n    fare = fare * adults + children\n"
             "    return fare\n")
REFERENCE = CANDIDATE.replace("    fare = round(rate)\n    fare = fare * adults + children\n",
                              "    fare = rate * adults + children\n    fare = round(fare)\n")


def judged(hint: str, level: int) -> set[str]:
    reasons = rule_reasons(hint, level, Evidence(problem=""), CANDIDATE, HiddenData(reference=REFERENCE))
    return {reason.split(":", 1)[0] for reason in reasons}


def test_a_pointing_verb_with_a_program_name_points_at_a_place() -> None:
    assert "direction" not in judged("Check `seat_index`, the loop that turns a deck letter into a number.", 4)
    # a check to add is still a direction
    assert "direction" in judged("Check for an empty deck in `seat_index` before looping.", 4)


def test_the_program_described_in_a_relative_clause_is_a_place() -> None:
    hint = "Focus on the two lines in `book` that call `round` and multiply by `adults + children`."
    assert judged(hint, 4) == set()
    # the same verb told as what the lines should do, or coordinated with a singular relative verb, is a change
    assert "code" in judged("Focus on the two lines in `book` that should multiply by `adults + children`.", 4)
    assert "direction" in judged("Look at the line that rounds the fare and multiply by the head count first.", 4)


def test_a_norm_set_against_what_happens_is_an_observation_for_direction_too() -> None:
    assert "direction" not in bare("Each sailing should have its own seat count, but a change to one sailing's count "
                                   "shows up on every sailing.", 3)
    # a modal or the reader in the contrast keeps it a direction
    assert "direction" in bare("Each sailing should have its own seat count, but you need a change to the list so "
                               "each gets a copy.", 3)


def test_at_l1_a_clause_about_the_expected_answer_picks_out_no_inputs() -> None:
    assert "input_pattern" not in bare("Your program prints SOLD OUT in cases where the ferry still has seats for "
                                       "the party.", 1)
    assert "input_pattern" not in bare("It reported no deck free when one should have been free.", 1)
    assert "input_pattern" not in bare("Your output doesn't match: on some lines the times are padded with zeros "
                                       "where the expected output has none.", 1)
    # a clause on the input itself is still the input pattern
    assert "input_pattern" in bare("Your program prints SOLD OUT in cases where the party has more than four "
                                   "people.", 1)


def test_at_l1_a_sentence_on_the_output_as_subject_is_the_symptom() -> None:
    assert "concept" not in bare("Some of the ticket codes returned by your program are not valid codes at all: "
                                 "they come back one digit too long.", 1)
    # a reason given for it may still be the rule
    assert "concept" in bare("Some of the ticket codes returned by your program are wrong because a return ticket "
                             "counts as two separate trips.", 1)


def test_a_contrast_of_two_places_is_a_location_not_the_rule() -> None:
    assert "concept" not in bare("The trouble lies in the line that fills the deck table, not in the search loop "
                                 "that looks for a free cabin.", 4)
    # a contrast of manner or extent is still the rule
    assert "concept" in bare("Fares are charged per cabin, not per passenger.", 4)
    assert "concept" in bare("A child fare applies under twelve, not just under ten.", 4)


def test_at_l5_a_way_of_thinking_and_a_generic_idiom_explain_the_concept() -> None:
    hint = "You need to reason about aliasing: `[v] * k` holds k references to the same v."
    assert judged(hint, 5) == set()
    # a change the reader is asked for, or the program's own names in the idiom, stay a direction and code
    assert "direction" in judged("You need to build each deck's list on its own.", 5)
    assert "code" in judged("You need to reason about aliasing: `[adults] * children` holds one list.", 5)
    # below L5 the idiom is still code
    assert "code" in judged(hint, 4)


def test_a_test_scenario_set_up_before_its_expected_output_is_no_direction() -> None:
    assert "direction" not in bare("Use a ferry with 2 decks and 1 cabin per deck: book 'A', then 'B'. Expected "
                                   "(1, 'cabin') for B, but you return None.", 2)
    # with no expected output after it, the same imperative is a change
    assert "direction" in bare("Use a list with 2 slots per deck.", 2)


def test_a_phrase_attached_to_a_verdict_on_inputs_is_how_they_fail() -> None:
    assert "concept" not in bare("Only routes with a stopover are affected, in both directions.", 2)
    # standing alone it is still the rule
    assert "concept" in bare("A route is valid in both directions.", 2)
