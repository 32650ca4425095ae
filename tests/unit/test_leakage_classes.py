"""The leakage rules by class (issue 24, item 1): the reviewer's missed examples, one or two
other members of each class, their level-conforming neighbours, and a validator that never
raises on any text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pairbench_async.protocol.evidence import Evidence
from pairbench_async.protocol.leakage import HiddenData, rule_reasons
from pairbench_async.protocol.leakage_structure import candidate_quotes, program_shape

CYCLE_PROBLEM = ("Given a directed graph with n nodes (0..n-1) and m edges u v, print YES if it contains a "
                 "directed cycle and NO otherwise.")
CYCLE = """\
n, m = map(int, input().split())
adj = [[] for _ in range(n)]
for _ in range(m):
    u, v = map(int, input().split())
    adj[u].append(v)
visited = [False] * n
def dfs(u):
    visited[u] = True
    for v in adj[u]:
        if visited[v]:
            return True
        if dfs(v):
            return True
    return False
print("YES" if any(not visited[u] and dfs(u) for u in range(n)) else "NO")
"""
CYCLE_REFERENCE = CYCLE.replace("visited = [False] * n\n", "visited = [False] * n\non_path = [False] * n\n")
KNIGHT_PROBLEM = ("On an N x N chessboard, print the smallest number of knight moves from square (r1, c1) to "
                  "square (r2, c2), or -1 if it cannot be reached.")
KNIGHT = "MOVES = [(1, 2), (2, 1), (-1, 2), (-2, 1)]\nprint(len(MOVES))\n"
KNIGHT_REFERENCE = ("MOVES = [(1, 2), (2, 1), (-1, 2), (-2, 1), (1, -2), (2, -1), (-1, -2), (-2, -1)]\n"
                    "print(len(MOVES))\n")
WRAP_PROBLEM = ("Given a width W and a line of words, wrap the words greedily into lines of at most W "
                "characters and print the lines.")
WRAP = """\
w = int(input())
words = input().split()
lines = []
cur = ""
for word in words:
    if len(cur) + len(word) <= w:
        cur = cur + " " + word if cur else word
    else:
        lines.append(cur)
        cur = word
