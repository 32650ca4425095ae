"""The leakage validator: a hint may reveal what its level allows and nothing more.

Seed 000 (Section IV-C) rejects a generated hint that reveals information reserved for
a higher level, and regenerates it up to a budget. This module owns the data the
validator works on (the policy, the hidden data, the attempts and the outcome), the
verdict on one hint (:func:`validate_hint`, which applies every rule), the review of
one more attempt (:func:`review`, :func:`retry_messages`: the async loop around a
model is :mod:`.review`'s) and the choice made when the budget runs out. The rules themselves
are in :mod:`.leakage_reveals` (``input_pattern`` below L2, ``state`` below L3,
``concept`` below L5), :mod:`.leakage_patterns` (``code`` at every level, ``location``
below L4, ``direction`` below L6), :mod:`.leakage_structure` (``code`` read structurally: the
candidate's and the reference's names in code shapes, n-grams of reference lines the candidate
lacks; an expression of the candidate quoted as a place is a ``location``) and
:mod:`.leakage_quotes` (``quote``); the direction and input-pattern classes built from closed word classes
are :mod:`.leakage_grammar`'s (revision 9), and the state and input-pattern classes built by mechanism
:mod:`.leakage_mechanisms`' (revision 10, measured on held-out sets by ``bench.validator_heldout``);
revision 11 narrowed the rules for precision on unseen hints (the candidate's statement cited as a place, a
test's input written as a call, an obligation or a way of seeing laid on the problem's things); revision 12
read the candidate's code structurally (a fragment of it the reference does not add names a place, never
code), examples of input as data, and a modal stating what must hold as L5's invariant; revision 13 narrowed
each rule to what its boundary reserves where revisions 9-11 had erred on sets they had not seen (a span
of literals and operators is data, a condition on the output or a verdict is no input pattern, a value
compared in quantity is no location, a norm set against what happens is the symptom); revision 14 narrowed
the rules whose first-seen wrong-alone count was not below their right-alone count (L1 modals, contrasts with an
article, L5 formulas in mathematics' notation, see each module); revision 15 read example data as data
(:mod:`.leakage_examples`: a literal of the input or output, a span after "for example", and "<example> should
be <value>" its expected output) and an L1 hint's clauses on the output or the expected answer as the symptom
(:mod:`.leakage_symptoms`), and narrowed pointing, places and L5 idioms (see each module); their
docstrings state each rule, and :mod:`.boundaries` holds Table II's boundaries they
enforce. Each rejection reason starts with its rule name, which for the Table II rules
is the boundary it broke (or ``quote`` / ``length`` / ``empty``). Pure: no I/O.

When the budget is exhausted, ``on_exhausted="fallback"`` (the default) gives the
level's fixed generic hint (``hints.HintLevel.fallback``, filled only from the
failure type's words in the closed vocabulary of :mod:`..core.failures`), flagged
``fallback=True``, and validated like any hint: if it were rejected, the same hint with
the generic symptom "fails", and if that were too, none. ``"omit"`` gives no hint at
all. Either way the candidate never sees a rejected text, and every attempt is kept in
the outcome.

The program's output on a hidden test is hidden data too: the candidate outputs in the
evidence (what the feedback model was shown) are a quote source of the ``quote`` rule.

Revision 16 (:mod:`.leakage_examples` and here): at L1 a span naming a function the problem statement defines is the
symptom's subject, read as the bare word; a short span in the problem's own notation (`x*`) is data; the location
rule is given the words the statement uses as nouns.

Revision 17 (the classes of revision 16's first-seen false positives, see each module): at L1 the state rule reads the
hint without its sentences on what the program gives back (:func:`.leakage_symptoms.without_output_claims`).

Revision 18 (broader structural classes of revision 17's first-seen false positives on fresh42-44, see each module):
a span is code only if it writes what the candidate's program lacks, so a quote of the candidate with an ellipsis
is a place (here: its code shapes are not read as code), prose marks are prose, and a quote of public code never
joins the prose around it into a run of the reference; a membership or a loss describing the instance is no rule
or state; at L5 a modal on a generic thing of the world is a norm; an exact value asked for a statement quoted
before it ("should be n itself") is a direction, not the concept.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final, Literal

import msgspec

from ..core.types import Message
from .boundaries import BOUNDARY_NAMES, reserved
from .evidence import Evidence
from .hidden import HiddenData, ValidationPolicy, hidden_data
from .hints import fallback_hint, hint_level
from .leakage_concept import concept_reasons
from .leakage_direction import direction_reasons
from .leakage_examples import example_spans, expected_tail
from .leakage_mechanisms import failing_class_reasons, held_value_reasons
from .leakage_model import leakage_model
from .leakage_patterns import (
    code_reasons,
    formula_reasons,
    idiom_reasons,
    location_reasons,
    program_names,
)
from .leakage_quotes import quote_reasons
from .leakage_reveals import input_pattern_reasons, state_reasons
from .leakage_structure import (
    ELLIPSIS,
    candidate_quotes,
    data_fragments,
    program_shape,
    quoted_spans,
    structural_code_reasons,
)
from .leakage_symptoms import (
    without_expected_clauses,
    without_output_claims,
    without_output_sentences,
)

__all__ = [
    "HiddenData",
    "HintAttempt",
    "HintOutcome",
    "JudgeVerdict",
    "ValidationPolicy",
    "hidden_data",
    "hidden_quotes",
    "retry_messages",
    "review",
    "rule_reasons",
    "validate_hint",
]


class JudgeVerdict(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """What the LLM judge (:mod:`.judge`) said of a hint the rules accepted.

    ``verdict`` is the one that counts: ``reject`` (the hint is regenerated),
    ``accept``, or ``malformed`` (the reply could not be read; the rules' acceptance
    stands). ``boundary`` is the Table II boundary a rejection names; ``reason`` the
    judge's own words (for ``malformed``: the head of its reply).
    """

    verdict: Literal["accept", "reject", "malformed"]
    reason: str = ""
    boundary: str | None = None


class HintAttempt(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One generated hint and why it was rejected (empty ``reasons``: accepted).

    ``judge`` is the LLM judge's verdict when one was asked (only of hints the rules
    accepted); a judge rejection is also one of the ``reasons``, as ``judge: ...``.
    """

    text: str
    reasons: tuple[str, ...] = ()
    judge: JudgeVerdict | None = None


class HintOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """The hint given to the candidate, with every attempt that led to it."""

    text: str
    level: int
    attempts: tuple[HintAttempt, ...]
    fallback: bool = False
    #: words of the feedback model's reply past the protocol's word cap, cut before the
    #: candidate saw ``text`` (seed 002's paragraph and sentence caps; 0: nothing cut)
    words_cut: int = 0
    #: where a FeedbackEval text came from: ``recorded`` (the dataset's own, replayed
    #: verbatim) or ``generated`` (by the feedback model, where none was recorded); None
    #: for every other protocol
    source: str | None = None


def hidden_quotes(text: str, hidden: HiddenData, public: str, policy: ValidationPolicy | None = None) -> list[str]:
    """Why ``text`` repeats hidden data (a test's input or output, the reference) that
    ``public`` (what the candidate sees anyway) does not hold; empty if it does not.

    The hint validator's quote rules, for any text bound for the candidate: a dataset's
    project context is checked with it before a run shows it.
    """
    return quote_reasons(text, hidden, public, policy or ValidationPolicy())


# --------------------------------------------------------------------------- validation


def validate_hint(
    hint: str,
    level: int,
    evidence: Evidence,
    candidate_code: str,
    hidden: HiddenData,
    policy: ValidationPolicy | None = None,
) -> list[str]:
    """Why ``hint`` may not be given at ``level`` (empty list: it may), as ``policy.reading`` reads it.

    ``"learned"`` (the default): the rules' exact checks (a quote of hidden data, the length, an empty hint)
    and their readings never wrong on hints they had not seen (code written structurally: :data:`_NEVER_WRONG`)
    always reject; Table II's boundaries are the model's (:mod:`.leakage_model`): a hint it reads as crossing
    is rejected for the boundaries it names (the rules' reasons where they saw a boundary, else the model's),
    and one it reads as clean, or accepts at a lower level, is not rejected for a boundary the rules alone saw;
    a hint with fewer than :data:`MIN_KNOWN_HINT` words the model knows is left to the rules. On the newest
    blind sets the rules alone fell to 0.77-0.82 precision; the model, chosen on sets it never trained on,
    holds more (docs/PROTOCOL.md, "The learned reading"). ``"rules"``: :func:`rule_reasons`.
    """
    policy = policy or ValidationPolicy()
    rules = rule_reasons(hint, level, evidence, candidate_code, hidden, policy)
    if policy.reading == "rules" or not hint.strip():
        return rules
    model = leakage_model()
    text, problem, reference = hint.strip(), evidence.problem or "", hidden.reference
    reading = model.read(text, level, problem, candidate_code, reference)
    if reading.known < MIN_KNOWN_HINT:
        # too few words the model knows ("The output is wrong."): it would read the level's prior, not the hint
        return rules
    exact = [reason for reason in rules if _exact(reason)]
    # Table II's boundaries are nested: a hint the model accepts at a lower level is accepted here too
    if not model.crosses(reading) or any(not model.crosses(model.read(text, lower, problem, candidate_code,
                                                                      reference)) for lower in range(1, level)):
        return exact
    open_ = [b for b in reserved(level) if b.name in reading.boundaries]
    named = ([b for b in open_ if reading.boundaries[b.name] > 0.5]
             or sorted(open_, key=lambda b: -reading.boundaries[b.name])[:1])
    agreeing = [reason for reason in rules if reason.split(":", 1)[0] in {b.name for b in named}]
    # the rules' own reasons where they saw a boundary (they say what and where), else the model's
    seen = agreeing or [reason for reason in rules if reason.split(":", 1)[0] in BOUNDARY_NAMES]
    out = exact + [reason for reason in seen if reason not in exact]
    if not seen:
        out += [f"{b.name}: reads as revealing {b.what[0].lower()}{b.what[1:-1]} (reserved for "
                + (f"L{b.level} and above" if b.level <= 6 else "no level")
                + f"; learned reading, {reading.boundaries[b.name]:.2f})" for b in named]
    return out


