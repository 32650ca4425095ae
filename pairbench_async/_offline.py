"""Built-in offline models: the simulated candidate ``sim:SKILL`` and the feedback model ``rules``.

They let a whole PAIR-BENCH sweep run with no network and give the same records for
the same seed on every machine. Both implement the ``ModelClient`` protocol plus a
``context`` keyword: a :class:`TurnContext` of out-of-band facts that the orchestrator
gives offline models only (a real LLM sees nothing but the messages). Without a
context they raise ``ConfigError``: they cannot work from text alone. The messages
only count towards the estimated token usage (``ceil(chars / 4)``).

**sim:SKILL[?latency=S]** (``SimCandidate``), SKILL in [0, 1]. One call = one revision:

1. ``context.program`` and ``context.instance.reference`` are split into lines and
   diffed with ``difflib.SequenceMatcher(autojunk=False)``; every non-equal opcode is a
   hunk. A hunk *touches the target* when ``context.target_lines`` is non-empty and
   holds one of the hunk's reference lines (``j1+1..j2``; for a hunk the reference
   lacks, the reference lines on either side of the gap).
2. Hunks are visited in order, one uniform draw each; a hunk is replaced by the
   reference's lines with probability ``p = clamp(SKILL * f(level) * g, 0, 1)``, where
   ``f(None) = 0.10`` (turn 0 and no-hint turns), ``f(1..6) = 0.20, 0.30, 0.45, 0.60,
   0.80, 1.00`` and ``g = 1.5`` for a hunk touching the target, else ``g = 1``.
3. Then one more draw: with probability ``0.05 * (1 - SKILL)`` the revision regresses.
   If some region where the buggy program differs from the reference currently equals
   the reference (a fixed hunk, possibly fixed this very turn), one of them, chosen
   uniformly, gets the buggy program's version back; otherwise one non-blank line of
   a region equal to the reference, chosen uniformly, is deleted. Trajectories are
   therefore not monotone for SKILL < 1.

So ``sim:1.0`` fixes every hunk in one level-6 turn and ``sim:0.0`` only ever
regresses (5 % of calls). The generator is ``random.Random`` seeded with a SHA-256 of
(``context.seed``, turn, instance id, the model name without its ``?options``), so
adding latency never changes a trajectory. The reply is one line of prose and the
full program in a fenced python block (so the code-extraction path is exercised).
``?latency=S`` sleeps ``S * jitter`` seconds, jitter uniform in [0.8, 1.2] from a
second seeded generator; ``latency_ms`` reports that simulated delay, not the wall
clock, so records stay identical across runs.

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

import ast
import asyncio
import difflib
import hashlib
import json
import keyword
import math
import random
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any, ClassVar, Final, Literal, NamedTuple

import msgspec

from ._errors import ClientError, ConfigError
from ._hints import Evidence, describe_failure, mask_evidence
from ._leakage import HiddenData, hidden_data, validate_hint
from ._prompts import fenced
from ._records import Completion, Instance, Message, Test, Usage

__all__ = [
    "LEVEL_FACTORS",
    "OFFLINE_SCHEMES",
    "REGRESSION_RATE",
    "TARGET_FACTOR",
    "RulesFeedback",
    "SimCandidate",
    "SimRevision",
    "TurnContext",
    "parse_offline_spec",
    "stable_seed",
]

#: Spec schemes served by this module (``parse_model_spec`` gives the scheme).
OFFLINE_SCHEMES: Final = ("sim", "rules")
#: f(level) of the apply probability; ``None`` is turn 0 or a no-hint turn.
LEVEL_FACTORS: Final[dict[int | None, float]] = {
    None: 0.10,
    1: 0.20,
    2: 0.30,
    3: 0.45,
    4: 0.60,
    5: 0.80,
    6: 1.00,
}
#: g for a hunk whose reference lines meet the targeted scenario's trace.
TARGET_FACTOR: Final = 1.5
#: Regression probability per call is ``REGRESSION_RATE * (1 - skill)``.
REGRESSION_RATE: Final = 0.05
_JITTER: Final = (0.8, 1.2)
_MAX_LATENCY: Final = 3600.0


class TurnContext(msgspec.Struct, frozen=True, kw_only=True):
    """Out-of-band facts for offline models; a real LLM only ever sees the messages.

    ``program`` is c_{t-1} (the buggy program at turn 0); ``target_lines`` are the
    reference lines executed by the targeted scenario's tests; ``evidence`` is the
    *masked* evidence of a feedback call (``None`` for candidate calls).
    """

    instance: Instance
    program: str
    turn: int
    level: int | None
    target_lines: list[int]
    evidence: Evidence | None
    attempt: int = 0
    seed: int
    protocol: str = "pair"
    #: the instance's hidden data, when the caller already holds it (it keeps the
    #: validator's per-instance index); rebuilt from ``instance`` otherwise
    hidden: HiddenData | None = None


Regression = Literal["", "revert", "drop"]


class SimRevision(msgspec.Struct, frozen=True, kw_only=True):
    """What one simulated revision did: the program, the hunks it found and applied,
    and the regression it made ("" for none)."""

    program: str
    hunks: int
    applied: int
    regression: Regression = ""


def stable_seed(*parts: object) -> int:
    """A 64-bit seed from ``parts`` that is the same in every process (unlike ``hash``)."""
    text = "\x1f".join(str(part) for part in parts)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def _usage(messages: Sequence[Message], reply: str) -> Usage:
    return Usage(
        prompt_tokens=sum(math.ceil(len(m.content) / 4) for m in messages),
        completion_tokens=math.ceil(len(reply) / 4),
    )


def _text(lines: Sequence[str]) -> str:
    return "\n".join(lines) + "\n" if lines else ""


#: Diffs a sim model keeps (a few MB at most).
_DIFF_MEMO: Final = 4096


def _opcodes(a: Sequence[str], b: Sequence[str]) -> Sequence[tuple[str, int, int, int, int]]:
    return difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()


def _reference_lines(j1: int, j2: int, size: int) -> set[int]:
    """1-based reference lines of a hunk; for a gap in the reference, its two neighbours."""
    if j2 > j1:
        return set(range(j1 + 1, j2 + 1))
    return {line for line in (j1, j1 + 1) if 1 <= line <= size}


def _check_skill(skill: float) -> float:
    if not (isinstance(skill, (int, float)) and math.isfinite(skill) and 0.0 <= skill <= 1.0):
        raise ConfigError(f"sim skill must be a number in [0, 1], got {skill!r}")
    return float(skill)


def _check_latency(latency: float) -> float:
    if not (isinstance(latency, (int, float)) and math.isfinite(latency)):
        raise ConfigError(f"sim latency must be a finite number of seconds, got {latency!r}")
    if not 0.0 <= latency <= _MAX_LATENCY:
        raise ConfigError(f"sim latency must be in [0, {_MAX_LATENCY:g}] seconds, got {latency}")
    return float(latency)


# --------------------------------------------------------------------------- sim


class SimCandidate:
    """The seeded simulated candidate ``sim:SKILL``; see the module docstring."""

    uses_context: ClassVar[bool] = True

    def __init__(self, skill: float, *, latency: float = 0.0, name: str | None = None) -> None:
        self.skill = _check_skill(skill)
        self.latency = _check_latency(latency)
        self.name = name if name is not None else f"sim:{self.skill:g}"
        #: The name without options: what seeds the draws.
        self.key = self.name.split("?", 1)[0]
        self._closed = False
        #: (program, reference) -> opcodes: episodes of one instance revisit the same
        #: programs (runs, protocols, resumed turns); bounded, cleared when full
        self._diffs: dict[tuple[str, str], Sequence[tuple[str, int, int, int, int]]] = {}

    def _diff(self, program: str, reference: str) -> Sequence[tuple[str, int, int, int, int]]:
        key = (program, reference)
        found = self._diffs.get(key)
        if found is None:
            if len(self._diffs) >= _DIFF_MEMO:
                self._diffs.clear()
            found = self._diffs[key] = tuple(_opcodes(program.splitlines(), reference.splitlines()))
        return found

    def __repr__(self) -> str:
        return f"SimCandidate(skill={self.skill}, latency={self.latency}, name={self.name!r})"

    def revise(self, context: TurnContext) -> SimRevision:
        """The revised program for ``context`` (pure and deterministic)."""
        rng = random.Random(
            stable_seed("sim", context.seed, context.turn, context.instance.id, self.key)
        )
        reference = context.instance.reference.splitlines()
        current = context.program.splitlines()
        factor = LEVEL_FACTORS.get(context.level)
        if factor is None:
            raise ConfigError(f"hint level must be None or 1..6, got {context.level!r}")
        targets = set(context.target_lines)
        out: list[str] = []
        hunks = applied = 0
        for tag, i1, i2, j1, j2 in self._diff(context.program, context.instance.reference):
            if tag == "equal":
                out.extend(current[i1:i2])
                continue
            hunks += 1
            touches = bool(targets & _reference_lines(j1, j2, len(reference)))
            p = min(1.0, max(0.0, self.skill * factor * (TARGET_FACTOR if touches else 1.0)))
            if rng.random() < p:
                out.extend(reference[j1:j2])
                applied += 1
            else:
                out.extend(current[i1:i2])
        regression: Regression = ""
        if rng.random() < REGRESSION_RATE * (1.0 - self.skill):
            out, regression = _regress(out, reference, context.instance.buggy.splitlines(), rng)
        return SimRevision(program=_text(out), hunks=hunks, applied=applied, regression=regression)

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
        context: TurnContext | None = None,
    ) -> Completion:
        """Revise ``context.program``; ``temperature``, ``max_tokens`` and ``seed`` are ignored."""
        if self._closed:
            raise ClientError(f"{self!r} is closed")
        if context is None:
            raise ConfigError(f"{self.name} is an offline model and needs a TurnContext")
        revision = self.revise(context)
        changed = sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2
                      in self._diff(context.program, revision.program) if tag != "equal")
        if changed:
            prose = f"I revised the program ({changed} line{'s' if changed != 1 else ''} changed)."
        else:
            prose = "I reviewed the program and kept it as it is."
        text = f"{prose}\n\n{fenced(revision.program)}\n"
        delay = 0.0
        if self.latency > 0:
            jitter = random.Random(
                stable_seed("latency", context.seed, context.turn, context.instance.id, self.key)
            ).uniform(*_JITTER)
            delay = self.latency * jitter
        await asyncio.sleep(delay)
        return Completion(
            text=text,
            model=self.name,
            usage=_usage(messages, text),
            latency_ms=delay * 1000.0,
            attempts=1,
        )

    async def aclose(self) -> None:
        """Mark the model closed; nothing else is held."""
        self._closed = True


def _regress(
    lines: list[str], reference: list[str], buggy: list[str], rng: random.Random
) -> tuple[list[str], Regression]:
    """Undo one fixed hunk (back to the buggy version), else drop one reference-equal line."""
    position: dict[int, int] = {}
    for tag, i1, i2, j1, _j2 in _opcodes(lines, reference):
        if tag == "equal":
            position.update((j1 + k, i1 + k) for k in range(i2 - i1))
    fixed: list[tuple[int, int, list[str]]] = []
    for tag, j1, j2, k1, k2 in _opcodes(reference, buggy):
        if tag == "equal":
            continue
        if j2 > j1:
            spots = [position.get(j) for j in range(j1, j2)]
            if None in spots:
                continue
            first = spots[0]
            assert first is not None
            if spots == list(range(first, first + len(spots))):
                fixed.append((first, first + len(spots), buggy[k1:k2]))
        else:
            before = position.get(j1 - 1) if j1 > 0 else -1
            after = position.get(j1) if j1 < len(reference) else len(lines)
            if before is not None and after is not None and after == before + 1:
                fixed.append((after, after, buggy[k1:k2]))
    if fixed:
        start, stop, replacement = rng.choice(fixed)
        return lines[:start] + replacement + lines[stop:], "revert"
    equal = [position[j] for j in sorted(position) if reference[j].strip()]
    if not equal:
        return lines, ""
    drop = rng.choice(equal)
    return lines[:drop] + lines[drop + 1 :], "drop"


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


# --------------------------------------------------------------------------- rules: code


class _Fault(NamedTuple):
    kind: str  # replace | insert | delete
    first: int  # 1-based candidate lines (for an insert: the lines around the gap)
    last: int
    candidate: list[str]
    reference: list[str]


def _fault(program: str, reference: str, targets: set[int]) -> _Fault | None:
    """The candidate/reference hunk most related to the target lines (else the first)."""
    a, b = program.splitlines(), reference.splitlines()
    best: tuple[int, int] | None = None
    chosen: _Fault | None = None
    for index, (tag, i1, i2, j1, j2) in enumerate(_opcodes(a, b)):
        if tag == "equal":
            continue
        if i2 > i1:
            first, last = i1 + 1, i2
        else:
            first, last = max(1, i1), min(max(1, len(a)), i1 + 1)
        fault = _Fault(tag, first, last, a[i1:i2], b[j1:j2])
        score = (len(targets & _reference_lines(j1, j2, len(b))), -index)
        if best is None or score > best:
            best, chosen = score, fault
    return chosen


def _span(first: int, last: int) -> str:
    return f"line {first}" if first == last else f"lines {first}-{last}"


_COMPARE_WORDS: Final = {
    ast.Lt: "is less than",
    ast.LtE: "is at most",
    ast.Gt: "is greater than",
    ast.GtE: "is at least",
    ast.Eq: "equals",
    ast.NotEq: "differs from",
    ast.In: "occurs in",
    ast.NotIn: "does not occur in",
    ast.Is: "is",
    ast.IsNot: "is not",
}
_BINOP_WORDS: Final = {
    ast.Add: "plus",
    ast.Sub: "minus",
    ast.Mult: "times",
    ast.Div: "divided by",
    ast.FloorDiv: "divided (rounding down) by",
    ast.Mod: "modulo",
    ast.Pow: "to the power",
}


def _words(node: ast.AST, depth: int = 0) -> str | None:
    """An expression in plain words, or ``None`` when it is too involved to say."""
    if depth > 4:
        return None
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or node.value is None:
            return str(node.value)
        if isinstance(node.value, (int, float)):
            return str(node.value)
        if node.value == "":
            return "the empty text"
        if isinstance(node.value, str) and len(node.value) <= 3 and node.value.isprintable():
            return f'the text "{node.value}"'
        return "a fixed text" if isinstance(node.value, str) else None
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        items = [_words(element, depth + 1) for element in node.elts]
        if not items or len(items) > 4 or any(item is None for item in items):
            return None
        return " or ".join(item for item in items if item is not None)
    if isinstance(node, ast.Attribute):
        inner = _words(node.value, depth + 1)
        return None if inner is None else f"the {node.attr} of {inner}"
    if isinstance(node, ast.Subscript):
        inner = _words(node.value, depth + 1)
        return None if inner is None else f"an item of {inner}"
    if isinstance(node, ast.Call):
        name = _call_name(node)
        if name == "len" and len(node.args) == 1:
            inner = _words(node.args[0], depth + 1)
            return None if inner is None else f"the length of {inner}"
        return None if name is None else f"the result of {name}"
    if isinstance(node, ast.UnaryOp):
        if isinstance(node.op, ast.Not):
            return _truth(node, depth)
        inner = _words(node.operand, depth + 1)
        return f"minus {inner}" if inner is not None and isinstance(node.op, ast.USub) else None
    if isinstance(node, ast.BinOp):
        left, right = _words(node.left, depth + 1), _words(node.right, depth + 1)
        op = _BINOP_WORDS.get(type(node.op))
        return None if None in (left, right, op) else f"{left} {op} {right}"
    if isinstance(node, ast.BoolOp):
        parts = [_truth(value, depth + 1) for value in node.values]
        if any(part is None for part in parts):
            return None
        joiner = " and " if isinstance(node.op, ast.And) else " or "
        return joiner.join(part for part in parts if part is not None)
    if isinstance(node, ast.Compare):
        parts = [_words(node.left, depth + 1)]
        for cmp, operand in zip(node.ops, node.comparators, strict=True):
            word = _COMPARE_WORDS.get(type(cmp))
            if isinstance(operand, (ast.Tuple, ast.List, ast.Set)) and word in _MEMBERSHIP:
                word = _MEMBERSHIP[word]
            parts += [word, _words(operand, depth + 1)]
        if any(part is None for part in parts):
            return None
        return " ".join(part for part in parts if part is not None)
    return None


_MEMBERSHIP: Final = {"occurs in": "is", "does not occur in": "is neither"}


def _truth(node: ast.AST, depth: int = 0) -> str | None:
    """A condition in words, reading a bare value as "is non-empty" and ``not x`` as "is empty"."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = _words(node.operand, depth + 1)
        if inner is None:
            return None
        if isinstance(node.operand, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)):
            return f"{inner} is empty"
        return f"it is not the case that {inner}"
    words = _words(node, depth)
    if words is not None and isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)):
        return f"{words} is non-empty"
    return words


