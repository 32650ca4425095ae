"""The leakage rules' revision 16 classes (issue 24: precision on hints never seen), on sentences written for
these tests in a domain of their own (a bakery's ovens and orders), not the labelled sets': each class is what
a span or a clause's subject is; each test holds a sentence revision 15 rejected (so it fails without the
change) and a neighbour the rule must still reject."""

from __future__ import annotations

from pairbench_async.protocol.evidence import Evidence
from pairbench_async.protocol.leakage import HiddenData, rule_reasons

PROBLEM = ("Read the day's orders (a customer, a loaf kind and a count) and print, for each oven, the loaves it "
           "bakes; `bake_plan(orders)` returns the plan. Each oven holds at most 12 loaves.")
PROGRAM = ("def bake_plan(orders):\n    plan = {}\n    load = 0\n    for who, kind, count in orders:\n"
           "        oven = load // 12\n        plan.setdefault(oven, []).append(kind)\n        load = count\n"
           "    return plan\n")


def rules(hint: str, level: int, problem: str = PROBLEM, program: str = PROGRAM) -> set[str]:
    """The rules that reject ``hint`` (no reference)."""
    reasons = rule_reasons(hint, level, Evidence(problem=problem), program, HiddenData(reference=""))
    return {reason.split(":", 1)[0] for reason in reasons}


def test_a_span_after_a_label_framing_a_test_is_its_data() -> None:
    assert "code" not in rules("Failing tray: `R R _ / W _ _` with rye first. Expected 2 ovens, got 3.", 2)
    assert "code" not in rules("Scenario: `stock = {'rye': 8}`. Two orders of 5 rye are both accepted.", 2)
    # the same label before a statement, or no label, is still code
    assert "code" in rules("Failing tray: `load += count` runs before the check.", 2)
    # (revision 19: unlabelled, a tray picture is still data below L3, not code: it is no Python, and Table II's
    # L2 reveals the failing input; this line asserted "code" for revision 16's class boundary)
    assert "code" not in rules("The tray `R R _ / W _ _` with rye first gives 3 ovens.", 2)
    assert "code" in rules("The tray `load = R + W` with rye first gives 3 ovens.", 2)


def test_a_span_the_program_printed_or_should_print_is_output() -> None:
    assert "code" not in rules("Expected a line of the form `Oven 2 full`, but your program printed the loaf "
                               "counts (`Oven 2: 14 loaves`) instead.", 1)
    # an expression after the same cue is still code
    assert "code" in rules("Expected the plan, but your program printed `load // 12 + 1` loaves.", 1)


def test_a_norm_set_against_what_the_program_keeps_is_state() -> None:
    assert "concept" not in rules("Each oven's entry should hold every loaf baked in it, but your plan keeps "
                                  "just one loaf per oven.", 3)
    # a norm with no observation after it is still the rule
    assert "concept" in rules("Each oven's entry should hold every loaf baked in it, whatever the order.", 3)


def test_at_l5_an_invariant_or_a_definition_stated_imperatively_is_the_concept() -> None:
    assert "direction" not in rules("Keep the invariant that every oven holds at most 12 loaves at any time.", 5)
    assert "direction" not in rules("Treat each loaf order as a 0/1 item: it goes in one oven whole.", 5)
    assert "direction" not in rules("Average rise for a whole batch is total height divided by loaves baked.", 5)
    # a change to the program stated the same way is still a direction
    assert "direction" in rules("Keep `load` as a running total across orders.", 5)
    assert "direction" in rules("Treat load as a running sum and add count to it.", 5)
    # below L5 the invariant is a direction, not the level's concept
    assert "direction" in rules("Keep the invariant that every oven holds at most 12 loaves.", 4)


def test_an_example_after_e_g_is_no_order() -> None:
    assert "direction" not in rules("It fails when one order fills more than an oven, e.g. count 20 with "
                                    "`[('ann', 'rye', 20)]` should give 2 ovens.", 2)
    assert "direction" in rules("It fails when one order fills more than an oven; count it in every oven it "
                                "fills.", 2)


def test_an_adjective_of_fault_heading_a_noun_phrase_is_a_symptom() -> None:
    assert "direction" not in rules("Wrong oven numbers on a few lines.", 1)
    assert "direction" in rules("Wrong the numbering on purpose and see.", 1)