#: the fewest words the model must know in a hint to read it (:data:`.leakage_model.MIN_KNOWN_WORDS` for one
#: sentence); below, the rules decide
MIN_KNOWN_HINT: Final = 8


#: the rules' checks that need no reading: a quote of hidden data, the length, an empty hint
_EXACT: Final = ("quote", "length", "empty")
#: the rules' readings never wrong on hints their revision had not seen (``python -m bench.validator_record``,
#: revisions 14-18 on fresh30-47: at least five flags, none on a clean hint; "an assignment to the program" and
#: "names the failing input" were, and then misread three of 47 hints on fresh66-71, attack of stop 34): code
#: written structurally. They reject whatever the model reads (a fenced block is code at every level).
_NEVER_WRONG: Final = (
    "code: fenced code block",
    "code: statement line",
    "code: repeats code of the reference that the candidate",
)


def _exact(reason: str) -> bool:
    return reason.split(":", 1)[0] in _EXACT or reason.startswith(_NEVER_WRONG)


def rule_reasons(
    hint: str,
    level: int,
    evidence: Evidence,
    candidate_code: str,
    hidden: HiddenData,
    policy: ValidationPolicy | None = None,
) -> list[str]:
    """Why the hand-written rules reject ``hint`` at ``level`` (empty list: they do not).

    ``evidence.problem`` and ``candidate_code`` are what the candidate already sees;
    text found there is never a leak. The candidate outputs in ``evidence.tests`` (what the
    feedback model was shown of the program's output on hidden tests) are hidden data.
    """
    policy = policy or ValidationPolicy()
    hint_level(level)
    text = hint.strip()
    if not text:
        return ["empty: the hint has no text"]
    problem = evidence.problem or ""
    outputs = tuple(test.actual for test in evidence.tests if test.actual)
    key = (text, level, problem, candidate_code, outputs, policy)
    memo = hidden.verdicts
    known = memo.get(key)
    if known is None:
        if len(memo) >= _MEMO_SIZE:
            memo.clear()
        known = memo[key] = tuple(_validate(text, level, problem, candidate_code, outputs, hidden, policy))
    return list(known)


#: a call whose arguments are elided, "int(...)", "sorted(…)": the name of a construct
_NAMED_CALL: Final = re.compile(r"\b[A-Za-z_][\w.]*\(\s*(?:\.\.\.|…)\s*\)")

#: a call: what of :func:`.leakage_structure.data_fragments` is a test's input
_CALLED: Final = re.compile(r"[A-Za-z_]\w*\(")

#: an example input and the rest of its sentence (what the hint says it should give)
_EXAMPLE_TAIL: Final = re.compile(r"\bthe example\b[^.;!?\n]*(?:[.;!?](?=\s|$)|$)")

#: a hyphen between letters joins a compound word ("Eighteen-year-olds")
_HYPHEN: Final = re.compile(r"(?<=[A-Za-z])-(?=[A-Za-z])")