def _call_name(node: ast.Call) -> str | None:
    if isinstance(node.func, ast.Name):
        return node.func.id
    if isinstance(node.func, ast.Attribute):
        return node.func.attr
    return None


def _target_words(node: ast.AST) -> str:
    if isinstance(node, (ast.Tuple, ast.List)):
        return " and ".join(_target_words(element) for element in node.elts)
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Subscript):
        return f"an item of {_target_words(node.value)}"
    if isinstance(node, ast.Attribute):
        return f"the {node.attr} of {_target_words(node.value)}"
    return "a value"


def _describe(node: ast.stmt, header: bool) -> str:
    """A statement as "the ..." words: what an L4 hint may point at."""
    if isinstance(node, (ast.For, ast.AsyncFor)):
        it = node.iter
        if isinstance(it, ast.Call) and _call_name(it) == "range":
            what = "a range of positions"
        elif isinstance(it, (ast.Tuple, ast.List, ast.Set)):
            what = "a fixed collection of values"
        elif isinstance(it, ast.Subscript):
            what = f"a slice of {_target_words(it.value)}"
        elif isinstance(it, ast.Call) and _call_name(it) is not None:
            what = f"the result of {_call_name(it)}"
        else:
            what = _target_words(it)
        loop = f"the loop over {what}"
        return f"the header of {loop}" if header else loop
    if isinstance(node, ast.While):
        return "the while-loop and its condition" if header else "the while-loop"
    if isinstance(node, ast.If):
        words = _truth(node.test)
        return f"the check whether {words}" if words and len(words) <= 80 else "the conditional"
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return f"the definition of {node.name}" if header else f"the function {node.name}"
    if isinstance(node, ast.AugAssign):
        return f"the update of {_target_words(node.target)}"
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return f"the computation of {' and '.join(_target_words(t) for t in targets)}"
    if isinstance(node, ast.Return):
        return "the returned value"
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        name = _call_name(node.value)
        if name == "print":
            return "the output step"
        return f"the call of {name}" if name else "the call"
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return "the imports"
    if isinstance(node, (ast.Break, ast.Continue)):
        return "the early exit"
    return "the statement"