def test_a_contrast_that_places_the_fault_is_a_location() -> None:
    assert "concept" not in rules("Look at `load`; the problem is in that update, not in how ovens are "
                                  "numbered or how the plan is stored.", 4)
    # a contrast that states the problem's rule is still the concept
    assert "concept" in rules("An oven holds twelve loaves in total, not per kind.", 4)


CLOCKED = ("A kiln runs each batch for its firing time; after each batch it gains a cooling allowance. Read the "
           "firings and print the first batch that overruns. Each call of `fire` handles one batch.")


def test_a_construct_word_the_problem_uses_as_a_noun_names_no_region() -> None:
    program = "def fire(batches, allowance):\n    left = 0\n    for b in batches:\n        left -= b\n    return left\n"
    assert "location" not in rules("The failing batches overrun the kiln by less than the allowance, after the "
                                   "call returns.", 2, CLOCKED, program)
    assert "location" not in rules("Results checked after the call show batches that never ran.", 1, CLOCKED,
                                   program)
    # a construct word the problem does not use as a noun is still a region of the program
    assert "location" in rules("The failing batches overrun the kiln; look at the loop that subtracts.", 2,
                               CLOCKED, program)
    assert "location" in rules("The comparison inside the loop is off.", 2, CLOCKED, program)


def test_a_quoted_word_as_a_notion_is_its_sense_not_the_identifier() -> None:
    program = "def order(deps):\n    seen = set()\n    return [d for d in deps if d not in seen]\n"
    assert "location" not in rules('The ordering keeps a single notion of "seen", so it cannot tell a loaf in '
                                   "the oven from one already out.", 3, PROBLEM, program)
    assert "location" in rules('The ordering keeps a single set, `seen`, for both.', 3, PROBLEM, program)


def test_at_l1_a_condition_on_an_input_thing_that_takes_a_measure_picks_out_inputs() -> None:
    assert "input_pattern" in rules("When a batch takes a little longer than the kiln has left, no overrun is "
                                    "reported.", 1, CLOCKED)
    assert "input_pattern" not in rules("No overrun is ever reported.", 1, CLOCKED)


def test_subscripts_in_a_sums_notation_are_mathematics_at_l5() -> None:
    program = "def mix(a, b):\n    out = [0] * (len(a) + len(b))\n    for i, x in enumerate(a):\n" \
              "        for j, y in enumerate(b):\n            out[i + j] = x * y\n    return out\n"
    assert "code" not in rules("Flour of blend k is the sum of a[i]*b[j] over all i + j = k.", 5, PROBLEM, program)
    # the same subscripts as an assignment, or outside a sum's notation, are code
    assert "code" in rules("Flour of blend k is `out[i + j] += a[i]*b[j]` for each pair.", 5, PROBLEM, program)
    assert "code" in rules("Flour of blend k is a[i]*b[j] over all i + j = k.", 5, PROBLEM, program)


def test_at_l1_a_span_naming_the_problems_function_is_the_subject_not_code() -> None:
    assert "code" not in rules("`bake_plan()` gives fewer ovens than expected for some days.", 1)
    # a span with arguments, or a function only the program has, is still code
    assert "code" in rules("`bake_plan(orders[1:])` gives fewer ovens than expected.", 1)
    assert "code" in rules("`plan[oven] += 1` gives fewer ovens than expected.", 1)


def test_a_span_in_the_problems_own_notation_is_its_data() -> None:
    problem = "A stencil holds letters, `?` which matches any one letter, and `+` after a letter for one or more."
    program = "def fits(s, p):\n    i = 0\n    return i == len(s)\n"
    assert "code" not in rules("Let the plus branch try consuming the whole `c+` run before giving up.", 6,
                               problem, program)
    # a span with a program's name or an operator the problem does not quote is code
    assert "code" in rules("Let the plus branch try `i+` before giving up.", 6, problem, program)
    assert "code" in rules("Let the plus branch try `c+=` before giving up.", 6, problem, program)


def test_the_program_failing_to_account_for_a_thing_is_state() -> None:
    assert "concept" not in rules("When the orders run out, the planner doesn't account for the oven that could "
                                  "still take more loaves.", 3)
    assert "state" in rules("When the orders run out, the planner stops considering the last oven.", 2)
    # told of the problem, with no program failing to keep it, the rule is still the concept
    assert "concept" in rules("An oven that could still take more loaves must be filled first.", 3)


def test_a_lone_name_after_an_output_verb_is_still_the_programs() -> None:
    assert "location" in rules("Expected `load` to start again at each oven, but it carries over.", 3)