#: Verdicts kept per :class:`HiddenData` (an episode's turns rarely need more than a few).
_MEMO_SIZE: Final = 256


#: a span that only names a function: `owed()`, `owed`
_NAMED_SPAN: Final = re.compile(r"`([A-Za-z_]\w*)(?:\(\))?`")


def _interface_named(text: str, problem: str) -> str:
    """Revision 16: at L1, a span naming a function the problem statement defines (`owed()` for "`owed(patron)`")
    names the thing under test, the subject of the symptom, not the program's code: read as the bare word. A span
    with arguments, or naming a function only the program has, is left as written."""
    def bare(found: re.Match[str]) -> str:
        name = found.group(1)
        return name if re.search(rf"\b{re.escape(name)}\s*\(", problem) else found.group()
    return _NAMED_SPAN.sub(bare, text)


def _notation_spans(text: str, problem: str, names: frozenset[str]) -> list[str]:
    """Revision 16: spans written in the problem's own notation, a datum of the problem (a pattern `x*` where the
    statement defines `*`): at most four characters, no space, each letter a placeholder no program uses, each other
    character a symbol the statement itself quotes (`*`, `.`). `i*` with a program's `i`, or `*=`, stays code."""
    quoted = {m.group(1) for m in re.finditer(r"`([^`\w\s])`", problem)}
    out = []
    for found in re.finditer(r"`([^`\s]{1,4})`", text):
        content = found.group(1)
        symbols = [c for c in content if not c.isalpha()]
        letters = [c for c in content if c.isalpha()]
        if (symbols and letters and all(c in quoted for c in symbols)
                and all(c.islower() and c not in names for c in letters) and len(letters) == len(set(letters))):
            out.append(found.group())
    return out


def _problem_nouns(problem: str) -> frozenset[str]:
    """The words the problem statement uses as nouns (after a determiner: "an increment of", "each call"), lower-cased:
    a construct word among them may name the problem's thing, not the program's (revision 16)."""
    return frozenset(w.lower() for w in re.findall(r"\b(?:the|a|an|each|every|per|its|one|this|that)\s+(\w+)",
                                                   problem, re.I))


