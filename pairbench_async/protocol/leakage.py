"""The leakage validator: a hint may reveal what its level allows and nothing more.

Seed 000 (Section IV-C) rejects a generated hint that reveals information reserved for
a higher level, and regenerates it up to a budget. This module owns those rules, the
regeneration loop and the choice made when the budget runs out. Pure: no I/O.

Rules (each rejection reason starts with its rule name; ``quote`` reasons name the
source but never repeat the quoted text, and other reasons show at most 40 characters
of the hint itself, so a reason tells the feedback model nothing it did not write):

* ``code`` (every level): a fenced block, an inline code span with operators or
  brackets, a statement line (``def f(``, ``for ...:``, ``return x``, ``import``,
  ``x = ...``), or inline statements: ``for i in range(``, augmented assignments,
  assignments whose right side calls or indexes, assignments to the program's own
  variables (``count = 0``), calls of common builtins and methods, ``==``/``!=``.
* ``location`` (below L4): line numbers (``line 12``), identifiers of the candidate's
  program that the problem statement does not use (those with ``_``, digits or
  camelCase, abbreviations of up to three letters, any quoted or followed by ``(``,
  and plain words next to a cue like "variable", "array", "function"), and references
  to program structure ("the loop", "the if statement", "the variable").
* ``direction`` (below L6): a sentence opening with a repair verb (change, replace,
  use, add, initialise, ...) and phrases like "should", "must be", "you need to",
  "make sure", "replace", "change ... to", "use ... instead", "instead of using".
* ``quote`` (every level): hidden test data or reference code repeated verbatim: any
  run of ``min_quote_chars`` non-whitespace characters shared with a hidden input,
  expected output or the reference (whitespace ignored); a whole hidden input, output
  or reference line of ``min_item_chars`` or more; or a single token of
  ``min_token_chars`` or more that occurs in hidden test data. Text that also occurs in
  the problem statement or the candidate's code is public and never counts. Only the
  first 8 KiB of each hidden input and output are scanned: the feedback model is shown
  at most the first 1,500 characters of any of them.

When the budget is exhausted, ``on_exhausted="fallback"`` (the default) gives the
level's fixed generic hint (``_hints.HintLevel.fallback``, filled only from the
failure type), flagged ``fallback=True``; ``"omit"`` gives no hint at all. Either way
the candidate never sees a rejected text, and every attempt is kept in the outcome.
"""

from __future__ import annotations

import ast
import builtins
import functools
import keyword
import re
from collections.abc import Callable, Iterable
from typing import Any, Final, Literal

import msgspec

from ..core.errors import ConfigError
from ..core.types import Instance, Message
from .hints import Evidence, build_feedback_prompt, fallback_hint, hint_level, render_value

__all__ = [
    "HiddenData",
    "HintAttempt",
    "HintOutcome",
    "ValidationPolicy",
    "code_identifiers",
    "hidden_data",
    "produce_hint",
    "retry_messages",
    "review",
    "validate_hint",
]


#: a maximal run of word characters: what "whole word" means throughout
_WORD: Final = re.compile(r"\w+")