_BLOCKS: Final = (ast.For, ast.AsyncFor, ast.While, ast.If, ast.With, ast.Try)
_FUNCTIONS: Final = (ast.FunctionDef, ast.AsyncFunctionDef)


def _construct(program: str, line: int) -> str:
    """The innermost statement at ``line`` with its enclosing block and function, in words."""
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError):
        return "this part of the program"
    chain = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.stmt) and node.lineno <= line <= (node.end_lineno or node.lineno)
    ]
    if not chain:
        return "this part of the program"
    chain.sort(key=lambda node: (node.end_lineno or node.lineno) - node.lineno)
    inner = chain[0]
    text = _describe(inner, header=inner.lineno == line)
    block = next((n for n in chain[1:] if isinstance(n, _BLOCKS)), None)
    if block is not None:
        text += f" inside {_describe(block, header=False)}"
    function = next((n for n in chain[1:] if isinstance(n, _FUNCTIONS)), None)
    if function is not None and not isinstance(inner, _FUNCTIONS):
        text += f" in the function {function.name}"
    return text


#: Call name → (concept when the reference adds it, what the repaired code then does).
_ADDED_CALLS: Final = {
    "abs": (
        "Only the magnitude of the value matters for this quantity, not its sign.",
        "works with the absolute value",
    ),
    "sorted": (
        "The computation relies on the values being in order, which the input does not guarantee.",
        "works on the values in sorted order",
    ),
    "sort": (
        "The computation relies on the values being in order, which the input does not guarantee.",
        "works on the values in sorted order",
    ),
    "lower": (
        "Letter case carries no meaning in the comparison the problem asks for.",
        "treats text regardless of letter case",
    ),
    "upper": (
        "Letter case carries no meaning in the comparison the problem asks for.",
        "treats text regardless of letter case",
    ),
    "max": (
        "The largest of the values involved is what matters here, not an arbitrary one.",
        "takes the largest of the values into account",
    ),
    "min": (
        "The smallest of the values involved is what matters here, not an arbitrary one.",
        "takes the smallest of the values into account",
    ),
    "Counter": (
        "How many times each value occurs matters: repeated values are not interchangeable.",
        "counts the occurrences of each value",
    ),
    "set": (
        "Repeated values count only once for this quantity.",
        "considers each distinct value only once",
    ),
    "heappush": (
        "Items are to be processed by priority, not in the order they arrive.",
        "takes items in priority order with a heap",
    ),
    "heappop": (
        "Items are to be processed by priority, not in the order they arrive.",
        "takes items in priority order with a heap",
    ),
    "reversed": (
        "The direction in which the values are visited matters here.",
        "walks the values in the opposite direction",
    ),
    "len": (
        "The number of items is part of the rule here.",
        "takes the number of items into account",
    ),
}
_REMOVED_CALLS: Final = {
    "float": (
        "Exact integer arithmetic is needed: a floating-point conversion loses precision on "
        "very large values.",
        "no longer passes the values through a floating-point conversion",
    ),
    "popleft": (
        "Items are to be processed by priority, not in the order they arrive.",
        "takes items in priority order rather than first come, first served",
    ),
}
_OPERATOR: Final = re.compile(r"<=|>=|==|!=|//|\*\*|[<>+\-*/%]")
_IDENT: Final = re.compile(r"[A-Za-z_]\w*")
_STRING: Final = re.compile(
    r"""(?i)(?<!\w)[rbfu]{0,2}(?:"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')"""
)
_CONDITION: Final = re.compile(r"^\s*(if|elif|while)\s+(.+?):\s*(?:#.*)?$")
_SPACE: Final = re.compile(r"\s+")
_KEYWORDS: Final = frozenset(keyword.kwlist)


