"""The leakage rules' revision 11 classes (issue 24, item 1: precision on hints never seen), on
sentences written for these tests in domains of their own, not the labelled sets': the candidate's own
statement cited as a place, a test's input written as a call of the problem's function, the problem's
own quantities in arithmetic; each with the neighbours that must stay code."""

from __future__ import annotations

from pairbench_async.protocol.evidence import Evidence
from pairbench_async.protocol.leakage import HiddenData, rule_reasons
from pairbench_async.protocol.leakage_structure import data_fragments, program_shape, quoted_spans

STOCK_PROBLEM = ("Write a function restock(shelf, limit) that takes a list of item counts and tops each "
                 "count up to limit, returning how many items were added in total; counts above limit stay.")
STOCK = """\
def restock(shelf, limit):
    added = 0
    for i in range(len(shelf)):
        if shelf[i] <= limit:
            added += limit - shelf[i]
        shelf[i] = limit
    return added
"""
STOCK_REFERENCE = """\
def restock(shelf, limit):
    added = 0
    for i in range(len(shelf)):
        if shelf[i] < limit:
            added += limit - shelf[i]
            shelf[i] = limit
    return added
"""
TILES_PROBLEM = "Read n and print an n by n board of tiles, each row as one line."
TILES = "n = int(input())\nboard = [['.'] * n] * n\nfor row in board:\n    print(''.join(row))\n"


def rules(hint: str, level: int, program: str = STOCK, problem: str = STOCK_PROBLEM,
          reference: str = STOCK_REFERENCE) -> set[str]:
    reasons = rule_reasons(hint, level, Evidence(problem=problem), program, HiddenData(reference=reference))
    return {reason.split(":", 1)[0] for reason in reasons}


# --------------------------------------------------------------------------- a statement cited as a place


def test_the_candidates_statement_cited_as_a_place_is_a_location_not_code() -> None:
    for hint in ("Have a second look at `if shelf[i] <= limit`; is that the branch you meant to take?",
                 "The `shelf[i] = limit` line runs for every count, even ones already above the limit.",
                 "Right after `added += limit - shelf[i]` the count is overwritten whatever it was."):
        assert "code" not in rules(hint, 4), hint
        assert "location" in rules(hint, 3), hint


def test_a_statement_told_to_write_or_not_the_candidates_stays_code() -> None:
    # told to write it
    assert "code" in rules("Write `shelf[i] = limit` inside the if, not after it.", 6)
    # not the candidate's statement: the patch itself
    assert "code" in rules("Look at `if shelf[i] < limit` instead.", 4)
    # not set off as a citation: a statement in prose is still code
    assert "code" in rules("The shelf[i] = limit line is wrong.", 4)


def test_a_span_of_the_candidates_code_is_a_quote_unless_written() -> None:
    hint = "Every row is the same list, because `[['.'] * n] * n` copies one reference n times."
    assert "code" not in rules(hint, 5, TILES, TILES_PROBLEM, "")
    assert "location" in rules(hint, 3, TILES, TILES_PROBLEM, "")
    assert quoted_spans(hint, program_shape(TILES, "")) == ["`[['.'] * n] * n`"]
    assert "code" in rules("Use `[['.'] * n for _ in range(n)]` for the board.", 6, TILES, TILES_PROBLEM, "")
    assert "code" in rules("Use `[['.'] * n] * n` elsewhere too.", 6, TILES, TILES_PROBLEM, "")


# --------------------------------------------------------------------------- a test's input as a call


def test_a_call_of_the_problems_function_on_literals_is_an_input_not_code() -> None:
    hint = "restock([7, 2], 5) should give 3, but it gives 3 and also lowers the first count to 5."
    assert "code" not in rules(hint, 2)
    # below L2 it shows a failing input, which L2 first may
    assert "input_pattern" in rules(hint, 1)
    assert data_fragments(hint, program_shape(STOCK, STOCK_REFERENCE), STOCK_PROBLEM) == ["restock([7, 2], 5)"]


def test_a_call_on_names_or_of_a_function_the_problem_does_not_name_stays_code() -> None:
    assert "code" in rules("restock(shelf, limit - 1) is what the loop should call.", 4)
    assert "code" in rules("Call restock([7, 2], 5) again before returning.", 6)
    assert "code" in rules("Return helper([7, 2], 5) from the loop.", 4, STOCK + "def helper(a, b):\n    return 0\n")


# --------------------------------------------------------------------------- the problem's own quantities


def test_arithmetic_on_the_problems_own_words_is_the_specification_not_code() -> None:
    assert "code" not in rules("After the call every count must be at least limit - 0, and the total "
                               "returned equals limit * 2 on a shelf of two empty counts.", 5)
    # a program name the problem does not use is the program's code ("added" is one of the problem's words)
    assert "code" not in rules("The total should be added + limit here.", 5)
    assert "code" in rules("The total should be i + limit here.", 5)
    # subscripted, it is the program's code whatever the words
    assert "code" in rules("Every count wants shelf[i] < limit here.", 5)