class ValidationPolicy(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """How many generations a hint gets and what happens when all of them leak.

    ``budget`` counts generation attempts, the first one included.
    """

    budget: int = 3
    on_exhausted: Literal["fallback", "omit"] = "fallback"
    min_quote_chars: int = 12
    min_item_chars: int = 6
    min_token_chars: int = 8
    max_chars: int = 1200

    def __post_init__(self) -> None:
        if self.budget < 1:
            raise ConfigError(f"validation budget must be >= 1, got {self.budget}")
        if min(self.min_quote_chars, self.min_item_chars, self.min_token_chars) < 2:
            raise ConfigError("quote thresholds must be >= 2 characters")


class HiddenData(msgspec.Struct, frozen=True, kw_only=True, dict=True):
    """What the candidate must never see: test inputs, expected outputs, the reference.

    The quote rule's view of this data (:class:`_QuoteIndex`) depends on nothing
    else, so it is built on first use and kept: a hint's validation then costs time
    in the hint's length, not in the size of the test suite.
    """

    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    reference: str = ""

    @functools.cached_property
    def quote_index(self) -> _QuoteIndex:
        return _QuoteIndex.build(self)

    @functools.cached_property
    def verdicts(self) -> dict[tuple[Any, ...], tuple[str, ...]]:
        """Memo of :func:`validate_hint` against this data (bounded; see there).

        A hint is validated by the model that drafts it and again by the episode that
        gives it: the second time is a lookup.
        """
        return {}


class HintAttempt(msgspec.Struct, frozen=True, kw_only=True):
    """One generated hint and why it was rejected (empty ``reasons``: accepted)."""

    text: str
    reasons: tuple[str, ...] = ()


class HintOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """The hint given to the candidate, with every attempt that led to it."""

    text: str
    level: int
    attempts: tuple[HintAttempt, ...]
    fallback: bool = False


def hidden_data(instance: Instance) -> HiddenData:
    """The hidden part of ``instance``: every test's input and expected output, the reference."""
    inputs: list[str] = []
    outputs: list[str] = []
    for test in instance.tests:
        if test.kind == "call":
            inputs.extend(render_value(arg) for arg in test.args or [])
            inputs.extend(render_value(value) for value in (test.kwargs or {}).values())
            if test.expected is not msgspec.UNSET:
                outputs.append(render_value(test.expected))
        else:
            inputs.append(test.input or "")
            outputs.append(test.output or "")
    return HiddenData(inputs=tuple(inputs), outputs=tuple(outputs), reference=instance.reference)


# --------------------------------------------------------------------------- code

_FENCE: Final = re.compile(r"```|~~~")
_CODE_SPAN: Final = re.compile(r"`[^`\n]*[=()\[\]{}:+\-*/<>%][^`\n]*`")
_STATEMENT_LINE: Final = re.compile(
    r"^(?:(?:def|class)\s+\w+\s*[(:]"
    r"|(?:for|while|if|elif|with|except)\b[^\n]*:$"
    r"|(?:else|try|finally)\s*:"
    r"|return(?:\s+[\w.\[\]()+\-*/%, ]+)?$"
    r"|import\s+\w+|from\s+[\w.]+\s+import\b"
    r"|[A-Za-z_][\w.]*(?:\[[^\]]*\])?\s*(?:[+\-*/%|&^]|//|<<|>>)?=(?!=)\s*\S.*$)"
)
_INLINE_CODE: Final = tuple(
    re.compile(p)
    for p in (
        r"\bfor\s+\w+(?:\s*,\s*\w+)*\s+in\s+(?:range|enumerate|zip|sorted|reversed)\s*\(",
        r"\bdef\s+\w+\s*\(",
        r"\blambda\b[^:\n]{0,40}:",
        r"\b\w+(?:\[[^\]\n]*\])?\s*(?:\+|-|\*|/|//|%|\||&|\^|<<|>>)=\s*\S",
        r"\b[A-Za-z_]\w*(?:\[[^\]\n]*\])?\s*=(?!=)\s*[^\n.;,]*?\b[A-Za-z_]\w*\s*[(\[]",
        r"\breturn\s+[A-Za-z_][\w.]*\s*[(\[+\-*/%]",
        r"\b(?:print|input|range|len|int|str|sorted|enumerate|list|dict|set|sum|max|min|abs)"
        r"\s*\([^()\n]*\)",
        r"\.\s*(?:append|extend|pop|sort|split|join|strip|add|get|items|keys|values|insert|"
        r"remove|update|readline|count|index)\s*\(",
        r"\b(?:elif|else)\s*:",
        r"[\w\])]\s*(?:==|!=)\s*[\w\[(\-'\"]",
        r"\bsys\.stdin\b",
    )
)
_BULLET: Final = re.compile(r"^[\s>*•\-+]*(?:\d+[.)]\s*)?")


def _code_reasons(hint: str, own_names: set[str]) -> list[str]:
    reasons: list[str] = []
    if _FENCE.search(hint):
        reasons.append("code: fenced code block")
    span = _CODE_SPAN.search(hint)
    if span:
        reasons.append(f"code: inline code span {span.group()[:40]!r}")
    for line in hint.splitlines():
        stripped = _BULLET.sub("", line).strip().strip("`")
        if stripped and _STATEMENT_LINE.match(stripped):
            reasons.append(f"code: statement line {stripped[:40]!r}")
            break
    for pattern in _INLINE_CODE:
        found = pattern.search(hint)
        if found:
            reasons.append(f"code: inline statement {found.group()[:40]!r}")
            break
    # an assigned name is followed by space or "=": it is one of the hint's whole words
    for name in sorted(own_names & set(_WORD.findall(hint))):
        found = re.search(rf"(?<![\w.]){re.escape(name)}\s*=(?!=)\s*\S", hint)
        if found:
            reasons.append(f"code: assignment to the program's variable {name!r}")
            break
    return reasons


# --------------------------------------------------------------------------- location

_ENGLISH_SHORT: Final = frozenset(
    "a an as at be by do go he if in is it me my no of on or so to up us we all and any are "
    "but can did end few for get got had has her him his how its let may new not now odd off "
    "old one our out own put say see set she the too two use was way who why yes yet you add "
    "sum max min big low top key row ten six sub per via".split()
)
_RESERVED: Final = (
    frozenset(keyword.kwlist) | frozenset(keyword.softkwlist) | frozenset(dir(builtins))
)
_CUES: Final = (
    "variable|array|list|dict|dictionary|set|map|counter|flag|index|pointer|accumulator|"
    "parameter|argument|function|method"
)
_LINE_NUMBER: Final = re.compile(r"\blines?\s*#?\s*\d+", re.IGNORECASE)
_STRUCTURE: Final = re.compile(
    r"\b(?:the|this|that|your|its|inner|outer|first|second|last|main|nested|same)\s+"
    r"(?:for[- ]loop|while[- ]loop|loop|if[- ]statement|if[- ]condition|else[- ]branch|"
    r"branch|assignment|variable|code block|return statement)s?\b",
    re.IGNORECASE,
)


def code_identifiers(source: str) -> frozenset[str]:
    """Names the program defines or uses, minus keywords and builtins.

    Memoised (pure, and called for the same program at every hint attempt of a turn
    and by every episode that reaches the same program).
    """
    return _code_identifiers(source)


@functools.lru_cache(maxsize=4096)
def _code_identifiers(source: str) -> frozenset[str]:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        names = set(re.findall(r"[A-Za-z_]\w*", source))
    else:
        names = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                names.add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, ast.alias):
                names.add((node.asname or node.name).split(".")[0])
    return frozenset(name for name in names if name not in _RESERVED)