def _validate(text: str, level: int, problem: str, candidate_code: str, outputs: tuple[str, ...],
              hidden: HiddenData, policy: ValidationPolicy) -> list[str]:
    public_words = {word.lower() for word in re.findall(r"\w+", problem)}
    if level == 1:
        text = _interface_named(text, problem)
    own_names = program_names(candidate_code, public_words)
    reasons: list[str] = []
    if len(text) > policy.max_chars:
        reasons.append(f"length: {len(text)} characters (at most {policy.max_chars})")
    shape = program_shape(candidate_code, hidden.reference)
    # revision 15: example data in backticks or quotes (a literal, or a span after "for example") is no code,
    # and what the sentence says it should give is its expected output; a cued example the candidate's code
    # also holds is still a quote of it unless it is one character ("for example `aaaa` or just `q`")
    examples, cued = example_spans(text), example_spans(text, literals=False)
    examples += _notation_spans(text, problem, shape.names)
    quoted = [q for q in candidate_quotes(text, shape, problem) + quoted_spans(text, shape, problem)
              if not (q in cued and len(q.strip("`'\"").strip()) == 1)]
    # the candidate's own code, quoted, points at a place (a location) and gives no code: the
    # wording rules read the hint without it; a fragment the hint tells the candidate to write is code
    # "the int(...) conversion": a call named, not written; "out-of-grid": a hyphen, not a minus
    worded = _HYPHEN.sub("_", _NAMED_CALL.sub("CODE", text))
    data = data_fragments(text, shape, problem) + examples
    # longest first: a span holding a shorter fragment ("`(day[1], day[2])`") is replaced whole
    for fragment in sorted({*quoted, *data}, key=len, reverse=True):
        worded = worded.replace(fragment, "" if fragment in examples else "CODE")
    # revision 18: a span quoting the candidate but for an ellipsis ("`if dq[0] ...: dq.popleft()`") holds no code
    # shape of its own
    unquoted = text
    for fragment in sorted(set(quoted), key=len, reverse=True):
        unquoted = unquoted.replace(fragment, "the quote") if ELLIPSIS.search(fragment) else unquoted
    code = code_reasons(worded, own_names, level) + structural_code_reasons(unquoted, problem, shape)
    if level == 5:
        # revision 14: a formula in mathematics' notation states L5's rule, not code; revision 15: nor does a
        # generic idiom in placeholders ("`[x] * n` creates n references to the same x")
        formulas = formula_reasons(code, text) + idiom_reasons(code, shape.names)
        code = [reason for reason in code if reason not in formulas]
    reasons += code
    if level < 4 and quoted:
        reasons.append(f"location: quotes the candidate's code {quoted[0][:40]!r} (reserved for L4 and above)")
    if level < 2:
        # a call of the problem's function on literals is a failing input, which L2 first shows (revision 11)
        calls = [fragment for fragment in data if _CALLED.match(fragment)]
        # revision 15: a clause about the expected answer picks out no inputs
        symptom = without_expected_clauses(text)
        reasons += (input_pattern_reasons(symptom) or failing_class_reasons(symptom)
                    or [f"input_pattern: gives a failing input {calls[0][:40]!r} (reserved for L2 and above)"
                        for _ in calls[:1]])
    # revision 12: an example input (a call of the problem's function on literals, a parameter given a
    # literal) is data; the wording rules read the hint without it, and what the sentence goes on to say
    # of the example ("Try wrap('aa bb', 5): the first line 'aa bb' should not be split", "e.g. f(3, [1])
    # should be 1") is its expected output, not a rule
    prose = text
    for fragment in sorted(set(data), key=len, reverse=True):
        prose = prose.replace(fragment, "the example")
    # a literal the hint cites with no example cue may still name its place ("the `1` in the range"): the
    # location rule reads it
    placed = text
    for fragment in sorted({*data} - ({*examples} - {*cued}), key=len, reverse=True):
        placed = placed.replace(fragment, "the example")
    expected = _EXAMPLE_TAIL.sub("the example.", prose) if any(_CALLED.match(f) for f in data) else prose
    expected = prose = expected_tail(expected, shape.names) if examples else expected
    if level < 3:
        # revision 17: at L1 what the output holds ("the paths you return still contain") is the symptom
        observed = without_output_claims(text) if level == 1 else text
        reasons += state_reasons(observed) or held_value_reasons(observed)
    if level < 4:
        reasons += location_reasons(placed, own_names, _problem_nouns(problem))
    if level < 5:
        # revision 15: at L1 a sentence on the program's output as subject is the symptom, no rule
        reasons += concept_reasons(without_output_sentences(expected) if level == 1 else expected)
    if level < 6:
        reasons += direction_reasons(prose, shape.names, frozenset(public_words), level)
    reasons += quote_reasons(text, hidden, f"{problem}\n{candidate_code}", policy, outputs)
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
    judge: JudgeVerdict | None = None,
) -> tuple[tuple[HintAttempt, ...], HintOutcome | None]:
    """Validate one more generated hint; the outcome, or ``None`` to regenerate.

    ``failure`` is the targeted scenario's failure type, used only to word the
    fallback hint. ``judge`` is the LLM judge's verdict on this text (asked only when
    the rules accept it, :func:`.judge.judge_hint`): a ``reject`` rejects the hint like
    a rule would. The async caller drives its own loop with this function.
    """
    policy = policy or ValidationPolicy()
    text = text.strip()
    reasons = validate_hint(text, level, evidence, candidate_code, hidden, policy)
    if not reasons and judge is not None and judge.verdict == "reject":
        reasons = [f"judge: {judge.boundary or 'unnamed boundary'}: {judge.reason}"]
    history = (*attempts, HintAttempt(text=text, reasons=tuple(reasons), judge=judge))
    if not reasons:
        return history, HintOutcome(text=text, level=level, attempts=history)
    if len(history) < policy.budget:
        return history, None
    final = (_fallback(level, failure, evidence, candidate_code, hidden, policy)
             if policy.on_exhausted == "fallback" else "")
    return history, HintOutcome(text=final, level=level, attempts=history, fallback=True)


def _fallback(level: int, failure: str, evidence: Evidence, candidate_code: str, hidden: HiddenData,
              policy: ValidationPolicy) -> str:
    """The level's fixed hint, validated like any other: worded from the failure type's
    vocabulary words, else from the generic symptom, else none (the empty text). By the rules: these texts
    are the project's own, filled from a closed vocabulary and carrying nothing of the instance, and the
    learned reading, trained on hints about programs, misreads the L2 one (crossing read at 0.8)."""
    policy = msgspec.structs.replace(policy, reading="rules")
    for text in (fallback_hint(level, failure), fallback_hint(level, "")):
        if not validate_hint(text, level, evidence, candidate_code, hidden, policy):
            return text
    return ""


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