class _Advice(NamedTuple):
    concept: str  # an L5 sentence
    direction: str  # an L6 sentence, with where it applies


def _conditions(text: str) -> list[tuple[str, str | None]]:
    """(keyword, condition in words) of every ``if``/``elif``/``while`` line in ``text``."""
    found: list[tuple[str, str | None]] = []
    for line in text.splitlines():
        match = _CONDITION.match(line)
        if match is None:
            continue
        try:
            words = _truth(ast.parse(match.group(2).strip(), mode="eval").body)
        except SyntaxError:
            words = None
        found.append((match.group(1), words if words and len(words) <= 120 else None))
    return found


def _swapped(a: list[str], b: list[str]) -> bool:
    """Whether ``b`` is ``a`` with exactly two items exchanged."""
    if len(a) != len(b):
        return False
    diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
    return len(diff) == 2 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]


def _advice(fault: _Fault, construct: str) -> _Advice:
    """The concept and repair direction a hunk implies, in words only (first rule that fits)."""
    where = f"{construct} ({_span(fault.first, fault.last)})"
    cand, ref = "\n".join(fault.candidate), "\n".join(fault.reference)
    if fault.kind == "delete":
        return _Advice(
            "Part of the current computation has no basis in the problem statement: the "
            "correct answer for these inputs does not involve it.",
            f"Remove {where}; the answer for these inputs does not involve that step.",
        )
    inserting = fault.kind == "insert"

    def revise(result: str) -> str:
        if inserting:
            return f"Add a step near {where} so that the program {result}."
        return f"Revise {where} so that it {result}."

    cand_conds, ref_conds = _conditions(cand), _conditions(ref)
    if len(ref_conds) > len(cand_conds):
        known = {words for _, words in cand_conds}
        new = next((w for _, w in ref_conds if w is not None and w not in known), None)
        case = f"the case where {new}" if new else "a special case of these inputs"
        return _Advice(
            f"The solution needs to distinguish {case}: for such inputs the general "
            "computation does not give the right answer.",
            f"Add a check {'near' if inserting else 'in'} {where} for {case}, and handle that "
            "case the way the problem statement describes.",
        )
    if [k for k, _ in cand_conds] == ["if"] and [k for k, _ in ref_conds] == ["while"]:
        return _Advice(
            "A single check is not enough here: the situation it tests can arise several "
            "times in a row, and every occurrence has to be dealt with.",
            f"Revise {where} so that it repeats while its condition holds, rather than testing "
            "it only once.",
        )
    cand_ops, ref_ops = Counter(_OPERATOR.findall(cand)), Counter(_OPERATOR.findall(ref))
    boundary = (
        "Equal values are a boundary case here: when the two compared quantities are equal, "
        "the comparison decides the answer the wrong way."
    )
    for strict, loose in (("<", "<="), (">", ">=")):
        if cand_ops[strict] > ref_ops[strict] and ref_ops[loose] > cand_ops[loose]:
            return _Advice(
                boundary,
                f"Revise the comparison in {where} so that it also holds when both sides are "
                "equal.",
            )
        if cand_ops[loose] > ref_ops[loose] and ref_ops[strict] > cand_ops[strict]:
            return _Advice(
                boundary,
                f"Revise the comparison in {where} so that it no longer holds when both sides "
                "are equal.",
            )
    ref_words = next((w for _, w in ref_conds if w is not None), None)
    if ref_conds and cand_conds != ref_conds and ref_words is not None:
        return _Advice(
            f"The condition tested here is not the right one: what matters is whether {ref_words}.",
            f"Revise the condition in {where} so that it tests whether {ref_words}.",
        )
    if cand_ops["//"] > ref_ops["//"] and ref_ops["/"] > cand_ops["/"]:
        return _Advice(
            "The answer is a fraction in general: rounding the division down loses its "
            "fractional part.",
            f"Revise {where} so that the division keeps its fractional part.",
        )
    if ref_ops["//"] > cand_ops["//"] and cand_ops["/"] > ref_ops["/"]:
        return _Advice(
            "The quantity here is a whole number: the division has to round down.",
            f"Revise {where} so that the division rounds down to a whole number.",
        )
    cand_calls = Counter(re.findall(r"([A-Za-z_]\w*)\s*\(", cand))
    ref_calls = Counter(re.findall(r"([A-Za-z_]\w*)\s*\(", ref))
    for name in sorted(ref_calls - cand_calls):
        if name in _ADDED_CALLS:
            concept, result = _ADDED_CALLS[name]
            return _Advice(concept, revise(result))
    for name in sorted(cand_calls - ref_calls):
        if name in _REMOVED_CALLS:
            concept, result = _REMOVED_CALLS[name]
            return _Advice(concept, revise(result))
    if ref_ops["%"] > cand_ops["%"] or (ref_ops["%"] and ref.count("(") != cand.count("(")):
        return _Advice(
            "The result is defined modulo the given number, and the reduction has to apply to "
            "the whole intermediate value at every step.",
            f"Revise {where} so that the whole intermediate value is reduced modulo the given "
            "number at each step.",
        )
    bare_cand, bare_ref = _STRING.sub('""', cand), _STRING.sub('""', ref)
    if bare_cand == bare_ref and cand != ref:
        return _Advice(
            "A fixed text produced here does not match what the problem statement prescribes.",
            f"Revise the fixed text in {where} so that it matches the problem statement exactly.",
        )
    cand_names, ref_names = _IDENT.findall(bare_cand), _IDENT.findall(bare_ref)
    if _swapped(cand_names, ref_names):
        return _Advice(
            "The order of the quantities matters here, and the current program takes them "
            "the other way round.",
            f"Swap the two quantities that are exchanged in {where}.",
        )
    ones = re.compile(r"[+-]1\b")
    squashed_cand, squashed_ref = _SPACE.sub("", bare_cand), _SPACE.sub("", bare_ref)
    if len(ones.findall(squashed_cand)) != len(ones.findall(squashed_ref)):
        return _Advice(
            "The computation is off by one at a boundary: the first or last position of the "
            "range is treated differently from what the problem defines.",
            f"Shift the boundary in {where} by one position, so that the range covers exactly "
            "the positions the problem defines.",
        )
    digits = re.compile(r"\b\d+\b")
    if digits.sub("0", squashed_cand) == digits.sub("0", squashed_ref):
        return _Advice(
            "A constant here does not match the limits or rules stated in the problem.",
            f"Revise the constant in {where} so that it matches what the problem defines.",
        )
    added = sorted(set(ref_names) - set(cand_names) - _KEYWORDS)
    removed = sorted(set(cand_names) - set(ref_names) - _KEYWORDS)
    if added and removed:
        return _Advice(
            f"The quantity computed here depends on {added[0]} rather than on {removed[0]}.",
            f"Revise {where} so that it uses {added[0]} where it now uses {removed[0]}.",
        )
    return _Advice(
        "The computation here does not follow the rule the problem defines for these inputs.",
        f"Rewrite {where} so that it follows the rule of the problem for inputs like these.",
    )


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
        fault = _fault(program, reference, targets)
        if fault is None:
            return self._without_fault(level, basic, symptom)
        construct = _construct(program, fault.first)
        span = _span(fault.first, fault.last)
        if level == 4:
            return [
                f"The issue is likely in {construct}, at {span} of the current program; on "
                f"inputs {pattern} the program {symptom.phrase}.",
                f"The most suspicious part of the program for these failures is {span}: "
                f"{construct}.",
                f"The fault is likely around {span} of the current program.",
            ]
        advice = _advice(fault, construct)
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
        return Completion(text=text, model=self.name, usage=_usage(messages, text), attempts=1)

    async def aclose(self) -> None:
        """Mark the model closed; nothing else is held."""
        self._closed = True