def _own_names(candidate_code: str, public_words: set[str]) -> set[str]:
    return {
        name
        for name in code_identifiers(candidate_code)
        if len(name) >= 2 and name.lower() not in public_words and name not in _ENGLISH_SHORT
    }


def _location_reasons(hint: str, own_names: set[str]) -> list[str]:
    reasons: list[str] = []
    found = _LINE_NUMBER.search(hint)
    if found:
        reasons.append(f"location: line number {found.group()!r}")
    for name in sorted(own_names & set(_WORD.findall(hint))):  # whole-word occurrences only
        escaped = re.escape(name)
        codey = "_" in name or any(c.isdigit() for c in name) or re.search("[a-z][A-Z]", name)
        marked = re.search(rf"[`'\"]{escaped}\b|\b{escaped}[`'\"]|\b{escaped}\s*[(\[]", hint)
        cued = re.search(
            rf"\b{escaped}\s+(?:{_CUES})\b|\b(?:{_CUES})\s+{escaped}\b", hint, re.IGNORECASE
        )
        if codey or len(name) <= 3 or marked or cued:
            reasons.append(f"location: names the program's identifier {name!r}")
    found = _STRUCTURE.search(hint)
    if found:
        reasons.append(f"location: refers to program structure {found.group()!r}")
    return reasons


# --------------------------------------------------------------------------- direction

_REPAIR_VERBS: Final = frozenset(
    "change replace use switch initialise initialize add remove delete swap move reset "
    "increment decrement insert modify rewrite revise update set fix store keep track sort "
    "handle return break compute convert cast append make ensure avoid skip accumulate apply "
    "call declare define wrap clamp limit iterate loop start introduce maintain guard "
    "subtract multiply divide replace treat count".split()
)
_DIRECTION: Final = re.compile(
    r"\bshould\b|\bmust\s+(?:be|use|have)\b|\byou\s+(?:need|have)\s+to\b|"
    r"\b(?:use|using|try|do|call|apply|take|pick|choose)\b[^.\n]{0,40}\binstead\b|"
    r"\binstead\s+of\s+(?:using|calling|checking|computing|storing|adding|returning)\b|"
    r"\byou\s+must\b|\btry\s+(?:using|to|adding)\b|\bconsider\s+(?:using|adding|changing|"
    r"replacing|initiali[sz]ing)\b|\bmake\s+sure\b|\breplac(?:e|ing)\b|\bchang(?:e|ing)\b[^.\n]"
    r"{0,40}\bto\b",
    re.IGNORECASE,
)
_SENTENCES: Final = re.compile(r"(?<=[.!?;])\s+|\n+")


def _direction_reasons(hint: str) -> list[str]:
    reasons: list[str] = []
    for sentence in _SENTENCES.split(hint):
        words = re.findall(r"[A-Za-z']+", _BULLET.sub("", sentence))
        if words and words[0].lower() in _REPAIR_VERBS:
            reasons.append(f"direction: imperative {words[0]!r}")
            break
    found = _DIRECTION.search(hint)
    if found:
        reasons.append(f"direction: repair phrasing {found.group()[:30]!r}")
    return reasons


