"""The leakage rules' third round of classes (issue 24, item 1): for each class two members that
are not fresh11's sentences, and the hard negatives it must still accept (a quoted candidate
expression at L4, the paper's own hedged L1 guess, a description of the program at L3)."""

from __future__ import annotations

from pairbench_async.protocol.evidence import Evidence
from pairbench_async.protocol.leakage import HiddenData, rule_reasons

GRAPH_PROBLEM = "Given an undirected graph with n vertices and m edges, print how many vertices vertex 1 can reach."
GRAPH = """\
n, m = map(int, input().split())
adj = [[] for _ in range(n + 1)]
for _ in range(m):
    u, v = map(int, input().split())
    adj[u].append(v)
seen = {1}
todo = [1]
while todo:
    x = todo.pop()
    for y in adj[x]:
        if y not in seen:
            seen.add(y)
            todo.append(y)
print(len(seen))
"""
WORDS_PROBLEM = "Given a line of words, print them joined by single dashes."
WORDS = 'w = input().split()\nprint("-".join(w[1:]))\n'
ROOT_PROBLEM = "Given an integer n, print the integer part of its cube root."
ROOT = "n = int(input())\nprint(int(n ** (1 / 3)))\n"


def rules(hint: str, level: int, program: str = GRAPH, problem: str = GRAPH_PROBLEM) -> set[str]:
    reasons = rule_reasons(hint, level, Evidence(problem=problem), program, HiddenData())
    return {reason.split(":", 1)[0] for reason in reasons}


def test_a_method_after_a_subscript_or_a_strings_method_is_one_quoted_candidate_expression() -> None:
    # quoted as a place: a location (accepted at L4, rejected below), never code
    assert rules("The loop where adj[u].append(v) fills the lists is the suspect.", 4) == set()
    assert rules("The loop where adj[u].append(v) fills the lists is the suspect.", 3) == {"location"}
    assert rules('Look at the "-".join(w[1:]) in the print.', 4, WORDS, WORDS_PROBLEM) == set()
    # told to write one the candidate lacks, it is code at every level
    assert "code" in rules("Also call adj[v].append(u) there.", 6)
    assert "code" in rules('Print "-".join(w) instead.', 6, WORDS, WORDS_PROBLEM)


def test_a_candidate_expression_of_one_letter_names_named_as_a_place_is_a_location() -> None:
    assert rules("The n ** (1 / 3) computation is off for big cubes.", 2, ROOT, ROOT_PROBLEM) == {"location"}
    assert rules("The n ** (1 / 3) computation is the suspect.", 4, ROOT, ROOT_PROBLEM) == set()
    # not named as a place, an expression of one-letter names is no location ("n - 1 lines")
    assert rules("It prints n - 1 lines where n are expected.", 1, WORDS, WORDS_PROBLEM) == set()


def test_a_cardinality_in_a_condition_on_the_input_is_an_input_pattern() -> None:
    assert rules("The count goes wrong as soon as a vertex has two or more neighbours.", 1) == {"input_pattern"}
    assert rules("It fails when there are more than one edge between the same pair.", 1) == {"input_pattern"}
    assert rules("It fails whenever a delivery arrives after the truck has left.", 1) == {"input_pattern"}
    # the same at L2 is the level's own information; a count of tests is no input feature
    assert rules("The count goes wrong as soon as a vertex has two or more neighbours.", 2) == set()
    assert rules("The printed count is too small on more than one test.", 1) == set()


def test_printer_is_a_noun_of_the_problem_not_an_output_cue() -> None:
    assert rules("The total comes out wrong when the printer is idle before a job arrives.", 1) == {"input_pattern"}


def test_a_change_asked_for_in_the_future_or_conditional_is_a_direction() -> None:
    assert "direction" in rules("You'll need to register every edge at both of its ends.", 3)
    assert "direction" in rules("I'd suggest recording each edge twice, once per endpoint.", 4)
    assert "direction" in rules("It's worth storing the edge under both vertices.", 5)
    assert rules("You'll need to register every edge at both of its ends.", 6) == set()
    # a prediction about what the candidate will see asks for nothing
    assert rules("You'll see the count drop on a path given backwards.", 2) == set()


def test_losing_digits_or_precision_or_a_cause_told_through_a_named_part_is_state() -> None:
    assert rules("Big cubes fail; the floating-point root loses precision there.", 2, ROOT, ROOT_PROBLEM) == {"state"}
    assert rules("Long lines fail since the reader keeps only the first word.", 2, WORDS, WORDS_PROBLEM) == {"state"}
    assert rules("Paths listed backwards fail because the adjacency table holds one direction.", 2) == {"state"}
    # at L3 it is the level's own information; the output losing digits is the symptom only with no cause
    assert rules("Big cubes fail; the floating-point root loses precision there.", 3, ROOT, ROOT_PROBLEM) == set()
    assert rules("Paths listed backwards fail.", 2) == set()


