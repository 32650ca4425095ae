"""The deterministic rule-based feedback model ``rules``.

**rules** (``RulesFeedback``) writes a level-``context.level`` hint from
``context.evidence`` (masked again here, so it never sees more than the level
allows): L1 the symptom (mismatch summaries and failure types); L2 features shared
by the failing inputs (empty, single item, negatives, zeros, duplicates, sortedness,
magnitude, size, letter case, symbols), never the inputs themselves; L3 the information the
solution fails to keep, in state-tracking words; L4 the candidate's suspicious region
(its line range and the construct there, named from the candidate's own code); L5
the missing concept and L6 a repair direction in words, both from the diff between
the candidate and the reference. L4 locates the region with that diff too, standing
in for the diagnosis an LLM makes from the failing tests and the code: the hint
names only the candidate's lines and constructs, never the reference. The diff hunk
chosen is the one with most reference lines in ``context.target_lines`` (plus the
evidence traces at L5-L6), else the first. Each level has three wordings, tried in
turn from ``context.attempt``; the first that passes ``_leakage.validate_hint`` at the
level (default policy) is returned, so regeneration gives a different text (if none
passes, the attempt's own wording, which the caller's validator then rejects). With
``level=None`` (a baseline without level control) it writes an L6-style hint.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any, ClassVar, Final, NamedTuple

import msgspec

from ..core.errors import ClientError, ConfigError
from ..core.types import Completion, Message, Test
from ..protocol.context import TurnContext, estimate_usage
from ..protocol.hints import Evidence, describe_failure, mask_evidence
from ..protocol.leakage import HiddenData, hidden_data, validate_hint
from .rules_code import advise, describe_construct, find_fault, line_span

__all__ = ["RulesFeedback"]


# --------------------------------------------------------------------------- rules: symptom


class _Symptom(NamedTuple):
    phrase: str  # "prints larger numbers than expected"
    reading: str  # what it suggests, for L1
    state: str  # the state-tracking reading, for L3


def _symptom(category: str, verb: str, a: int = 0, b: int = 0) -> _Symptom:
    """Words for one mismatch category; ``verb`` is "prints" or "returns"."""
    if category == "larger":
        return _Symptom(
            f"{verb} larger numbers than expected",
            "which suggests that something is counted or added more often than it ought to be",
            "carries more into its result than the problem allows, so the answer grows too large",
        )
    if category == "smaller":
        return _Symptom(
            f"{verb} smaller numbers than expected",
            "as if some contributions were missed along the way",
            "loses part of the information it collects, so the answer comes out too small",
        )
    if category == "yesno":
        return _Symptom(
            f"{verb} the opposite yes/no answer",
            "so these cases are decided the wrong way",
            "decides from incomplete information, so it picks the wrong one of the two answers",
        )
    if category == "lines":
        more = "more" if a > b else "fewer"
        return _Symptom(
            f"prints {more} output lines than expected",
            "so the number of answers it produces is off",
            "does not keep count of how many answers it still owes",
        )
    if category == "tokens":
        more = "more" if a > b else "fewer"
        return _Symptom(
            f"prints {more} values on an output line than expected",
            "so the shape of the answer is off",
            "does not keep track of how many values belong to each part of the answer",
        )
    if category == "none":
        return _Symptom(
            "returns nothing where a value is expected",
            "so for these inputs no answer is produced at all",
            "never reaches a state in which it has an answer to give back",
        )
    if category == "list":
        more = "more" if a > b else "fewer"
        return _Symptom(
            f"returns a list with {more} items than expected",
            "so some items are produced or dropped wrongly",
            "does not keep exact account of which items belong in the result",
        )
    if category == "items":
        return _Symptom(
            "returns a list of the right length whose items are partly wrong",
            "so the overall shape is right but some values are not",
            "keeps the right number of results but not the right contents for each of them",
        )
    if category == "type":
        return _Symptom(
            "returns a value of the wrong type",
            "so the answer does not even have the expected form",
            "builds its answer in a form that differs from the one the problem asks for",
        )
    if category.startswith("runtime:"):
        name = category.split(":", 1)[1]
        return _Symptom(
            "stops with a runtime error" if name == "unknown" else f"stops with {name}",
            "before it finishes its answer",
            _RUNTIME_STATE.get(name, "reaches a state it does not account for on these inputs"),
        )
    if category == "timeout":
        return _Symptom(
            "runs longer than the time limit allows",
            "so its running time grows too fast with the input",
            "does not keep intermediate results it has already worked out, so it repeats work",
        )
    return _Symptom(
        describe_failure(category) if category != "different" else f"{verb} wrong values",
        "although the answer has the expected form" if category == "different" else "",
        _GENERIC_STATE,
    )


_GENERIC_STATE: Final = (
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
    ("lines", re.compile(r"prints (\d+) output lines? where (\d+)")),
    ("tokens", re.compile(r"line has (\d+) values? where (\d+)")),
    ("list", re.compile(r"returns a list of (\d+) items? where (\d+)")),
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


def _main_symptom(evidence: Evidence, verb: str) -> tuple[_Symptom, str]:
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


def _input_features(context: TurnContext, evidence: Evidence,
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


# --------------------------------------------------------------------------- rules: model


def _sentence(text: str) -> str:
    text = " ".join(text.split())
    return text[0].upper() + text[1:] if text else text


class RulesFeedback:
    """The deterministic rule-based feedback model ``rules``; see the module docstring."""

    uses_context: ClassVar[bool] = True

    def __init__(self, name: str = "rules") -> None:
        self.name = name
        self._closed = False
        #: input content -> its features: the same failing tests are shown turn after turn
        self._features: dict[Any, frozenset[str]] = {}

    def __repr__(self) -> str:
        return f"RulesFeedback(name={self.name!r})"

    def drafts(self, context: TurnContext) -> list[str]:
        """The level's three wordings, most specific first (before validation)."""
        if context.evidence is None:
            raise ConfigError(f"{self.name} needs the masked evidence in its TurnContext")
        level = context.level
        evidence = mask_evidence(level, context.evidence) if level is not None else context.evidence
        verb = "returns" if context.instance.kind == "call" else "prints"
        symptom, failure = _main_symptom(evidence, verb)
        basic = describe_failure(failure)
        said = symptom.phrase + (f", {symptom.reading}" if symptom.reading else "")
        if level == 1:
            return [
                f"On these hidden tests the program {said}.",
                f"The observed output differs from the correct one: the program {symptom.phrase}.",
                f"On some hidden tests the program {basic}.",
            ]
        features, feature_state = _input_features(context, evidence, self._features)
        pattern = features or "of this kind"
        if level == 2:
            return [
                f"The failure shows up on inputs {pattern}; there the program {symptom.phrase}.",
                f"This failure occurs on valid inputs {features}."
                if features
                else "This failure occurs on valid inputs of a kind that the examples in the "
                "statement do not cover.",
                f"On some hidden tests the program {basic}; the failing inputs are valid inputs "
                "of a kind the statement's examples do not cover.",
            ]
        if level == 3:
            state = symptom.state
            if state == _GENERIC_STATE and feature_state is not None:
                state = feature_state
            return [
                f"On inputs {pattern}, the solution {state}.",
                f"The solution {symptom.state}; this shows when the program {symptom.phrase}.",
                f"On some hidden tests the program {basic}; it does not keep all the "
                "information it needs up to date while it processes the input.",
            ]
        program = evidence.candidate_code or context.program
        reference = evidence.reference_code or context.instance.reference
        targets = set(context.target_lines)
        for shown in evidence.tests:
            targets.update(shown.trace or ())
        fault = find_fault(program, reference, targets)
        if fault is None:
            return self._without_fault(level, basic, symptom)
        construct = describe_construct(program, fault.first)
        span = line_span(fault.first, fault.last)
        if level == 4:
            return [
                f"The issue is likely in {construct}, at {span} of the current program; on "
                f"inputs {pattern} the program {symptom.phrase}.",
                f"The most suspicious part of the program for these failures is {span}: "
                f"{construct}.",
                f"The fault is likely around {span} of the current program.",
            ]
        advice = advise(fault, construct)
        if level == 5:
            return [
                f"{advice.concept} This concerns {construct} ({span}).",
                f"On inputs {pattern}: {advice.concept[0].lower()}{advice.concept[1:]}",
                f"The solution needs to respect a condition of the problem that these inputs "
                f"exercise: it {symptom.state}.",
            ]
        return [
            advice.direction,
            f"{advice.direction} This matters on inputs {pattern}.",
            f"Revise {construct} ({span}) so that the program handles inputs {pattern} the "
            "way the problem statement requires.",
        ]

    @staticmethod
    def _without_fault(level: int | None, basic: str, symptom: _Symptom) -> list[str]:
        """Wordings when the candidate's code does not differ from the reference."""
        if level == 4:
            return [
                f"The fault is likely in the part of the program that computes the answer, "
                f"where it {symptom.phrase.replace('prints', 'produces')}.",
                f"On some hidden tests the program {basic}; the fault is likely in the part of "
                "the program that computes the answer for these inputs.",
                "The fault is likely in the computation of the answer itself.",
            ]
        if level == 5:
            return [
                f"The solution needs to respect a condition of the problem for every valid "
                f"input: it {symptom.state}.",
                f"On some hidden tests the program {basic}; the solution does not respect a "
                "condition of the problem that holds for every valid input.",
                "The solution misses a condition that holds for every valid input.",
            ]
        return [
            f"Revise the computation of the answer so that it no longer {symptom.phrase}; "
            "re-read the conditions of the problem statement.",
            f"On some hidden tests the program {basic}. Re-read the conditions of the problem "
            "statement and revise the computation of the answer accordingly.",
            "Revise the computation of the answer so that it holds for every valid input.",
        ]

    def hint(self, context: TurnContext, hidden: HiddenData | None = None) -> str:
        """The first draft, from ``context.attempt`` on, that passes the leakage validator."""
        drafts = [_sentence(draft) for draft in self.drafts(context)]
        assert context.evidence is not None  # drafts() checked it
        hidden = hidden or context.hidden or hidden_data(context.instance)
        start = context.attempt % len(drafts)
        order = drafts[start:] + drafts[:start]
        level = context.level if context.level is not None else 6
        for draft in order:
            if not validate_hint(draft, level, context.evidence, context.program, hidden):
                return draft
        return order[0]

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
        context: TurnContext | None = None,
    ) -> Completion:
        """Write the hint for ``context``; the messages only count towards usage."""
        if self._closed:
            raise ClientError(f"{self!r} is closed")
        if context is None:
            raise ConfigError(f"{self.name} is an offline model and needs a TurnContext")
        text = self.hint(context)
        await asyncio.sleep(0)
        return Completion(text=text, model=self.name, usage=estimate_usage(messages, text), attempts=1)

    async def aclose(self) -> None:
        """Mark the model closed; nothing else is held."""
        self._closed = True