# --------------------------------------------------------------------------- direction: a change, not a description

ORBIT_PROBLEM = ("Given n planets with their orbit periods in days, print the first day on which every planet is "
                 "back at its starting point; a planet's orbit is a cycle of its period.")
ORBIT = """\
n = int(input())
periods = [int(input()) for _ in range(n)]
day = max(periods)
while any(day % p for p in periods):
    day += 1
print(day)
"""


def orbit(hint: str, level: int) -> set[str]:
    return rules(hint, level, ORBIT, ORBIT_PROBLEM, "")


def test_an_obligation_laid_on_a_thing_of_the_problem_is_no_direction() -> None:
    assert "direction" not in orbit("Every planet has to be back at its start on the same day, not just the slowest.", 5)
    assert "direction" not in orbit("Each orbit must begin again from zero once a cycle is over.", 5)
    # laid on the program or its names, it asks for a change
    assert "direction" in orbit("The day counter has to be started from 1, not from the longest period.", 5)
    assert "direction" in orbit("day must begin at 1 instead.", 5)
    # ... or when the rest of the clause names the program, or orders processing steps
    assert "direction" in orbit("Each planet's next visit must become day + 1 after a miss.", 5)
    assert "direction" in orbit("The planets have to be sorted before they are combined.", 5)


def test_a_way_of_seeing_the_problem_is_no_direction_but_a_change_of_the_program_is() -> None:
    assert "direction" not in orbit("Treat each orbit as a cycle: the answer is a day every period divides.", 5)
    assert "direction" not in orbit("Treat the planet as done once its cycle is over.", 5)
    assert "direction" in orbit("Treat the periods list as a set and dedupe it.", 5)
    assert "direction" in orbit("Treat day as a multiple of the largest period and step it by that.", 5)


def test_an_operand_that_is_a_word_is_no_expression_asked_for() -> None:
    assert "direction" not in orbit("The list of periods has to be complete - n values, one per planet.", 5)
    assert "direction" in orbit("The start should be day + 1 after each miss.", 5)


def test_a_modal_or_a_request_to_look_points_and_asks_no_change() -> None:
    hint = "You might want to look at how the periods get combined inside the loop."
    assert "direction" not in orbit(hint, 4)
    assert "location" in orbit(hint, 3)
    assert "direction" not in orbit("Could you take another look at the loop's condition?", 4)
    assert "direction" in orbit("You might want to step the day by the largest period.", 5)
    assert "direction" in orbit("Could you increase the day by the largest period?", 5)


# --------------------------------------------------------------------------- concept: a rule, not a test or a symptom

LEDGER_PROBLEM = ("Write a function settle(book, moves) that applies each move (payer, payee, cents) to the dict "
                  "book; a move the payer cannot cover is declined and leaves book as it was.")


def ledger(hint: str, level: int) -> set[str]:
    program = ("def settle(book, moves):\n    for payer, payee, cents in moves:\n        book[payee] += cents\n"
               "        if book[payer] >= cents:\n            book[payer] -= cents\n    return book\n")
    return rules(hint, level, program, LEDGER_PROBLEM, "")


def test_what_a_failing_test_does_twice_is_its_input_not_a_rule() -> None:
    assert "concept" not in ledger("The failing test reuses one book for three settle calls in a row.", 2)
    # laid on the problem's things, the same multiplicity is the rule
    assert "concept" in ledger("Each cent may be used at most once across the moves.", 2)


def test_a_norm_conceded_against_what_the_program_does_is_the_symptom() -> None:
    assert "concept" not in ledger("After a declined move the payee's balance still grows, even though nothing "
                                   "should be touched.", 3)
    # on its own, the norm is the rule
    assert "concept" in ledger("A declined move must not change any balance at all.", 3)


def test_a_norm_verb_is_a_whole_word() -> None:
    # "should equality ...": a question about a comparison, not "should equal"
    assert "concept" not in ledger("Would it be the comparison or should equality settle it?", 4)
    assert "concept" in ledger("The payer's balance should equal what it was before a declined move.", 4)


def test_a_builtins_name_with_a_remark_in_parentheses_is_no_call() -> None:
    assert "code" not in orbit("The day you print (the first common one) is too late on most tests.", 1)
    assert "code" not in orbit("Fold the periods over the whole list (a common multiple is associative).", 6)
    assert "code" in orbit("It would be right with print(day - max(periods)) at the end.", 1)
    assert "code" in orbit("It prints max (periods) where it should not.", 4)
