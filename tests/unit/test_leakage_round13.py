"""The leakage rules' revision 13 classes (issue 24: precision on hints never seen), on sentences written for
these tests in a domain of their own (a postfix calculator and a ticket queue), not the labelled sets': each
class narrows a rule to what its boundary reserves, and each test also holds a neighbour the rule must still
reject, so none of them can pass by the rule simply going quiet."""

from __future__ import annotations

from pairbench_async.protocol.evidence import Evidence
from pairbench_async.protocol.leakage import HiddenData, rule_reasons

CALC_PROBLEM = ("Write a function evaluate(tokens) that evaluates a postfix expression given as a list of tokens "
                "(integers and the operators + - * /) with a stack, where / is integer division that truncates "
                "toward zero, and returns the value left on the stack.")
CALC = """\
def evaluate(tokens):
    st = []
    for tok in tokens:
        if tok in '+-*/':
            rhs = st.pop()
            lhs = st.pop()
            if tok == '/':
                st.append(lhs // rhs)
            elif tok == '*':
                st.append(lhs * rhs)
            elif tok == '+':
                st.append(lhs + rhs)
            else:
                st.append(lhs - rhs)
        else:
            st.append(int(tok))
    return st[-1]
"""
CALC_REFERENCE = CALC.replace("st.append(lhs // rhs)", "st.append(int(lhs / rhs))")


def rules(hint: str, level: int, problem: str = CALC_PROBLEM, program: str = CALC,
          reference: str = CALC_REFERENCE) -> set[str]:
    reasons = rule_reasons(hint, level, Evidence(problem=problem), program, HiddenData(reference=reference))
    return {reason.split(":", 1)[0] for reason in reasons}


def bare(hint: str, level: int) -> set[str]:
    """The rules with no task at all (the wording classes alone)."""
    return rules(hint, level, "", "", "")


# --------------------------------------------------------------------------- code


def test_a_span_of_literals_and_operators_is_data_or_an_operator_not_code() -> None:
    assert "code" not in rules("The failing expressions divide numbers of opposite sign, e.g. `9 -4 /`.", 2)
    assert "code" not in rules("Python's `//` floors, whereas the problem's division truncates.", 4)
    assert "code" not in bare("The result of `-9 / 4` in the problem is -2.", 4)
    # a span with a name in it is still code
    assert "code" in bare("It should use `int(lhs / rhs)` here.", 6)
    assert "code" in bare("The bug is that `q = a // b` floors.", 4)


# --------------------------------------------------------------------------- input_pattern


def test_an_elliptical_condition_denies_the_output_not_a_property_of_the_input() -> None:
    for hint in ("The function reports two tickets as duplicates when they are not.",
                 "It says the queue is empty when it isn't.",
                 "Some results are marked as valid when they shouldn't."):
        assert "input_pattern" not in bare(hint, 1), hint
    # a condition with its own predicate on the input still picks the failing inputs out
    assert "input_pattern" in bare("The function reports two tickets as duplicates when they share a prefix.", 1)


def test_inputs_picked_out_by_their_verdict_are_the_output() -> None:
    assert "input_pattern" not in bare("Some tickets that should be reported as late are listed as on time.", 1)
    assert "input_pattern" not in bare("Expressions which are rejected as malformed are well formed.", 1)
    assert "input_pattern" in bare("Tickets that contain a dash are listed as on time.", 1)


# --------------------------------------------------------------------------- location


def test_a_placed_value_compared_in_quantity_is_an_observation() -> None:
    assert "location" not in rules("The value left on the stack after a division is one lower than it should be.", 3)
    assert "location" not in bare("The total kept after the last ticket is two higher than expected.", 3)
    # a construct said to be wrong, or pointed at, is still a place
    assert "location" in bare("The length check before appending is wrong.", 3)
    assert "location" in bare("Look at the stack after a division: its top is one lower than it should be.", 3)


def test_a_short_name_that_is_a_word_of_prose_or_maths_is_not_an_identifier() -> None:
    program = "def spread(xs):\n    day = 0\n    gcd = 1\n    for x in xs:\n        day += x\n    return day\n"
    problem = "Return the spread of the list."
    for hint in ("Some of the dates you print are one day late.", "The second number is right; the gcd is not."):
        assert "location" not in rules(hint, 1, problem, program, program), hint
    # quoted, cued, or an abbreviation that is no word, it is the program's name
    assert "location" in rules("The `day` variable is never reset.", 1, problem, program, program)
    assert "location" in rules("The day counter starts too high.", 1, problem, program, program)
    assert "location" in rules("cur stays 0.", 1, problem, "def f(a):\n    cur = 0\n    return cur\n",
                               "def f(a):\n    cur = 0\n    return cur\n")


# --------------------------------------------------------------------------- concept


def test_the_problem_cited_in_a_relative_clause_states_no_rule() -> None:
    assert "concept" not in bare("The tokens the function reads are not the tokens the problem defines.", 4)
    assert "concept" not in bare("The output differs from what the task expects on long queues.", 3)
    # the problem cited as the subject of its rule still states it
    assert "concept" in bare("The problem defines a ticket as late once its hour has passed.", 4)
    assert "concept" in bare("Tickets with a dash are not numbers.", 4)


def test_a_norm_set_against_what_happens_instead_is_the_symptom() -> None:
    for hint in ("The queue length should stay the same after a refused ticket, but it drops by one.",
                 "Each receipt must be its own list, but all of them share one.",
                 "The copy must be independent of the queue; here it is the same object."):
        assert "concept" not in bare(hint, 4), hint
    # a norm alone, or with a modal in the contrast, is still the rule
    assert "concept" in bare("Each receipt must be its own list.", 4)
    assert "concept" in bare("Each receipt must be its own list, but it may share tickets with the others.", 4)


def test_what_a_computed_value_can_be_is_state_and_a_domain_of_validity_is_a_rule() -> None:
    assert "concept" not in bare("The computed widths of the overlap can be negative, and the sign is lost.", 3)
    assert "concept" in bare("The answer can be negative when every reading is negative.", 4)
    assert "concept" in bare("Product over gcd equals the lcm only for exactly two numbers.", 3)


# --------------------------------------------------------------------------- direction


def test_testing_the_program_on_an_input_is_an_experiment_not_a_change() -> None:
    assert "direction" not in bare("Test it with an expression whose quotient is negative and inexact.", 2)
    assert "direction" not in bare("Try the function on two queues that differ only in their last ticket.", 3)
    # fed a changed program part, or told what to test for, it asks for a change
    assert "direction" in bare("Test it with the loop reversed.", 4)
    assert "direction" in bare("Test divisibility by 15 first.", 4)


def test_a_class_named_with_its_complement_picks_no_input_out() -> None:
    assert "input_pattern" not in bare("The program answers NO for a number that is negative, or YES for one that is "
                                       "not.", 1)
    assert "input_pattern" in bare("The program answers NO for a number that is negative.", 1)
