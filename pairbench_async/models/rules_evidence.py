"""What the ``rules`` feedback model reads from the failing tests it is shown.

:class:`~.rules.RulesFeedback` words its hints from two readings: of the code (the
candidate against the reference, :mod:`.rules_code`) and of the test evidence, here.
From the masked evidence this module takes the main symptom (the mismatch summaries
and failure types, in words for L1 and a state-tracking reading for L3) and the
features the failing inputs share (empty, single item, negatives, zeros, duplicates,
sortedness, magnitude, size, letter case, symbols; for L2 and L3), never the inputs
themselves. Kept apart so that the model class holds only the per-level wordings.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any, Final, NamedTuple

import msgspec

from ..core.types import Test
from ..protocol.context import TurnContext
from ..protocol.evidence import Evidence, describe_failure

__all__ = ["GENERIC_STATE", "Symptom", "input_features", "main_symptom"]


# --------------------------------------------------------------------------- rules: symptom


class Symptom(NamedTuple):
    phrase: str  # "prints larger numbers than expected"
    reading: str  # what it suggests, for L1
    state: str  # the state-tracking reading, for L3


def _symptom(category: str, verb: str, a: int = 0, b: int = 0) -> Symptom:
    """Words for one mismatch category; ``verb`` is "prints" or "returns"."""
    if category == "larger":
        return Symptom(
            f"{verb} larger numbers than expected",
            "which suggests that something is counted or added more often than it ought to be",
            "carries more into its result than the problem allows, so the answer grows too large",
        )
    if category == "smaller":
        return Symptom(
            f"{verb} smaller numbers than expected",
            "as if some contributions were missed along the way",
            "loses part of the information it collects, so the answer comes out too small",
        )
    if category == "yesno":
        return Symptom(
            f"{verb} the opposite yes/no answer",
            "so these cases are decided the wrong way",
            "decides from incomplete information, so it picks the wrong one of the two answers",
        )
    if category == "lines":
        more = "more" if a > b else "fewer"
        return Symptom(
            f"prints {more} output lines than expected",
            "so the number of answers it produces is off",
            "does not keep count of how many answers it still owes",
        )
    if category == "tokens":
        more = "more" if a > b else "fewer"
        return Symptom(
            f"prints {more} values on an output line than expected",
            "so the shape of the answer is off",
            "does not keep track of how many values belong to each part of the answer",
        )
    if category == "none":
        return Symptom(
            "returns nothing where a value is expected",
            "so for these inputs no answer is produced at all",
            "never reaches a state in which it has an answer to give back",
        )
    if category == "list":
        more = "more" if a > b else "fewer"
        return Symptom(
            f"returns a list with {more} items than expected",
            "so some items are produced or dropped wrongly",
            "does not keep exact account of which items belong in the result",
        )
    if category == "items":
        return Symptom(
            "returns a list of the right length whose items are partly wrong",
            "so the overall shape is right but some values are not",
            "keeps the right number of results but not the right contents for each of them",
        )
    if category == "type":
        return Symptom(
            "returns a value of the wrong type",
            "so the answer does not even have the expected form",
            "builds its answer in a form that differs from the one the problem asks for",
        )
    if category.startswith("runtime:"):
        name = category.split(":", 1)[1]
        return Symptom(
            describe_failure(category),  # the closed vocabulary's words, never the name as given
            "before it finishes its answer",
            _RUNTIME_STATE.get(name, "reaches a state it does not account for on these inputs"),
        )
    if category == "timeout":
        return Symptom(
            "runs longer than the time limit allows",
            "so its running time grows too fast with the input",
            "does not keep intermediate results it has already worked out, so it repeats work",
        )
    return Symptom(
        describe_failure(category) if category != "different" else f"{verb} wrong values",
        "although the answer has the expected form" if category == "different" else "",
        GENERIC_STATE,
    )


GENERIC_STATE: Final = (
    "does not keep all the information it needs up to date while it processes the input"
)


_RUNTIME_STATE: Final = {
    "IndexError": "does not keep track of how many items it holds, so it reaches for one that "
    "is not there",
    "KeyError": "looks up something it never recorded, because it does not keep track of "
    "every case it meets",
    "ZeroDivisionError": "does not account for a quantity that can become zero",
    "RecursionError": "keeps too much pending work at once, nesting deeper as the input grows",
    "OverflowError": "keeps its values in a representation that cannot hold them exactly",
    "ValueError": "meets a value whose form it does not expect on these inputs",
    "TypeError": "mixes up values of different kinds somewhere on the way",
    "AttributeError": "holds a value of a different kind than it expects",
}

_COUNTS: Final = (
    # "more than N": a count past the bound the evidence shows exactly (always above it)
    ("lines", re.compile(r"prints (?:more than )?(\d+) output lines? where (\d+)")),
    ("tokens", re.compile(r"line has (?:more than )?(\d+) values? where (\d+)")),
    ("list", re.compile(r"returns a list of (?:more than )?(\d+) items? where (\d+)")),
)


def _categorise(summary: str, failure: str) -> tuple[str, int, int]:
    for category, pattern in _COUNTS:
        found = pattern.search(summary)
        if found:
            return category, int(found.group(1)), int(found.group(2))
    for word, category in (
        ("larger", "larger"),
        ("smaller", "smaller"),
        ("yes/no", "yesno"),
        ("returns None", "none"),
        ("right length", "items"),
        ("different value", "different"),
    ):
        if word in summary:
            return category, 0, 0
    if re.search(r"returns a \w+ where a \w+ is expected", summary):
        return "type", 0, 0
    return ("different" if failure == "wrong_value" else failure), 0, 0


def main_symptom(evidence: Evidence, verb: str) -> tuple[Symptom, str]:
    """The most common symptom of the shown tests, and their most common failure type."""
    failures = Counter(test.failure for test in evidence.tests)
    failure = failures.most_common(1)[0][0] if failures else "wrong_value"
    found = [_categorise(test.summary, test.failure) for test in evidence.tests]
    if not found:
        return _symptom(failure, verb), failure
    category = Counter(c for c, _, _ in found).most_common(1)[0][0]
    a, b = next((x, y) for c, x, y in found if c == category)
    return _symptom(category, verb, a, b), failure


# --------------------------------------------------------------------------- rules: inputs

#: Input features in the order they are reported: key → (verb, object) after "inputs that".
_FEATURES: Final = {
    "empty": ("describe", "an empty collection"),
    "empty_text": ("include", "an empty text"),
    "single": ("hold", "a single item"),
    "single_row": ("hold", "a single row"),
    "single_column": ("hold", "a single column"),
    "short_text": ("include", "a text of one character"),
    "negative": ("contain", "negative numbers"),
    "zero": ("contain", "zeros"),
    "duplicates": ("contain", "repeated values"),
    "many_digits": ("contain", "numbers of many digits"),
    "large": ("contain", "very large numbers"),
    "fraction": ("contain", "fractional numbers"),
    "mixed_case": ("contain", "words in mixed letter case"),
    "symbols": ("contain", "symbols other than letters and digits"),
    "unsorted": ("list", "their values out of sorted order"),
    "sorted": ("list", "their values already in sorted order"),
    "big": ("are", "large, with thousands of values"),
    "small": ("are", "small, with only a handful of values"),
}
_INT: Final = re.compile(r"-?\d+\Z")
_FLOAT: Final = re.compile(r"-?\d*\.\d+\Z")


def _value_features(values: Sequence[Any], found: set[str]) -> None:
    """Features of a flat sequence of values (numbers, words or both)."""
    numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if any(v < 0 for v in numbers):
        found.add("negative")
    if any(v == 0 for v in numbers):
        found.add("zero")
    if any(isinstance(v, float) and not v.is_integer() for v in numbers):
        found.add("fraction")
    if any(abs(v) >= 10**18 for v in numbers):
        found.add("many_digits")
    elif any(abs(v) >= 10**9 for v in numbers):
        found.add("large")
    keys = [json.dumps(v, sort_keys=True) for v in values]
    if len(set(keys)) < len(keys):
        found.add("duplicates")
    words = [v for v in values if isinstance(v, str)]
    if any(w.lower() != w and w.upper() != w for w in words) or (
        any(w.isupper() for w in words) and any(w.islower() for w in words)
    ):
        found.add("mixed_case")
    if any(re.search(r"[^\w\s]", w) for w in words):
        found.add("symbols")
    if len(numbers) >= 3 and len(numbers) == len(values):
        if numbers == sorted(numbers):
            found.add("sorted")
        elif numbers != sorted(numbers, reverse=True):
            found.add("unsorted")


def _parse_token(token: str) -> Any:
    if _INT.match(token):
        return int(token)
    if _FLOAT.match(token):
        return float(token)
    return token


def _stdio_features(text: str) -> set[str]:
    found: set[str] = set()
    lines = [line.split() for line in text.splitlines() if line.strip()]
    tokens = [token for line in lines for token in line]
    if not tokens:
        return {"empty"}
    body = [token for line in lines[1:] for token in line] if len(lines) > 1 else tokens[1:]
    head = lines[0]
    if len(head) == 1 and _INT.match(head[0]):
        if int(head[0]) == 0 or not body:
            found.add("empty")
        elif int(head[0]) == 1:
            found.add("single")
    _value_features([_parse_token(token) for token in body], found)
    if len(tokens) >= 1000:
        found.add("big")
    elif len(tokens) <= 8:
        found.add("small")
    return found


def _call_features(test: Test) -> set[str]:
    found: set[str] = set()
    size = 0
    scalars: list[Any] = []
    for value in [*(test.args or []), *(test.kwargs or {}).values()]:
        if isinstance(value, str):
            size += len(value)
            if not value:
                found.add("empty_text")
            elif len(value) == 1:
                found.add("short_text")
            scalars.append(value)
        elif isinstance(value, list) and value and all(isinstance(r, list) for r in value):
            size += sum(len(row) for row in value)
            if any(not row for row in value):
                found.add("empty")
            elif len(value) == 1:
                found.add("single_row")
            elif all(len(row) == 1 for row in value):
                found.add("single_column")
            _value_features([x for row in value for x in row], found)
        elif isinstance(value, list):
            size += len(value)
            if not value:
                found.add("empty")
            elif len(value) == 1:
                found.add("single")
            _value_features(value, found)
        else:
            size += 1
            scalars.append(value)
    _value_features(scalars, found)
    if size >= 1000:
        found.add("big")
    elif size <= 3:
        found.add("small")
    return found


#: What the solution fails to keep track of, when the failing inputs share a feature (L3).
_FEATURE_STATES: Final = {
    "duplicates": "does not keep enough information about repeated values as it goes",
    "negative": "loses track of the sign of the values it combines",
    "zero": "does not keep a zero value apart from a missing one",
    "empty": "starts from a state that does not fit an input with nothing to process",
    "empty_text": "starts from a state that does not fit an input with nothing to process",
    "single": "does not carry its state correctly when there is only one item to process",
    "single_row": "does not carry its state correctly when there is only one row to process",
    "single_column": "does not carry its state correctly when every row holds one item",
    "many_digits": "does not keep the full precision of the large values it handles",
    "large": "does not keep the full precision of the large values it handles",
    "unsorted": "relies on the values arriving in order and keeps nothing for values that "
    "arrive out of order",
    "mixed_case": "keeps apart words that differ only in letter case",
}


def _test_features(context: TurnContext, shown_id: str, shown_input: str,
                   memo: dict[Any, frozenset[str]]) -> frozenset[str]:
    """The input features of one shown test (memoised by the input's content)."""
    test = None
    if context.instance.kind == "call":
        test = next((t for t in context.instance.tests if t.id == shown_id), None)
    key: Any = (shown_input if test is None or test.kind != "call"
                else msgspec.json.encode((test.args, test.kwargs)))
    found = memo.get(key)
    if found is None:
        if len(memo) >= _FEATURE_MEMO:
            memo.clear()
        found = memo[key] = frozenset(
            _stdio_features(shown_input) if test is None or test.kind != "call"
            else _call_features(test))
    return found


#: Input feature sets a rules model keeps (keyed by input content).
_FEATURE_MEMO: Final = 4096


def input_features(context: TurnContext, evidence: Evidence,
                    memo: dict[Any, frozenset[str]] | None = None,
                    ) -> tuple[str | None, str | None]:
    """Words ("that ...") for the (at most two) features the shown failing inputs share,
    and the state-tracking reading of the first one that has one."""
    memo = {} if memo is None else memo
    per_test: list[frozenset[str]] = []
    for shown in evidence.tests:
        if shown.input is None:
            continue  # the level may not see the inputs
        per_test.append(_test_features(context, shown.id, shown.input, memo))
    counts = Counter(feature for features in per_test for feature in features)
    everywhere = [key for key in _FEATURES if per_test and counts[key] == len(per_test)]
    mostly = [key for key in _FEATURES if counts[key] * 2 > len(per_test)]
    keys = (everywhere or mostly)[:2]
    if not keys:
        return None, None
    chosen = [_FEATURES[key] for key in keys]
    state = next((_FEATURE_STATES[key] for key in keys if key in _FEATURE_STATES), None)
    if len(chosen) == 2 and chosen[0][0] == chosen[1][0]:
        return f"that {chosen[0][0]} {chosen[0][1]} and {chosen[1][1]}", state
    return "that " + " and ".join(f"{verb} {thing}" for verb, thing in chosen), state