# --------------------------------------------------------------------------- quotes


#: Characters scanned from the start of each hidden input or output. The feedback model
#: is shown at most the first 1,500 of each (``_hints``), so a hint cannot quote more.
_SCAN_CHARS: Final = 8192


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _spaced(text: str) -> str:
    return " ".join(text.split())


#: Length of the character n-grams that pre-screen seeds in :func:`_shares_run`.
_GRAM: Final = 4


def _grams(text: str) -> frozenset[str]:
    return frozenset(text[i : i + _GRAM] for i in range(len(text) - _GRAM + 1))


def _shares_run(hint: str, hidden: str, grams: frozenset[str], public: str, k: int) -> bool:
    """Whether ``hint`` and ``hidden`` share a run of ``k`` characters absent from ``public``.

    Seeds of length ``k - s + 1`` taken every ``s`` positions are searched first: any
    shared run of length ``k`` contains one whole seed, so full ``k``-grams are only
    checked around seeds that occur in ``hidden``. ``grams`` (every ``_GRAM``-gram of
    ``hidden``) screens a seed before the substring search over ``hidden``, which can
    be hundreds of KB: a seed with a gram outside the set cannot occur there.
    """
    stride = max(1, k // 2)
    seed = k - stride + 1
    screen = seed >= _GRAM
    for start in range(0, len(hint) - seed + 1, stride):
        piece = hint[start : start + seed]
        if screen and any(piece[i : i + _GRAM] not in grams for i in range(seed - _GRAM + 1)):
            continue
        if piece not in hidden:
            continue
        for begin in range(max(0, start - stride + 1), start + 1):
            gram = hint[begin : begin + k]
            if len(gram) == k and gram in hidden and gram not in public:
                return True
    return False


class _QuoteSource(msgspec.Struct, frozen=True):
    """One kind of hidden text, prepared for the quote rule."""

    what: str
    #: every text with whitespace removed, joined by NUL (no run crosses two texts)
    squashed: str
    #: every ``_GRAM``-gram of ``squashed``
    grams: frozenset[str]
    #: (whitespace-normalised item, its length without whitespace) of each whole item
    items: tuple[tuple[str, int], ...]


class _QuoteIndex(msgspec.Struct, frozen=True):
    """The hint-independent half of the quote rule, computed once per :class:`HiddenData`."""

    sources: tuple[_QuoteSource, ...]
    #: the maximal ``\w+`` runs of the scanned hidden inputs and outputs
    data_tokens: frozenset[str]

    @classmethod
    def build(cls, hidden: HiddenData) -> _QuoteIndex:
        inputs = tuple(text[:_SCAN_CHARS] for text in hidden.inputs)
        outputs = tuple(text[:_SCAN_CHARS] for text in hidden.outputs)
        sources = []
        for what, texts, items in (
            ("a hidden test input", inputs, inputs),
            ("a hidden expected output", outputs, outputs),
            ("the reference solution", (hidden.reference,), hidden.reference.splitlines()),
        ):
            prepared = []
            for item in items:
                if len(item) < _SCAN_CHARS:
                    spaced = _spaced(item)
                    prepared.append((spaced, len(_squash(spaced))))
            squashed = "\x00".join(_squash(t) for t in texts)
            sources.append(_QuoteSource(what, squashed, _grams(squashed), tuple(prepared)))
        tokens = frozenset(_WORD.findall("\x00".join((*inputs, *outputs))))
        return cls(tuple(sources), tokens)


def _quote_reasons(
    hint: str, hidden: HiddenData, public: str, policy: ValidationPolicy
) -> list[str]:
    reasons: list[str] = []
    index = hidden.quote_index
    squashed_public = _squash(public)
    spaced_public = _spaced(public)
    squashed_hint = _squash(hint)
    spaced_hint = _spaced(hint)
    k = policy.min_quote_chars
    for source in index.sources:
        if _shares_run(squashed_hint, source.squashed, source.grams, squashed_public, k):
            reasons.append(f"quote: repeats {k}+ characters of {source.what} verbatim")
            continue
        for spaced, size in source.items:
            if (
                size >= policy.min_item_chars
                and spaced in spaced_hint
                and spaced not in spaced_public
                and re.search(rf"(?<!\w){re.escape(spaced)}(?!\w)", spaced_hint)
            ):
                reasons.append(f"quote: repeats a whole line of {source.what}")
                break
    # a whole-word occurrence of a word-only token is one of the text's maximal \w+ runs
    leaked = {t for t in _WORD.findall(hint) if len(t) >= policy.min_token_chars}
    leaked &= index.data_tokens
    if leaked:
        leaked -= set(_WORD.findall(public))
    if leaked:
        token = min(leaked)
        reasons.append(f"quote: repeats a {len(token)}-character token of hidden test data")
    return reasons


# --------------------------------------------------------------------------- validation


def validate_hint(
    hint: str,
    level: int,
    evidence: Evidence,
    candidate_code: str,
    hidden: HiddenData,
    policy: ValidationPolicy | None = None,
) -> list[str]:
    """Why ``hint`` may not be given at ``level`` (empty list: it may).

    ``evidence.problem`` and ``candidate_code`` are what the candidate already sees;
    text found there is never a leak.
    """
    policy = policy or ValidationPolicy()
    hint_level(level)
    text = hint.strip()
    if not text:
        return ["empty: the hint has no text"]
    problem = evidence.problem or ""
    key = (text, level, problem, candidate_code, policy)
    memo = hidden.verdicts
    known = memo.get(key)
    if known is None:
        if len(memo) >= _MEMO_SIZE:
            memo.clear()
        known = memo[key] = tuple(_validate(text, level, problem, candidate_code, hidden, policy))
    return list(known)


#: Verdicts kept per :class:`HiddenData` (an episode's turns rarely need more than a few).
_MEMO_SIZE: Final = 256


def _validate(text: str, level: int, problem: str, candidate_code: str, hidden: HiddenData,
              policy: ValidationPolicy) -> list[str]:
    public_words = {word.lower() for word in re.findall(r"\w+", problem)}
    own_names = _own_names(candidate_code, public_words)
    reasons: list[str] = []
    if len(text) > policy.max_chars:
        reasons.append(f"length: {len(text)} characters (at most {policy.max_chars})")
    reasons += _code_reasons(text, own_names)
    if level < 4:
        reasons += _location_reasons(text, own_names)
    if level < 6:
        reasons += _direction_reasons(text)
    reasons += _quote_reasons(text, hidden, f"{problem}\n{candidate_code}", policy)
    return reasons


def review(
    attempts: Iterable[HintAttempt],
    text: str,
    *,
    level: int,
    evidence: Evidence,
    candidate_code: str,
    hidden: HiddenData,
    failure: str,
    policy: ValidationPolicy | None = None,
) -> tuple[tuple[HintAttempt, ...], HintOutcome | None]:
    """Validate one more generated hint; the outcome, or ``None`` to regenerate.

    ``failure`` is the targeted scenario's failure type, used only to word the
    fallback hint. The async caller drives its own loop with this function.
    """
    policy = policy or ValidationPolicy()
    text = text.strip()
    reasons = validate_hint(text, level, evidence, candidate_code, hidden, policy)
    history = (*attempts, HintAttempt(text=text, reasons=tuple(reasons)))
    if not reasons:
        return history, HintOutcome(text=text, level=level, attempts=history)
    if len(history) < policy.budget:
        return history, None
    final = fallback_hint(level, failure) if policy.on_exhausted == "fallback" else ""
    return history, HintOutcome(text=final, level=level, attempts=history, fallback=True)


def retry_messages(messages: list[Message], attempt: HintAttempt) -> list[Message]:
    """The conversation extended with a rejected hint and the reasons for rejecting it."""
    return [
        *messages,
        Message(role="assistant", content=attempt.text),
        Message(
            role="user",
            content="That hint was rejected: "
            + "; ".join(attempt.reasons)
            + ". Write a new hint at the same level that avoids these problems.",
        ),
    ]


def produce_hint(
    generate: Callable[[list[Message]], str],
    *,
    level: int,
    evidence: Evidence,
    candidate_code: str,
    hidden: HiddenData,
    failure: str,
    policy: ValidationPolicy | None = None,
) -> HintOutcome:
    """Generate, validate and regenerate a hint with a synchronous ``generate``.

    For offline (rule-based) feedback models and tests; the async orchestrator runs the
    same loop with :func:`build_feedback_prompt`, :func:`review` and
    :func:`retry_messages` around an awaited model call.
    """
    policy = policy or ValidationPolicy()
    messages = build_feedback_prompt(level, evidence, evidence.scenario)
    attempts: tuple[HintAttempt, ...] = ()
    while True:
        attempts, outcome = review(
            attempts,
            generate(messages),
            level=level,
            evidence=evidence,
            candidate_code=candidate_code,
            hidden=hidden,
            failure=failure,
            policy=policy,
        )
        if outcome is not None:
            return outcome
        messages = retry_messages(messages, attempts[-1])
