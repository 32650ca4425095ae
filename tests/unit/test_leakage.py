"""The leakage validator: one passing and one failing hint per rule and level, regeneration."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pairbench_async.core.errors import ConfigError
from pairbench_async.core.types import Instance, Message
from pairbench_async.core.types import Test as HiddenTest
from pairbench_async.protocol.evidence import Evidence, FailureEvidence
from pairbench_async.protocol.hints import HINT_LEVELS, fallback_hint
from pairbench_async.protocol.leakage import (
    HiddenData,
    HintAttempt,
    ValidationPolicy,
    hidden_data,
    retry_messages,
    review,
    rule_reasons,
)
from pairbench_async.protocol.leakage_patterns import code_identifiers
from pairbench_async.protocol.leakage_quotes import _grams, _shares_run
from tests.hint_loop import produce_hint

PROBLEM = (
    "Given n numbers, print how many pairs (i, j) with i < j have equal values. "
    "Print the count on one line."
)
CANDIDATE = """\
n = int(input())
values = list(map(int, input().split()))
cnt = 0
seen_set = set()
prefixSum = 0
total = 0
for i in range(n):
    for j in range(i + 1, n):
        if values[i] == values[j]:
            cnt += 1
print(cnt)
"""
REFERENCE = """\
from collections import Counter
n = int(input())
values = list(map(int, input().split()))
freq_by_value = Counter(values)
print(sum(k * (k - 1) // 2 for k in freq_by_value.values()))
"""
HIDDEN = HiddenData(
    inputs=("5\n1 1 2 2 2\n", "6\n7 7 7 7 7 7\n", "4\nsecretword 1 2 3\n"),
    outputs=("4\n", "15\n", "1234567\n"),
    reference=REFERENCE,
)
EVIDENCE = Evidence(problem=PROBLEM)


def reasons(hint: str, level: int) -> list[str]:
    return rule_reasons(hint, level, EVIDENCE, CANDIDATE, HIDDEN)


def rules(hint: str, level: int) -> set[str]:
    return {reason.split(":", 1)[0] for reason in reasons(hint, level)}


# --------------------------------------------------------------------------- passing


@pytest.mark.parametrize("level", range(1, 7))
def test_table_examples_pass_at_their_own_level(level: int) -> None:
    assert reasons(HINT_LEVELS[level - 1].example, level) == []


@pytest.mark.parametrize("level", range(1, 7))
@pytest.mark.parametrize(
    "failure", ["wrong_value", "wrong_lines", "timeout", "memory", "runtime:IndexError"]
)
def test_fallback_hints_pass_at_their_level(level: int, failure: str) -> None:
    assert reasons(fallback_hint(level, failure), level) == []


@pytest.mark.parametrize(
    ("hint", "level"),
    [
        ("The output is smaller than expected, as if some pairs were never counted.", 1),
        ("The output is smaller than expected when many values are equal.", 2),
        ("The answer is too small when n = 1 or when every value is the same.", 2),
        ("The program loses track of how often each value was already seen.", 3),
        ("The count of pairs printed is off: it prints 4 where the answer is larger.", 1),
        ("The fault is likely in the nested loop that compares values, around line 9.", 4),
        ("The cnt variable is only increased for adjacent equal values.", 4),
        ("Replace the pairwise comparison by counting each value once.", 6),
        ("You should count how many times each value occurs.", 6),
        ("The input has 5 numbers, and the answer is 4.", 2),
    ],
)
def test_level_conforming_hints_pass(hint: str, level: int) -> None:
    assert reasons(hint, level) == []


def test_public_text_is_never_a_quote() -> None:
    # the problem statement and the candidate's own code may be repeated verbatim
    assert "quote" not in rules(
        "It should print how many pairs (i, j) with i < j have equal values.", 6
    )
    assert "quote" not in rules("values = list(map(int, input().split()))", 6)


def test_short_tokens_of_hidden_data_are_ignored() -> None:
    assert reasons("The expected answer is 15 but the program prints 14.", 1) == []


# --------------------------------------------------------------------------- failing


@pytest.mark.parametrize("level", range(1, 7))
@pytest.mark.parametrize(
    "hint",
    [
        "Try this:\n```python\nprint(1)\n```",
        "The loop `for i in range(n)` is wrong.",
        "Write for i in range(n) with a dict.",
        "Define def count_pairs(values) to return the answer.",
        "return cnt",
        "Add cnt += k * (k - 1) // 2.",
        "The fix is x = values[i] + 1 here.",
        "Set total = 0 before reading each value.",
        "It fails because sorted(values) is never computed.",
        "Call values.count(v) for each value.",
        "Compare when values[i] == values[j] holds.",
    ],
)
def test_code_is_rejected_at_every_level(hint: str, level: int) -> None:
    assert "code" in rules(hint, level)


@pytest.mark.parametrize(
    "hint",
    [
        "The problem is on line 9.",
        "Look at lines 8-10 of the program.",
        "The seen_set is never filled.",
        "prefixSum grows too fast.",
        "The cnt grows too slowly.",
        "The 'total' is never updated.",
        "The total variable is not used.",
        "The inner loop starts at the wrong index.",
        "The if statement compares the wrong items.",
    ],
)
def test_code_locations_are_rejected_below_level_four(hint: str) -> None:
    for level in (1, 2, 3):
        assert "location" in rules(hint, level), (hint, level)
    assert "location" not in rules(hint, 4)


def test_plain_english_words_that_are_also_variable_names_pass() -> None:
    assert "location" not in rules("The total printed is smaller than expected.", 1)


@pytest.mark.parametrize(
    "hint",
    [
        "Use a dictionary of counts instead.",
        "Change the comparison so that equal values are counted once per pair.",
        "Initialise the counter before the loop over values.",
        "The counter should be increased for every earlier equal value.",
        "You need to count occurrences of each value first.",
        "Make sure every pair is counted.",
        "The answer is right if you replace the pair loop.",
    ],
)
def test_repair_directions_are_rejected_below_level_six(hint: str) -> None:
    for level in range(1, 6):
        assert "direction" in rules(hint, level), (hint, level)
    assert "direction" not in rules(hint, 6)


@pytest.mark.parametrize("level", range(1, 7))
@pytest.mark.parametrize(
    ("hint", "what"),
    [
        ("On the input 6 7 7 7 7 7 7 it fails.", "input"),
        ("The expected output there is 1234567.", "output"),
        ("Think of freq_by_value = Counter(values) as the key idea.", "reference"),
        ("The reference prints sum(k*(k-1)//2 for k in freq_by_value.values()).", "reference"),
        ("It breaks when a word like secretword appears.", "input"),
    ],
)
def test_verbatim_hidden_data_is_rejected_at_every_level(hint: str, what: str, level: int) -> None:
    found = [reason for reason in reasons(hint, level) if reason.startswith("quote")]
    assert found, (hint, level)


def test_quote_reasons_never_repeat_the_quoted_data() -> None:
    text = " ".join(reasons("The input 6 7 7 7 7 7 7 gives 1234567 via secretword.", 1))
    for secret in ("7 7 7", "1234567", "secretword"):
        assert secret not in text


def test_empty_and_overlong_hints_are_rejected() -> None:
    assert rules("   ", 3) == {"empty"}
    assert "length" in rules("The output is wrong. " * 100, 3)


def test_unknown_level_is_an_error() -> None:
    with pytest.raises(ConfigError):
        reasons("The output is wrong.", 7)


def test_code_identifiers_with_and_without_a_parse() -> None:
    assert {"n", "values", "cnt", "seen_set", "prefixSum", "total", "i", "j"} <= code_identifiers(
        CANDIDATE
    )
    assert "print" not in code_identifiers(CANDIDATE) and "for" not in code_identifiers(CANDIDATE)
    assert {"broken_name", "x"} <= code_identifiers("def broken_name(:\n  x = ")


def test_hidden_data_of_a_call_instance() -> None:
    instance = Instance(
        id="i",
        problem="p",
        buggy="b",
        reference="r",
        tests=[HiddenTest(id="t", args=[[1, 2], "ab"], kwargs={"k": 3}, expected={"x": 1})],
        kind="call",
        time_limit=1.0,
        memory_limit_mb=64,
        entry_point="f",
    )
    data = hidden_data(instance)
    assert data.inputs == ("[1,2]", '"ab"', "3") and data.outputs == ('{"x":1}',)
    assert data.reference == "r"


# --------------------------------------------------------------------------- regeneration

LEAKY = "Use this:\n```python\nprint(4)\n```"
GOOD = "The output is smaller than expected: the printed count of pairs is too low."


def _scripted(replies: list[str]) -> tuple[list[list[Message]], object]:
    seen: list[list[Message]] = []
    it = iter(replies)

    def generate(messages: list[Message]) -> str:
        seen.append(messages)
        return next(it)

    return seen, generate


def test_accepts_the_first_clean_attempt_and_keeps_rejected_ones() -> None:
    seen, generate = _scripted([LEAKY, GOOD])
    outcome = produce_hint(
        generate,  # type: ignore[arg-type]
        level=1,
        evidence=EVIDENCE,
        candidate_code=CANDIDATE,
        hidden=HIDDEN,
        failure="wrong_value",
    )
    assert outcome.text == GOOD and not outcome.fallback
    assert [bool(a.reasons) for a in outcome.attempts] == [True, False]
    # the retry conversation shows the rejected hint and why
    assert seen[1][-2] == Message(role="assistant", content=LEAKY)
    assert "code: fenced code block" in seen[1][-1].content


def test_exhausted_budget_falls_back_to_the_level_safe_hint() -> None:
    seen, generate = _scripted([LEAKY] * 5)
    outcome = produce_hint(
        generate,  # type: ignore[arg-type]
        level=2,
        evidence=EVIDENCE,
        candidate_code=CANDIDATE,
        hidden=HIDDEN,
        failure="timeout",
    )
    assert len(seen) == 3 and len(outcome.attempts) == 3
    assert outcome.fallback and outcome.text == fallback_hint(2, "timeout")
    assert "exceeds the time limit" in outcome.text


def test_exhausted_budget_can_omit_the_hint() -> None:
    policy = ValidationPolicy(budget=1, on_exhausted="omit")
    attempts, outcome = review(
        (),
        LEAKY,
        level=4,
        evidence=EVIDENCE,
        candidate_code=CANDIDATE,
        hidden=HIDDEN,
        failure="wrong_value",
        policy=policy,
    )
    assert outcome is not None and outcome.text == "" and outcome.fallback
    assert outcome.attempts == attempts and len(attempts) == 1


@pytest.mark.parametrize(
    ("hidden_input", "failure", "given"),
    [
        # nothing hidden in the fixed words: the level's hint, worded from the failure type
        ("5\n1 2 3 4 5\n", "wrong_value", "On some hidden tests the program produces a wrong value."),
        # a failure word outside the vocabulary (an old record's key) is never repeated
        ("5\n1 2 3 4 5\n", "runtime:_CANARY_7731_4242", "On some hidden tests the program stops with a "
         "runtime error."),
        # the specific wording quotes hidden data: the generic symptom instead
        ("it produces a wrong value\n", "wrong_value", "On some hidden tests the program fails."),
        # both would: no hint at all, rather than an unvalidated one
        ("On some hidden tests the program fails\n", "wrong_value", ""),
    ],
)
def test_the_fallback_hint_is_validated_like_any_other(hidden_input: str, failure: str, given: str) -> None:
    hidden = HiddenData(inputs=(hidden_input,), outputs=("15\n",), reference=REFERENCE)
    _, outcome = review((), LEAKY, level=1, evidence=EVIDENCE, candidate_code=CANDIDATE, hidden=hidden,
                        failure=failure, policy=ValidationPolicy(budget=1))
    assert outcome is not None and outcome.fallback and outcome.text == given
    if given:
        assert rule_reasons(given, 1, EVIDENCE, CANDIDATE, hidden) == []


def test_review_asks_for_another_attempt_within_budget() -> None:
    attempts, outcome = review(
        (), LEAKY, level=1, evidence=EVIDENCE, candidate_code=CANDIDATE, hidden=HIDDEN, failure="x"
    )
    assert outcome is None and attempts[0].reasons
    messages = retry_messages([Message(role="user", content="hi")], attempts[0])
    assert [m.role for m in messages] == ["user", "assistant", "user"]


def test_policy_validation() -> None:
    with pytest.raises(ConfigError):
        ValidationPolicy(budget=0)
    with pytest.raises(ConfigError):
        ValidationPolicy(min_quote_chars=1)
    assert HintAttempt(text="x").reasons == ()


# --------------------------------------------------------------------------- the scan


@given(
    st.text("abc", max_size=30),
    st.text("abc", max_size=30),
    st.text("abc", max_size=30),
    st.integers(2, 12),
)
def test_seeded_run_search_matches_the_definition(
    hint: str, hidden: str, public: str, k: int
) -> None:
    naive = any(
        hint[i : i + k] in hidden and hint[i : i + k] not in public
        for i in range(len(hint) - k + 1)
    )
    assert _shares_run(hint, hidden, _grams(hidden), public, k) == naive


def test_quotes_from_the_head_of_a_huge_input_are_caught() -> None:
    big = " ".join(str(1_000_003 * i % 999_983) for i in range(40_000))
    data = HiddenData(inputs=(big,), outputs=("1\n",), reference="print(1)\n")
    leak = f"It fails on {big[100:160]} and similar inputs."
    assert "quote" in {r.split(":")[0] for r in rule_reasons(leak, 2, EVIDENCE, "", data)}
    clean = "The answer is too small when the input holds many large values."
    assert rule_reasons(clean, 2, EVIDENCE, "", data) == []


def test_verdicts_are_memoised_per_hidden_data_and_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    import pairbench_async.protocol.leakage as leakage

    hidden = HiddenData(inputs=HIDDEN.inputs, outputs=HIDDEN.outputs, reference=REFERENCE)
    calls: list[str] = []
    real = leakage._validate

    def counting(text: str, *args: object) -> list[str]:
        calls.append(text)
        return real(text, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(leakage, "_validate", counting)
    leaky = "Print 1234567 when the word secretword appears."
    first = rule_reasons(leaky, 2, EVIDENCE, CANDIDATE, hidden)
    assert first and any("token of hidden test data" in r for r in first)
    # the same question again (the episode re-checking the model's accepted draft): a lookup
    assert rule_reasons(f"  {leaky}\n", 2, EVIDENCE, CANDIDATE, hidden) == first
    assert calls == [leaky]
    # any input of the verdict changes the question
    rule_reasons(leaky, 6, EVIDENCE, CANDIDATE, hidden)
    rule_reasons(leaky, 2, EVIDENCE, CANDIDATE + "\n", hidden)
    rule_reasons(leaky, 2, Evidence(problem=PROBLEM + " 1234567"), CANDIDATE, hidden)
    rule_reasons(leaky, 2, EVIDENCE, CANDIDATE, hidden, ValidationPolicy(min_token_chars=30))
    assert len(calls) == 5
    # a returned list is the caller's to change; the memo keeps its own copy
    first.clear()
    assert rule_reasons(leaky, 2, EVIDENCE, CANDIDATE, hidden)
    # bounded: it never holds more than its size
    for i in range(leakage._MEMO_SIZE + 10):
        rule_reasons(f"The program fails case {i}.", 1, EVIDENCE, CANDIDATE, hidden)
    assert len(hidden.verdicts) <= leakage._MEMO_SIZE


# --------------------------------------------------------------------------- Table II's middle rows
# Seed 000, Table II: L1 "Only the observed incorrect behavior; no input pattern, cause, or
# code location"; L2 "The type of input or edge case exposing the failure"; L3 "The
# information that the solution fails to preserve, update, or track correctly"; L5 "The
# missing invariant, condition, or reasoning needed to handle the scenario".


@pytest.mark.parametrize(
    "hint",
    [
        "The count is wrong whenever two numbers in the input are the same.",
        "It crashes on an empty line.",
        "For lists with a single element the program prints nothing.",
        "The answer is off when n = 1.",
        "On strings that contain spaces the answer is wrong.",
        "The printed total is too small for inputs of length one.",
        "This is an edge case that the program gets wrong.",
        "If all values are negative, the output is 0.",
    ],
)
def test_input_patterns_are_rejected_at_level_one_only(hint: str) -> None:
    assert "input_pattern" in rules(hint, 1), hint
    assert "input_pattern" not in rules(hint, 2)


@pytest.mark.parametrize(
    "hint",
    [
        "The program prints a negative number where a positive one is expected.",
        "The output is empty on some tests although an answer is expected.",
        "On some tests the printed count is larger than the expected one.",
        "The printed lines are in descending order, but the expected lines are not.",
        "Some expected values never appear in the output, and the run ends without an error.",
        "The output is larger than expected, suggesting that something may be counted extra.",
    ],
)
def test_symptoms_that_mention_features_of_the_output_pass_at_level_one(hint: str) -> None:
    assert reasons(hint, 1) == [], hint


@pytest.mark.parametrize(
    "hint",
    [
        "The program loses track of the largest value seen so far.",
        "It does not remember which positions were already visited.",
        "The running total is cleared too early.",
        "The solution overwrites the count each time a value comes back.",
        "It fails to update the minimum after a smaller element appears.",
        "The answer is too small because the program stops looking after the first match.",
    ],
)
def test_state_tracking_is_rejected_below_level_three(hint: str) -> None:
    for level in (1, 2):
        assert "state" in rules(hint, level), (hint, level)
    assert "state" not in rules(hint, 3)


@pytest.mark.parametrize(
    "hint",
    [
        "A pair of equal values counts as one pair however far apart they are.",
        "Each value may be used at most once in a pair.",
        "Pairs are unordered, so (i, j) and (j, i) must be treated as the same pair.",
        "The key observation is that only the frequency of each value matters.",
        "Values that are equal still belong to the same group even when they are not adjacent.",
        "The statement requires i to be strictly smaller than j.",
        "Subtraction does not commute, so the order of the operands matters.",
    ],
)
def test_concepts_are_rejected_below_level_five(hint: str) -> None:
    for level in range(1, 5):
        assert "concept" in rules(hint, level), (hint, level)
    assert "concept" not in rules(hint, 5)


@pytest.mark.parametrize(
    "hint",
    [
        "The fault is probably in the comparison inside the nested loops.",
        "Check the key function used for sorting.",
        "The bug seems to be in how the pairs are enumerated.",
        "The list comprehension that builds the pairs is suspicious.",
        "Look at the set that stores the values seen before.",
        "The problem is in the part of the program that counts pairs.",
    ],
)
def test_more_program_locations_are_rejected_below_level_four(hint: str) -> None:
    for level in (1, 2, 3):
        assert "location" in rules(hint, level), (hint, level)
    assert "location" not in rules(hint, 4)


@pytest.mark.parametrize(
    ("hint", "rejected"),
    [
        ("In the inner loop, compare every later value, not only the next one.", True),
        ("When a value repeats, add the number of its earlier copies.", True),
        ("The counter should be a dictionary keyed by value.", True),
        ("Only count a pair when its two values are equal.", True),
        ("The amount that should be added for a value is its number of earlier copies.", False),
        ("The program prints 4 where it should print 6.", False),
        ("Remember that a pair needs two different positions.", False),
    ],
)
def test_directions_in_clauses_and_what_is_not_a_direction(hint: str, rejected: bool) -> None:
    assert ("direction" in rules(hint, 5)) is rejected, hint


@pytest.mark.parametrize(
    "hint",
    [
        "Change the test from != to ==.",
        "Stop the loop once values[i] > values[j] holds.",
        "Return math.comb(k, 2) summed over the values.",
        "Add k * k - k for each value and halve the total.",
        "Pseudocode: count each value, then add up k choose 2.",
    ],
)
def test_patches_calls_and_expressions_are_code_even_at_level_six(hint: str) -> None:
    assert "code" in rules(hint, 6), hint


def test_each_new_rejection_names_its_boundary_and_the_level_that_may_reveal_it() -> None:
    found = reasons("When the input is empty it loses track of the count; it must be treated as zero.", 1)
    by_rule = {r.split(":", 1)[0]: r for r in found}
    assert {"input_pattern", "state", "concept"} <= set(by_rule)
    assert "(reserved for L2 and above)" in by_rule["input_pattern"]
    assert "(reserved for L3 and above)" in by_rule["state"]
    assert "(reserved for L5 and above)" in by_rule["concept"]


# --------------------------------------------------------------------------- the attacker's classes (issue 14)
# Reworded, not the reviewer's own probes: each case is one class of finding.


@pytest.mark.parametrize(
    ("hint", "level"),
    [
        ("On a few tests the total is higher than expected by two.", 1),  # "tests" is not an input noun
        ("The program prints 5 on tests where the expected answer is negative.", 1),  # the feature is the output's
        ("The output should be YES on several tests, but NO is printed.", 1),  # expected output, not a rule
        ("The result should be smaller on some tests.", 1),
        ("Test 7 prints 4 where 6 is expected.", 1),  # nouns that are also repair verbs
        ("Output rows have the right numbers in the wrong order.", 1),
        ("Sort keys are compared wrongly on some tests.", 1),
        ("The program appears to loop forever on some tests.", 1),  # "to loop" is a verb
        ("Check the loop that reads the queries.", 4),  # pointing at a place is L4's job
        ("Take a closer look at how the prefix sums are built.", 4),
        ("There are n - k + 1 windows, the last one starting at n - k.", 5),  # additive maths, not code
    ],
)
def test_symptoms_places_and_maths_pass(hint: str, level: int) -> None:
    assert rules(hint, level) == set(), hint


@pytest.mark.parametrize(
    ("hint", "level", "boundary"),
    [
        ("The while condition stops before the last digit is read.", 3, "location"),
        ("The final print joins the words in the wrong order.", 2, "location"),
        ("On every n, the range given to the for is one too short.", 2, "location"),
        ("The fix would be to start from the second element.", 4, "direction"),
        ("Sorting the letters first would solve it.", 5, "direction"),
        ("Counting the pairs with a dictionary is the remedy.", 5, "direction"),
        ("Scanning from the right rather than from the left gives the right answer.", 5, "direction"),
        ("Position matters, and a set forgets it.", 4, "concept"),
        ("Uppercase input makes the total come out too small.", 1, "input_pattern"),
        ("It prints 3 for -7 instead of 7.", 1, "input_pattern"),
        ("Arrays containing zero twice make it print the wrong value.", 1, "input_pattern"),
        ("The program has no memory of the earlier maximum.", 1, "state"),
        ("The previous total is not kept anywhere.", 2, "state"),
        ("Write the count as len(s.split()).", 6, "code"),
        ("Compare Counter(x) with Counter(y).", 6, "code"),
        ("Steps: total <- total + v; if total > m then m <- total.", 6, "code"),
    ],
)
def test_the_reviewers_rewordings_are_caught(hint: str, level: int, boundary: str) -> None:
    assert boundary in rules(hint, level), (hint, rules(hint, level))


@pytest.mark.parametrize(
    "hint",
    [
        "Try the line QUICK BROWN FOXES JUMP.",  # case does not hide a quote
        "Try the line quick\u200bbrown foxes\u200b jump.",  # nor zero-width characters
        "Try quick-brown-foxes-jump.",  # nor separators
        "It fails on the query 7 1,000,000 somewhere.",  # "1,000,000" is "1000000"
        "One line reads 4 8 15 16 in that test.",  # one line of a multi-line input is an item
    ],
)
def test_quotes_survive_case_separators_invisible_characters_and_lines(hint: str) -> None:
    hidden = HiddenData(inputs=("quick brown foxes jump\n", "3\n4 8 15 16\n7 1000000\n"), outputs=("9\n",),
                        reference="print(9)\n")
    got = rule_reasons(hint, 6, Evidence(problem="Sum numbers."), "print(0)\n", hidden)
    assert any(r.startswith("quote") for r in got), (hint, got)


# --------------------------------------------------------------------------- echoes of hidden data
# A program's output on a hidden test is a function of its input, in whatever encoding the
# program chose; a hint that quotes it carries the input in that encoding.

ECHO_HIDDEN = HiddenData(inputs=("CANARY_7731 4242 1717\n", "3\n1 2 3\n"), outputs=("5959\n", "6\n"),
                         reference="label, a, b = input().split()\nprint(int(a) + int(b))\n")
ECHO_PROBLEM = Evidence(problem="Print the sum of the two numbers after the label.")


@pytest.mark.parametrize(
    "hint",
    [
        "The program printed CANARY_hhdb there.",  # digits as letters, a=0..j=9
        "The program printed hhdb ecec bhbh there.",
        "It printed 1717 2424 1377_YRANAC.",  # reversed
        "It printed seven seven three one four two four two.",  # digits as words
        "Its output read hbhb cece bdhh.",  # as letters, reversed
    ],
)
def test_re_encoded_hidden_inputs_are_quotes(hint: str) -> None:
    found = [r for r in rule_reasons(hint, 6, ECHO_PROBLEM, "print(0)\n", ECHO_HIDDEN) if r.startswith("quote")]
    assert found, hint
    assert not any(s in " ".join(found).lower() for s in ("canary", "hhdb", "7731", "seven"))


def test_a_hint_may_not_quote_the_programs_output_on_a_hidden_test() -> None:
    # an encoding no rule reads (here base64 of the input): still the program's output, quoted
    blob = "Q0FOQVJZXzc3MzEgNDI0MiAxNzE3"
    row = FailureEvidence(id="t", failure="wrong_value", shape="token", summary="s", expected="5959\n",
                          actual=f"{blob}\n")
    shown = Evidence(problem=ECHO_PROBLEM.problem, tests=(row,))
    hint = f"The program printed {blob} instead of the sum."
    found = rule_reasons(hint, 1, shown, "print(0)\n", ECHO_HIDDEN)
    assert any("program's output on a hidden test" in r for r in found) and blob not in " ".join(found)
    assert rule_reasons(hint, 1, ECHO_PROBLEM, "print(0)\n", ECHO_HIDDEN) == []  # not shown: not known
    # the mark of a cut echo is not the program's, and short outputs are not quotes
    cut = msgspec.structs.replace(row, actual="[hidden]\n5958\n")
    fine = "The program printed [hidden] and a number one smaller than expected."
    assert rule_reasons(fine, 1, Evidence(problem=ECHO_PROBLEM.problem, tests=(cut,)), "print(0)\n",
                         ECHO_HIDDEN) == []


def test_re_encoding_adds_no_rejection_of_plain_words() -> None:
    for hint in (HINT_LEVELS[0].example, "The program adds one to a decade of values.",
                 "On some hidden tests the program produces a wrong value; the solution does not "
                 "respect a condition of the problem that holds for every valid input."):
        assert rule_reasons(hint, 6, ECHO_PROBLEM, "print(0)\n", ECHO_HIDDEN) == []