def test_a_correction_by_contrast_is_a_concept_unless_it_describes_the_program_or_output() -> None:
    assert rules("Reachability follows an edge both ways, not only from its first endpoint.", 4) == {"concept"}
    assert rules("A word boundary is any single space, not just the first one.", 3, WORDS, WORDS_PROBLEM) == {"concept"}
    # the program's own doing (L3), and the symptom (L1), pass
    assert rules("The search follows each edge from its first endpoint, not from both.", 3) == set()
    assert rules("For the path 3 2 1 it prints 1, not 3.", 2) == set()


def test_a_multiplicity_guessed_under_a_hedge_is_the_symptom() -> None:
    # Table II's own L1 example: "suggesting that something may be counted extra"
    assert rules("The count is too high; it seems some paths are counted twice.", 1) == set()
    assert rules("The count is too high, as if a vertex were counted more than once.", 1) == set()
    # told as a fact it is the concept
    assert rules("The count is too high: the last path is counted twice.", 1) == {"concept"}


def test_ignoring_a_fact_is_a_concept_ignoring_the_programs_data_is_not() -> None:
    assert rules("The solution ignores that an edge can be walked in both directions.", 3) == {"concept"}
    assert "concept" not in rules("The traversal ignores the second endpoint read on each edge line.", 3)


# --------------------------------------------------------------------------- revision 7 (from fresh12)

CMP_PROBLEM = "Given integers lo, hi and x, print IN if lo <= x <= hi and OUT otherwise."
CMP = 'lo, hi, x = map(int, input().split())\nprint("IN" if lo < x and x < hi else "OUT")\n'


def test_an_operator_patch_at_the_start_of_a_sentence_is_code() -> None:
    assert "code" in rules("Change < to <= in both comparisons.", 6, CMP, CMP_PROBLEM)
    assert "code" in rules("Swap < for <= on both sides.", 6, CMP, CMP_PROBLEM)
    # the comparison named, not patched, is a direction at L6
    assert rules("Make both comparisons include their end points.", 6, CMP, CMP_PROBLEM) == set()


def test_the_candidates_code_named_as_what_to_replace_with_words_is_no_code() -> None:
    assert rules("Replace lo < x and x < hi with an inclusive range test.", 6, CMP, CMP_PROBLEM) == set()
    # with code as the replacement it is code
    assert "code" in rules("Replace lo < x and x < hi with lo <= x <= hi.", 6, CMP, CMP_PROBLEM)


def test_an_expression_asked_for_is_a_direction_not_a_concept() -> None:
    assert rules("The test in the print is wrong; it needs lo <= x and x <= hi.", 4, CMP, CMP_PROBLEM) >= {"direction"}
    got = rules("The upper comparison is the culprit; it should be x <= hi.", 4, CMP, CMP_PROBLEM)
    assert "direction" in got and "concept" not in got
    # a count of things an object needs is no expression asked for
    assert rules("Row i needs n - i leading spaces.", 5, CMP, CMP_PROBLEM) == set()


def test_one_letter_inputs_given_values_are_an_input_not_a_statement() -> None:
    assert rules("x = 5 fails when lo is 5 too: the answer should be IN.", 2, CMP, CMP_PROBLEM) == set()
    assert rules("n = 2, k = 1 fails; the survivor should be 2.", 2) == set()
    assert "input_pattern" in rules("Even with x = 5 the program says OUT.", 1, CMP, CMP_PROBLEM)
    # an assignment on its own line is still a statement
    assert "code" in rules("hi = hi + 1", 6, CMP, CMP_PROBLEM)


def test_any_plural_noun_with_a_feature_or_a_condition_in_the_input_is_an_input_pattern() -> None:
    assert rules("OUT is printed for triples with equal numbers.", 1, CMP, CMP_PROBLEM) == {"input_pattern"}
    assert rules("It goes wrong once the value in the input sits on a bound.", 1, CMP, CMP_PROBLEM) == {"input_pattern"}
    assert rules("OUT is printed for triples with equal numbers.", 2, CMP, CMP_PROBLEM) == set()
    # a condition on the output is the symptom
    assert rules("It goes wrong when the printed word differs from the expected one.", 1, CMP, CMP_PROBLEM) == set()


def test_what_the_programs_compared_data_still_holds_is_state() -> None:
    assert rules("Padded lines fail; the text that gets compared still holds its trailing spaces.", 2,
                 WORDS, WORDS_PROBLEM) == {"state"}
    assert rules("The printed line still holds its trailing spaces.", 1, WORDS, WORDS_PROBLEM) == set()


def test_a_constraint_on_two_things_at_once_is_a_concept() -> None:
    assert rules("x cannot both equal lo and be left out.", 4, CMP, CMP_PROBLEM) == {"concept"}
    assert rules("Two vertices can never both be the root.", 3) == {"concept"}
    assert rules("Two vertices can never both be the root.", 5) == set()


def test_a_classification_told_of_the_programs_own_part_is_not_a_concept() -> None:
    assert "concept" not in rules("The count treats the first person as step zero.", 3)
    # told of the problem's objects, it is
    assert "concept" in rules("You count the first person as step zero.", 3)


def test_ought_to_get_describes_the_expected_output() -> None:
    assert rules("A few triples that ought to get IN are answered OUT.", 1, CMP, CMP_PROBLEM) == set()
    assert "direction" in rules("The comparison ought to include the end points.", 4, CMP, CMP_PROBLEM)