# --------------------------------------------------------------------------- specs


def _number(text: str, what: str, spec: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ConfigError(f"model spec {spec!r}: {what} {text!r} is not a number") from None
    if not math.isfinite(value):
        raise ConfigError(f"model spec {spec!r}: {what} must be finite")
    return value


def parse_offline_spec(spec: str) -> SimCandidate | RulesFeedback:
    """The offline model of ``sim:SKILL``, ``sim:SKILL?latency=SECONDS`` or ``rules``."""
    text = spec.strip()
    if text == "rules":
        return RulesFeedback()
    scheme, colon, rest = text.partition(":")
    if scheme == "rules":
        raise ConfigError(f"model spec {spec!r}: 'rules' takes no options")
    if scheme != "sim" or not colon:
        raise ConfigError(f"model spec {spec!r}: expected sim:SKILL[?latency=SECONDS] or rules")
    body, _, query = rest.partition("?")
    skill = _number(body, "skill", spec)
    if not 0.0 <= skill <= 1.0:
        raise ConfigError(f"model spec {spec!r}: skill must be in [0, 1]")
    latency = 0.0
    seen: set[str] = set()
    for part in query.split("&") if query else ():
        key, equals, value = part.partition("=")
        if key != "latency" or not equals or key in seen:
            raise ConfigError(f"model spec {spec!r}: unknown or repeated option {part!r}")
        seen.add(key)
        latency = _number(value, "latency", spec)
        if not 0.0 <= latency <= _MAX_LATENCY:
            raise ConfigError(
                f"model spec {spec!r}: latency must be in [0, {_MAX_LATENCY:g}] seconds"
            )
    return SimCandidate(skill, latency=latency, name=text)