lines.append(cur)
print("\\n".join(lines))
"""


def rules(hint: str, level: int, program: str = CYCLE, problem: str = CYCLE_PROBLEM,
          reference: str = "") -> set[str]:
    reasons = rule_reasons(hint, level, Evidence(problem=problem), program, HiddenData(reference=reference))
    return {reason.split(":", 1)[0] for reason in reasons}


# --------------------------------------------------------------------------- the reviewer's examples


def test_an_input_pattern_as_a_quantified_condition_over_the_tests() -> None:
    assert "input_pattern" in rules("The answer is 0 on the tests in which no value is positive.", 1)
    assert "input_pattern" in rules("Answers are wrong mostly for boards where the target sits above the knight.", 1)
    assert "input_pattern" in rules("The output has too many letters whenever a digit of the number is 4 or 9.", 1)
    # the tests picked out by what the program or the expected output does: the symptom
    assert rules("The program answers NO on several tests whose expected answer is YES.", 1) == set()
    assert rules("On the tests where the program prints -1, the expected answer is positive.", 1) == set()


@pytest.mark.parametrize("level", [1, 2])
def test_state_as_the_programs_own_record(level: int) -> None:
    assert "state" in rules("The program's record of when the clerk is next free lags behind.", level)
    assert "state" in rules("Whenever the search reaches a node it has visited before, it reports a cycle.", level)
    assert "state" in rules("Nothing remembers which word came first.", level)
    assert "state" not in rules("The program's record of when the clerk is next free lags behind.", 3)


@pytest.mark.parametrize("level", [1, 2, 3])
def test_a_location_as_a_named_construct_with_a_position(level: int) -> None:
    for hint in ("The length check before appending a word is the part to look at.",
                 "The moves table near the top is the place to look.",
                 "Lines come out too long; the part to look at is where the program decides whether a word fits."):
        assert "location" in rules(hint, level, WRAP, WRAP_PROBLEM), hint
        assert "location" not in rules(hint, 4, WRAP, WRAP_PROBLEM), hint


@pytest.mark.parametrize("level", [1, 2, 3, 4, 5])
def test_a_direction_as_a_repair_verb_on_the_programs_objects(level: int) -> None:
    for hint in ("Reduce the hours modulo 24 before printing them.",
                 "The hours just need reducing modulo 24 before they are printed.",
                 "Have you considered adding the 5 to the coin tuple?"):
        assert "direction" in rules(hint, level), hint
        assert "direction" not in rules(hint, 6), hint
    # a remark is not a repair
    assert "direction" not in rules("Keep in mind that the minimum length is inclusive.", 5)


@pytest.mark.parametrize("level", range(1, 7))
def test_code_with_the_programs_own_identifiers(level: int) -> None:
    # on_path is the reference's name, visited the candidate's: both in an assignment are code
    assert "code" in rules("Set on_path[u] = True when dfs(u) starts.", level, reference=CYCLE_REFERENCE)
    assert "code" in rules("Write visited[u] = True.", level)
    assert "code" in rules("After computing start, update free to start + d.", level,
                           "free = 0\nstart = max(free, 1)\nfree = 1 + 2\n", "Serve customers.")


@pytest.mark.parametrize("level", range(1, 7))
def test_an_exact_patch_of_the_references_literals(level: int) -> None:
    hint = "Add the four missing jumps (1, -2), (2, -1), (-1, -2) and (-2, -1) to the moves."
    assert "code" in rules(hint, level, KNIGHT, KNIGHT_PROBLEM, KNIGHT_REFERENCE)
    # without the reference, only the wording rules read it
    assert "code" not in rules(hint, level, KNIGHT, KNIGHT_PROBLEM)


# --------------------------------------------------------------------------- quoting the candidate


def test_an_expression_of_the_candidate_quoted_as_a_place_is_a_location_not_code() -> None:
    hint = "Inside the for loop, the if condition comparing len(cur) + len(word) with w decides where lines break."
    assert rules(hint, 4, WRAP, WRAP_PROBLEM) == set()
    assert rules(hint, 3, WRAP, WRAP_PROBLEM) == {"location"}
    # told to write it, it is code
    assert "code" in rules("Write len(cur) + 1 + len(word) <= w.", 6, WRAP, WRAP_PROBLEM)
    # revision 12: a statement of the candidate that the reference does not add names a line (fresh22-25's
    # labels: "what `parent[a] = find(b)` does" at L4 is allowed; 9 code false positives of this kind over
    # every set, 1 true positive); a statement the reference adds (here: moves) is the fix, code
    assert rules("The cur = word line is wrong.", 4, WRAP, WRAP_PROBLEM) == set()
    assert rules("The cur = word line is wrong.", 3, WRAP, WRAP_PROBLEM) == {"location"}
    moved = WRAP.replace("        lines.append(cur)\n        cur = word\n", "        cur = word\n        lines.append(cur)\n")
    assert moved != WRAP
    assert "code" in rules("The cur = word line is wrong.", 4, WRAP, WRAP_PROBLEM, reference=moved)
    shape = program_shape(WRAP, "")
    assert candidate_quotes(hint, shape) == ["len(cur) + len(word)"]


def test_hyphenated_words_and_named_calls_are_not_code() -> None:
    assert "code" not in rules("Out-of-grid neighbours are the suspects in the int(...) conversion.", 4)


# --------------------------------------------------------------------------- robustness


_PIECES = [*"abcxyz ()[]=+-<>,.;:!?'\"`\n0123456789_", "Add", "Set ", "Reset", "Change ", "the loop", " on_path",
           "visited", " when ", " because the program ", " to ", "[u]", " is the place to look", "Keep in mind"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=40).map("".join), st.integers(1, 6))
def test_the_validator_never_raises(hint: str, level: int) -> None:
    rule_reasons(hint, level, Evidence(problem=CYCLE_PROBLEM), CYCLE, HiddenData(reference=CYCLE_REFERENCE))


@pytest.mark.parametrize("hint", ["Add", "Add.", "Reset", "Print", "Change:", "Sort it. Add"])
def test_a_lone_repair_verb_is_a_direction_and_does_not_raise(hint: str) -> None:
    assert "direction" in rules(hint, 1)
