"""The leakage rules' revision 18 classes (issue 24: precision on hints never seen), on sentences written for
these tests in a domain of their own (a greenhouse watering its beds in rounds), not the labelled sets'. Each class
is broad and structural: a span is code only if it writes something the candidate's program lacks; a clause whose
subject is what the program holds or shows is state or the symptom, and a norm over the problem's world is the
concept. Each test holds a sentence revision 17 rejected (so it fails without the change) and a neighbour the
rules must still reject."""

from __future__ import annotations

from pairbench_async.protocol.evidence import Evidence
from pairbench_async.protocol.leakage import HiddenData, rule_reasons

PROBLEM = ("A greenhouse waters its beds in rounds, two beds at a time. Read the beds' names, one a line; with an "
           "odd number of beds a spare bed is added. Print each round's pairs, and print each bed's water after "
           "all rounds.")
PROGRAM = ("import sys\n\n\ndef main():\n    beds = [line.strip() for line in sys.stdin]\n"
           "    total = len(beds) - 1\n    if len(beds) % 2:\n        beds.append('spare')\n"
           "    dry = [b for b in beds]\n    for r in range(total):\n        if dry[0] < r: dry.pop(0)\n"
           "        print(r, dry[0], dry[-1])\n\n\nmain()\n")
REFERENCE = ("import sys\n\n\ndef main():\n    beds = [line.strip() for line in sys.stdin]\n"
             "    if len(beds) % 2:\n        beds.append('spare')\n    total = len(beds) - 1\n"
             "    dry = [b for b in beds]\n    for r in range(total):\n        if dry[0] <= r: dry.pop(0)\n"
             "        print(r, dry[0], dry[-1])\n\n\nmain()\n")


def rules(hint: str, level: int, reference: str = REFERENCE) -> set[str]:
    """The rules that reject ``hint`` (with ``reference`` as the hidden correct program)."""
    reasons = rule_reasons(hint, level, Evidence(problem=PROBLEM), PROGRAM, HiddenData(reference=reference))
    return {reason.split(":", 1)[0] for reason in reasons}


def test_a_quote_of_the_candidate_with_an_ellipsis_is_a_place_not_code() -> None:
    assert rules("Check the `if dry[0] ...: dry.pop(0)` test inside the loop.", 4) == set()
    assert rules("Look at the `total = ...` line.", 3) == {"location"}
    # asked to be edited, or holding what the program lacks, it is code
    assert "code" in rules("Drop the `if dry[0] ...: dry.pop(0)` test and move it.", 4)
    assert "code" in rules("Check the `if dry[0] ...: dry.popleft()` test inside the loop.", 4)


def test_the_quote_rules_run_never_joins_a_public_span_to_the_prose_around_it() -> None:
    # "...line" + "total = len(beds)" squashes to "...etotallenbeds", as the reference's "...'spare')\n total = ..."
    assert rules("Suspicious line: `total = len(beds) - 1`. The pairing loop looks fine.", 4) == set()
    # the same words outside a span are one run with the prose and still repeat the reference
    assert "quote" in rules("Suspicious line: total = len(beds) - 1. The pairing loop looks fine.", 4)


def test_emphasis_and_slashed_word_lists_are_prose() -> None:
    assert "code" not in rules("Look at the loop header. The deep / shallow / raised branches themselves look "
                               "fine.", 4)
    assert "code" not in rules("It shows up as soon as two beds are *not* neighbours of each other.", 2)
    # operands the program names keep the operator
    assert "code" in rules("It shows up when total / beds / r is large.", 4)


def test_a_membership_compared_or_with_a_stranded_preposition_describes_the_instance() -> None:
    assert "concept" not in rules("A bed stays a watering candidate one round longer than it actually belongs "
                                  "to the round.", 3)
    assert "concept" not in rules("The rounds hold the wrong beds: beds show up in rounds they clearly don't "
                                  "belong to.", 1)
    # a membership with its object, as a rule, is the concept
    assert "concept" in rules("A bed belongs to a round only while its soil is dry.", 3)
    assert "concept" in rules("Only beds that are dry belong to the round.", 3)


def test_a_loss_denied_is_no_state() -> None:
    assert "state" not in rules("Some beds get too much water and others too little. The amounts still add up "
                                "to the total, so nothing is lost; it is just split wrongly.", 1)
    assert "state" not in rules("The spare bed is not lost; it is paired with the wrong bed.", 2)
    # a loss asserted of what the program holds is state
    assert "state" in rules("The first bed's reading is lost before the second round.", 2)


def test_a_modal_with_a_generic_subject_is_a_norm_over_the_world() -> None:
    assert "direction" not in rules("Each round must water exactly two beds; an outage should only change a "
                                    "round if it changes which plants need water.", 5)
    # a construct of code as the generic subject, or the program, asks for a change
    assert "direction" in rules("Each round must water exactly two beds; an index should only change when a "
                                "bed is watered.", 5)
    assert "direction" in rules("Each round must water two beds; your loop should only change when a bed is "
                                "watered.", 5)


def test_an_exact_value_for_a_quoted_statement_is_a_change_not_the_rule() -> None:
    hint = "The bug is in `if dry[0] < r: dry.pop(0)`. The bound should be r itself."
    assert "concept" not in rules(hint, 4)
    assert "direction" in rules(hint, 4)
    # with no statement quoted before it, the same modal is a norm over the problem's world
    assert "concept" in rules("The pairing is wrong. The bound should be r itself.", 4)
