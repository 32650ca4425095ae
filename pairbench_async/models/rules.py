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
evidence traces at L5-L6), else the first. The symptom and the input features are
read from the evidence by :mod:`.rules_evidence`, the code by :mod:`.rules_code`. Each
level has three wordings, tried in turn from ``context.attempt``; the first that passes
``protocol.leakage.validate_hint`` at the level (the run's policy, ``context.validation``; else the default) is returned, so regeneration
gives a different text (if none passes, the attempt's own wording, which the caller's
validator then rejects). With ``level=None`` (a baseline without level control) it
writes an L6-style hint.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from ..core.errors import ClientError, ConfigError
from ..core.types import Completion, Message
from ..protocol.context import TurnContext, estimate_usage
from ..protocol.evidence import describe_failure
from ..protocol.hints import mask_evidence
from ..protocol.leakage import HiddenData, hidden_data, validate_hint
from .interface import ContextOnly
from .rules_code import advise, find_fault, line_span
from .rules_evidence import GENERIC_STATE, Symptom, input_features, main_symptom
from .rules_words import describe_construct

__all__ = ["RulesFeedback"]


def _sentence(text: str) -> str:
    text = " ".join(text.split())
    return text[0].upper() + text[1:] if text else text


class RulesFeedback(ContextOnly):
    """The deterministic rule-based feedback model ``rules``; see the module docstring."""

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
        symptom, failure = main_symptom(evidence, verb)
        basic = describe_failure(failure)
        said = symptom.phrase + (f", {symptom.reading}" if symptom.reading else "")
        if level == 1:
            return [
                f"On these hidden tests the program {said}.",
                f"The observed output differs from the correct one: the program {symptom.phrase}.",
                f"On some hidden tests the program {basic}.",
            ]
        features, feature_state = input_features(context, evidence, self._features)
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
            if state == GENERIC_STATE and feature_state is not None:
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
    def _without_fault(level: int | None, basic: str, symptom: Symptom) -> list[str]:
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
            if not validate_hint(draft, level, context.evidence, context.program, hidden, context.validation):
                return draft
        return order[0]

    async def complete_in_context(self, messages: Sequence[Message], context: TurnContext) -> Completion:
        """Write the hint for ``context``; the messages only count towards usage."""
        if self._closed:
            raise ClientError(f"{self!r} is closed")
        text = self.hint(context)
        await asyncio.sleep(0)
        return Completion(
            text=text, model=self.name, usage=estimate_usage(messages, text), attempts=1
        )

    async def aclose(self) -> None:
        """Mark the model closed; nothing else is held."""
        self._closed = True
