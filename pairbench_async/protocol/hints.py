"""The six hint levels of Table II (seed 000): what each reveals and which evidence it sees.

A hint level is only a controlled variable if the feedback model cannot say more than
the level allows; so each level is data here: what it reveals, the prompt template the
feedback model gets (:mod:`.feedback_prompt` fills it), the *evidence mask* (what the
feedback model may see of the :mod:`.evidence`), and a level-safe fallback hint for
when every generated hint leaked (see :mod:`.leakage`).

| Level | Reveals                  | Evidence the feedback model sees                         |
|-------|--------------------------|----------------------------------------------------------|
| L1    | symptom                  | problem, expected and candidate outputs (+ summaries)    |
| L2    | input pattern            | L1 + failing inputs                                      |
| L3    | state tracking           | same as L2 (no code: state is inferred from behaviour)   |
| L4    | fault location           | L3 + candidate code                                      |
| L5    | conceptual correction    | L4 + reference code and reference traces                 |
| L6    | repair direction         | same as L5 (never code, pseudocode or an exact patch)    |

A mismatch summary (failure type, counts, larger/smaller) is part of every test's
evidence at every level: it is the symptom itself and contains no verbatim data.

The candidate's output on a hidden test is a function of that test's input. Where a
level hides the failing inputs but shows the candidate's outputs (L1), every echo of the
test's input in its output is cut (:func:`.echoes.redact_echoes`: verbatim, in any case,
across separators, reversed, digits as letters or words; what the problem, the expected
output or the candidate's code hold is kept), so the output cannot carry the input past
the mask. Pure module: no I/O, no randomness.
"""

from __future__ import annotations

from typing import Final, Literal

import msgspec

from ..core.errors import ConfigError
from .echoes import redact_echoes
from .evidence import EVIDENCE_FIELDS, Evidence, EvidenceField, FailureEvidence, describe_failure

__all__ = [
    "HINT_LEVELS",
    "HintLevel",
    "fallback_hint",
    "hint_level",
    "mask_evidence",
    "EVIDENCE_READINGS",
    "EvidenceReading",
]


class HintLevel(msgspec.Struct, frozen=True, kw_only=True):
    """One row of Table II, with its prompt template, evidence mask and fallback.

    ``template`` has the placeholders ``{scenario}``, ``{evidence}``, ``{level}`` and
    ``{name}``; ``fallback`` has ``{symptom}``, filled from the failure type only.
    """

    number: int
    name: str
    description: str
    example: str
    template: str
    mask: tuple[EvidenceField, ...]
    fallback: str


_ASK = (
    "Failure scenario: {scenario}\n\n{evidence}\n\n"
    "Write one level-{level} hint ({name}) of one to three sentences for the programmer. "
)

HINT_LEVELS: Final[tuple[HintLevel, ...]] = (
    HintLevel(
        number=1,
        name="symptom",
        description="Only the observed incorrect behaviour; no input pattern, cause or location.",
        example="The output is larger than expected, suggesting that something may be counted "
        "extra.",
        template=_ASK + "Describe only how the observed output differs from the correct one.",
        mask=("problem", "expected_outputs", "candidate_outputs"),
        fallback="On some hidden tests the program {symptom}.",
    ),
    HintLevel(
        number=2,
        name="input pattern",
        description="The type of input or edge case exposing the failure.",
        example="This failure occurs when the input contains duplicate values.",
        template=_ASK + "Describe the kind of input (its pattern or edge case) on which the "
        "program fails, without giving any concrete test input.",
        mask=("problem", "failing_inputs", "expected_outputs", "candidate_outputs"),
        fallback="On some hidden tests the program {symptom}; the examples in the statement do "
        "not cover every kind of valid input that triggers this.",
    ),
    HintLevel(
        number=3,
        name="state tracking",
        description="The information the solution fails to preserve, update or track correctly.",
        example="The solution does not keep enough information about repeated values across "
        "iterations.",
        template=_ASK + "Describe which information the solution fails to preserve, update or "
        "track while it processes such inputs.",
        mask=("problem", "failing_inputs", "expected_outputs", "candidate_outputs"),
        fallback="On some hidden tests the program {symptom}; it does not keep all the "
        "information it needs up to date while it processes the input.",
    ),
    HintLevel(
        number=4,
        name="fault location",
        description="The suspicious region of the candidate implementation.",
        example="The issue is likely in the loop that updates the count after reading each value.",
        template=_ASK + "Point to the suspicious region of the current program (you may name "
        "its lines, loops or variables) without saying how to fix it.",
        mask=(
            "problem",
            "failing_inputs",
            "expected_outputs",
            "candidate_outputs",
            "candidate_code",
        ),
        fallback="On some hidden tests the program {symptom}; the fault is likely in the part "
        "of the program that computes the answer for these inputs.",
    ),
    HintLevel(
        number=5,
        name="conceptual correction",
        description="The missing invariant, condition or reasoning needed for the scenario.",
        example="The solution needs to distinguish between seeing a value once and seeing it "
        "multiple times.",
        template=_ASK + "State the missing invariant, condition or reasoning the program needs, "
        "as a concept, without telling the programmer what to change.",
        mask=EVIDENCE_FIELDS,
        fallback="On some hidden tests the program {symptom}; the solution does not respect a "
        "condition of the problem that holds for every valid input, unusual ones included.",
    ),
    HintLevel(
        number=6,
        name="repair direction",
        description="A concrete implementation direction, without the corrected code.",
        example="Revise the update logic so repeated values are accumulated rather than "
        "overwritten.",
        template=_ASK + "Give a concrete repair direction in words. Never write code, "
        "pseudocode or an exact patch.",
        mask=EVIDENCE_FIELDS,
        fallback="On some hidden tests the program {symptom}. Re-read the conditions of the "
        "problem statement and revise the computation of the answer so that it holds for "
        "every valid input.",
    ),
)


