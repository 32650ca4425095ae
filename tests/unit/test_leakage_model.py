"""The learned reading (pairbench_async.protocol.leakage_model): its terms read structurally, its arithmetic worked
by hand on a two-term model, and the packaged model's provenance."""

from __future__ import annotations

import math

import pytest

from pairbench_async.protocol.evidence import Evidence
from pairbench_async.protocol.hidden import HiddenData, ValidationPolicy
from pairbench_async.protocol.leakage import rule_reasons, validate_hint
from pairbench_async.protocol.leakage_model import LeakageModel, features, leakage_model

PROBLEM = "Count the pairs of equal `values` in the list."
PROGRAM = "def pairs(values):\n    seen = {}\n    return sum(seen.get(v, 0) for v in values)\n"
REFERENCE = "def pairs(values):\n    seen = {}\n    total = 0\n    for v in values:\n        total += seen.get(v, 0)\n" \
            "        seen[v] = seen.get(v, 0) + 1\n    return total\n"


def test_terms_name_the_programs_and_the_references_own_names_and_the_level() -> None:
    terms = features("Update `seen[v]` and total, for 3 values", 4, PROBLEM, PROGRAM, REFERENCE)
    assert terms[0] == "<level 4>"
    # `seen` is the candidate's own name, `total` only the reference's, `values` the problem's, 3 a number
    assert "<bq-py>" in terms and "`<pid>" in terms and "<rid>" in terms and "values" in terms
    assert "<num>" in terms and "update <bq-py>" in terms and "L4|update" in terms
    # a span that is no Python is a plain span
    assert "<bq>" in features("The line `1 2 wait` is wrong", 1, PROBLEM, PROGRAM, REFERENCE)


def test_the_arithmetic_worked_by_hand() -> None:
    # two terms; the hint "a a b" at L1 has counts a: 2, b: 1 (and "<level 1>", "a a", ... unknown here)
    model = LeakageModel(terms={"a": 0, "b": 1}, idf=[2.0, 1.0],
                         weights={"crossing": [1.0, -2.0], "state": [0.5, 0.5]},
                         intercepts={"crossing": -0.5, "state": 0.0}, threshold=0.5)
    reading = model.read("a a b", 1, "", "", "")
    # tf-idf: a = (1 + ln 2) * 2 = 3.386294, b = (1 + ln 1) * 1 = 1; norm = sqrt(3.386294^2 + 1) = 3.530862
    a, b = (1 + math.log(2)) * 2.0, 1.0
    norm = math.hypot(a, b)
    assert norm == pytest.approx(3.530862, abs=1e-6)
    # crossing: sigmoid(-0.5 + (1 * a - 2 * b) / norm) = sigmoid(-0.5 + 0.392622) = sigmoid(-0.107378) = 0.473181
    assert reading.crossing == pytest.approx(0.473181, abs=1e-6)
    # state: sigmoid(0 + (0.5 * a + 0.5 * b) / norm) = sigmoid(0.621136) = 0.650477
    assert reading.boundaries == {"state": pytest.approx(0.650477, abs=1e-6)}


def test_the_packaged_model_says_where_it_came_from() -> None:
    model = leakage_model()
    provenance = model.provenance
    assert provenance["command"] == "python -m bench.train_leakage_model --write"
    assert 0.0 < model.threshold < 1.0 and provenance["threshold"] == model.threshold
    assert set(model.weights) == {"crossing", "input_pattern", "state", "location", "concept", "direction", "code"}
    assert len(model.idf) == len(model.terms) and all(len(w) == len(model.terms) for w in model.weights.values())
    assert "labelled_hints.jsonl" in provenance["sets"]  # type: ignore[operator]


def test_the_default_reading_keeps_the_rules_exact_checks_and_the_rules_reading_is_the_rules() -> None:
    evidence, hidden = Evidence(problem=PROBLEM), HiddenData(reference=REFERENCE)
    fenced = "Use this:\n```python\nprint(4)\n```"
    # a fenced block is code at every level, whatever the model reads
    for level in range(1, 7):
        assert any(r.startswith("code: fenced code block") for r in validate_hint(fenced, level, evidence, PROGRAM,
                                                                                  hidden))
    # Table II's own example hints pass the default reading
    assert validate_hint("The output is larger than expected, suggesting that something may be counted extra.", 1,
                         evidence, PROGRAM, hidden) == []
    # reading="rules" is the rules alone
    hint = "The count is wrong when the input is empty."
    assert validate_hint(hint, 1, evidence, PROGRAM, hidden, ValidationPolicy(reading="rules")) == rule_reasons(
        hint, 1, evidence, PROGRAM, hidden)


def test_the_text_the_model_reads_is_normalised() -> None:
    from pairbench_async.protocol.leakage_model import normalised
    names = frozenset({"seen", "total"})
    # markdown's emphasis, headings, list markers and rules go; a quoted name of the programs is a code span
    assert normalised("**Hint:** look at 'seen' and \"total\"\n1. first\n- second\n---\n### Head", names) == \
        "Hint: look at `seen` and `total`\nfirst\nsecond\n\nHead"
    # an identifier's underscores are not emphasis; a quoted word that is no name stays quoted
    assert normalised("my_var_name is 'fine'", names) == "my_var_name is 'fine'"
    # Cyrillic look-alikes and compatibility forms read as Latin
    assert normalised("сору the ｌist") == "copy the list"


def test_too_few_known_words_leave_the_hint_to_the_rules() -> None:
    evidence, hidden = Evidence(problem=PROBLEM), HiddenData(reference=REFERENCE)
    for text in ("The output is wrong.", "Wrong answer."):
        assert leakage_model().read(text, 1, PROBLEM, PROGRAM, REFERENCE).known < 8
        assert validate_hint(text, 1, evidence, PROGRAM, hidden) == rule_reasons(text, 1, evidence, PROGRAM, hidden)
