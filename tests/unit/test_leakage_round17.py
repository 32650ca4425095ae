"""The leakage rules' revision 17 classes (issue 24: precision on hints never seen), on sentences written for
these tests in a domain of their own (a ferry loading cars onto decks), not the labelled sets': each class is
what a span or a clause's subject is; each test holds a sentence revision 16 rejected (so it fails without the
change) and a neighbour the rule must still reject."""

from __future__ import annotations

from pairbench_async.protocol.evidence import Evidence
from pairbench_async.protocol.leakage import HiddenData, rule_reasons

PROBLEM = ("A ferry has several decks of equal length. Read the cars' lengths in the order they queue and print, "
           "for each deck, the cars it carries; `board(cars, size)` returns the cars that fit on one deck, in "
           "queue order, a car that does not fit waiting for the next sailing.")
PROGRAM = ("from collections import deque\n\n\ndef board(cars, size):\n    queue = deque(cars)\n    deck = []\n"
           "    space = size\n    while queue:\n        if sum(deck) + queue[0] > size:\n            queue.popleft()\n"
           "            continue\n        deck.append(queue[0])\n        queue.popleft()\n        space = size\n"
           "    return deck\n")
REFERENCE = ("from collections import deque\n\n\ndef board(cars, size):\n    queue = deque(cars)\n    deck = []\n"
             "    space = size\n    while queue:\n        if sum(deck) + queue[0] > size - 1:\n"
             "            queue.popleft()\n            continue\n        deck.append(queue.popleft())\n        space -= deck[-1]\n    return deck\n")


def rules(hint: str, level: int, reference: str = "") -> set[str]:
    """The rules that reject ``hint`` (with ``reference`` as the hidden correct program)."""
    reasons = rule_reasons(hint, level, Evidence(problem=PROBLEM), PROGRAM, HiddenData(reference=reference))
    return {reason.split(":", 1)[0] for reason in reasons}


def test_an_l1_sentence_on_what_the_program_gives_back_is_the_symptom() -> None:
    assert "state" not in rules("Some of the decks you return still contain cars that overflow them.", 1)
    assert "state" not in rules("Your output only fills the first deck; the other decks keep their original "
                                "order even though the expected plan has them filled.", 1)
    # a reason or a turn to the program after it still tells what the program keeps
    assert "state" in rules("Your output is wrong because the program keeps only the last car.", 1)
    assert "state" in rules("Your output only fills the first deck; it never remembers the space already used.",
                            1)


def test_an_instance_having_an_answer_is_the_expected_output_not_an_input_kind() -> None:
    assert "input_pattern" not in rules("You print no cars for some sailings that do have a solution.", 1)
    # a kind of input named by its feature is still the input pattern
    assert "input_pattern" in rules("You print no cars for sailings whose first car is longer than a deck.", 1)


def test_a_modal_coordinated_with_a_clause_on_the_world_takes_its_subject() -> None:
    hint = "The failing tests are the ones where a car no longer fits on the deck and has to go to the next sailing."
    assert "direction" not in rules(hint, 2)
    assert "direction" not in rules("A car that does not fit stays in the queue and must wait for the next "
                                    "sailing.", 4)
    # the program as the earlier clause's subject, or a change verb, is still a repair
    assert "direction" in rules("Your loop drops the car and has to keep it in the queue.", 4)
    assert "direction" in rules("A car that does not fit stays in the queue and must be appended to `deck` "
                                "later.", 4)


def test_a_program_name_read_as_the_worlds_noun_leaves_an_l5_norm_a_norm() -> None:
    assert "direction" not in rules("A deck with gaps is still one deck; a deck should only stop loading when "
                                    "the next car is longer than the remaining space.", 5)
    # the same name written bare, as code, is the program's
    assert "direction" in rules("A deck should only stop loading when space drops below the car's length.", 5)


def test_arithmetic_words_are_prepositions_not_imperatives() -> None:
    assert "direction" not in rules("For a deck that is full, the waste is the length before the last car plus "
                                    "its overhang, minus the deck length.", 5)
    # the verb of the same subtraction is still an order
    assert "direction" in rules("Subtract one metre per gap from `space`.", 5)


def test_what_a_value_the_program_works_out_leaves_out_is_state() -> None:
    assert "concept" not in rules("The free space you compute for a deck doesn't take into account which cars "
                                  "were already turned away.", 3)
    # the program itself not taking a fact into account is still the rule
    assert "concept" in rules("Your code doesn't take into account that a car cannot be split between decks.", 3)


def test_a_hedged_guess_at_the_programs_record_is_state() -> None:
    hint = "It looks like a car counts as seen on every deck as soon as it has been seen on one."
    assert rules(hint, 2) == {"state"}
    # the world's classification, unhedged, is still the concept
    assert "concept" in rules("A car counts as loaded only when its whole length fits on the deck.", 2)


def test_a_reference_run_never_crosses_a_code_spans_edge() -> None:
    hint = "Cars that fit are taken off the queue (`queue.popleft()`) after the deck has already looked at them."
    assert "code" not in rules(hint, 3, REFERENCE)
    # the reference's line written out is still its patch
    assert "code" in rules("Write `deck.append(queue.popleft())` there.", 6, REFERENCE)


def test_a_cited_statement_of_the_candidate_is_a_place_even_where_the_reference_changes_it() -> None:
    hint = "Cars that exactly fill the deck are turned away, because of the `if sum(deck) + queue[0] > size:` line."
    assert rules(hint, 3, REFERENCE) == {"location"}
    assert "code" not in rules("Look at the `space = size` line inside the loop.", 3, REFERENCE)
    # an edit asked of the statement makes it the patch
    assert "code" in rules("Drop the `if sum(deck) + queue[0] > size:` line.", 3, REFERENCE)