def hint_level(number: int) -> HintLevel:
    """The Table II row of level ``number`` (1..6)."""
    if not 1 <= number <= len(HINT_LEVELS):
        raise ConfigError(f"hint level must be in 1..{len(HINT_LEVELS)}, got {number}")
    return HINT_LEVELS[number - 1]


#: What the feedback model is shown: ``section-iv`` (§IV: the model "receives the problem
#: requirement, the correct reference program, the current buggy program, the selected
#: scenario test cases, and the requested hint level", at every level; the reference's
#: traces stay from L5, §IV naming none) or ``table-ii`` (the project's masks by level,
#: :data:`HINT_LEVELS`' ``mask``: what each level of Table II may reveal, the candidate's
#: code from L4, the reference from L5). See docs/PROTOCOL.md.
EvidenceReading = Literal["table-ii", "section-iv"]
EVIDENCE_READINGS: Final = ("table-ii", "section-iv")


def mask_evidence(level: int, evidence: Evidence, reading: EvidenceReading = "table-ii") -> Evidence:
    """``evidence`` with every field level ``level`` may not see (under ``reading``) set to
    ``None``, and the candidate's outputs cut of their echoes of inputs the level may not see."""
    mask = set(hint_level(level).mask)
    if reading == "section-iv":
        mask |= {"problem", "candidate_code", "reference_code", "failing_inputs", "expected_outputs",
                 "candidate_outputs"}
    tests = tuple(
        msgspec.structs.replace(
            test,
            input=test.input if "failing_inputs" in mask else None,
            expected=test.expected if "expected_outputs" in mask else None,
            actual=_shown_output(test, evidence, mask),
            trace=test.trace if "reference_trace" in mask else None,
        )
        for test in evidence.tests
    )
    return msgspec.structs.replace(
        evidence,
        problem=evidence.problem if "problem" in mask else None,
        tests=tests,
        candidate_code=evidence.candidate_code if "candidate_code" in mask else None,
        reference_code=evidence.reference_code if "reference_code" in mask else None,
    )


#: Words of how a call test's input is shown (``args = [...]; kwargs = {...}``), not hidden data.
_CALL_WORDS: Final = "args kwargs"


def _shown_output(test: FailureEvidence, evidence: Evidence, mask: set[EvidenceField]) -> str | None:
    """The candidate's output as a level with ``mask`` sees it (None: not at all)."""
    if "candidate_outputs" not in mask:
        return None
    if test.actual is None or test.input is None or "failing_inputs" in mask:
        return test.actual  # no input to hide, or already hidden by an earlier mask
    expected = test.expected if "expected_outputs" in mask else None
    public = (evidence.problem or "", evidence.candidate_code or "", expected or "", _CALL_WORDS)
    return redact_echoes(test.actual, (test.input,), public)


def fallback_hint(level: int, failure: str) -> str:
    """The fixed, level-safe hint used when every generated hint was rejected."""
    return hint_level(level).fallback.format(symptom=describe_failure(failure))
