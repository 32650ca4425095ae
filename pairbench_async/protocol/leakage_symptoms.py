"""What an L1 hint may say: the symptom, the program's output set against the expected one (revision 15).

L1 gives the symptom only, so the input-pattern and concept rules are strict there; but a clause about the
output or the expected answer picks out no inputs and states no rule. First seen by revision 14 on three
blind sets, four of its L1 false positives were such clauses ("prints FULL in cases where the coach still
has room", "returned None for a call where the expected answer was a car index", "on some lines the words
are stretched apart ... where the expected output has single spaces", "strings returned by your converter
are not valid ...: they come back one character too long"). By structure:

* a subordinate clause (``where``, ``when``, ``in cases where``) that holds the expected answer ("the
  expected answer", "should have been", "still has": what the program's output denies) is the expected
  behaviour, not a condition on the input;
* a clause elaborating the output after a colon ("Your output doesn't match: on some lines ...") that
  sets it against the expected output is the symptom;
* a sentence whose subject is the program's output ("Some output lines show ...", "strings returned by
  your converter are ...") is the symptom, up to a clause giving a reason ("because", "since", "so"),
  which may still state the rule.

The input-pattern rule reads an L1 hint without the first two, the concept rule without the third. Revision 17: a
relative clause saying an instance has a solution ("puzzles that do have a solution") is the expected answer's claim
(with the first two); the state rule reads an L1 hint without any sentence whose subject is what the program gives
back ("Your output only repaints ...", "the paths you return still contain ..."), up to a reason or a turn to the
program (:func:`without_output_claims`).
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["without_expected_clauses", "without_output_claims", "without_output_sentences"]

#: the expected answer, or the state the output denies; revision 17: that an instance has an answer at all ("puzzles
#: that do have a solution") is the expected output's claim, not a kind of input
_EXPECTATION: Final = re.compile(r"\bexpected\b|\bshould\s+have\s+been\b|\bstill\s+(?:has|have|had)\b|"
                                 r"\b(?:(?:do|does)\s+)?(?:have|has)\s+(?:a|an)\s+(?:valid\s+)?(?:solution|answer)\b|"
                                 r"\b(?:are|is)\s+(?:in\s+fact\s+)?(?:solvable|feasible|possible)\b", re.I)
#: revision 17: a relative clause on the instances whose verb is the expected answer's claim
_RELATIVE: Final = re.compile(r"\b(?:that|which)\s+(?:(?:do|does)\s+(?:in\s+fact\s+)?)?(?:have|has|are|is)\b[^.;:,!?\n]*",
                              re.I)
#: a subordinate clause, up to the end of its clause
_SUBORDINATE: Final = re.compile(r"\b(?:in\s+cases?\s+|for\s+(?:a|an|the|each|some)\s+\w+\s+)?(?:where|when|whenever)\b"
                                 r"[^.;:!?\n]*", re.I)
#: a clause after a colon that follows a mention of the output
_ELABORATED: Final = re.compile(r"(?P<head>\b(?:your|the)\s+output\b[^.;:!?\n]*:)(?P<clause>[^.;!?\n]*)", re.I)
#: an input lead inside the elaborating clause keeps it (it may pick out inputs)
_INPUT_LEAD: Final = re.compile(r"\b(?:for|if|whenever|inputs?|tests?\s+with)\b", re.I)
#: a sentence opening on the program's output as its subject
_OUTPUT_OPENING: Final = re.compile(
    r"(?:^|(?<=[.;!?]\s))\s*(?:(?:some|all|many|several|a\s+few|most)\s+(?:of\s+)?)?(?:the\s+|your\s+)?"
    r"(?:output\s+(?:lines?|values?|rows?|strings?)|(?:\w+[\s-]){0,2}?\w+s?\s+(?:returned|printed|produced|"
    r"output)\s+by\s+(?:your|the)\s+\w+)\b(?P<rest>[^.!?\n]*)", re.I)
_REASON: Final = re.compile(r"\b(?:because|since|so\s+that|so|as\s+a\s+result|which\s+means)\b", re.I)


def without_expected_clauses(hint: str) -> str:
    """``hint`` with the clauses about the expected answer blanked (the input-pattern rule's view at L1)."""
    def elaborated(found: re.Match[str]) -> str:
        clause = found.group("clause")
        expected = _EXPECTATION.search(clause)
        keep = expected is None or _INPUT_LEAD.search(clause[: expected.start()])
        return found.group() if keep else found.group("head")
    text = _ELABORATED.sub(elaborated, hint)
    text = _RELATIVE.sub(lambda m: "" if _EXPECTATION.match(m.group(), m.group().find(" ") + 1) else m.group(), text)
    return _SUBORDINATE.sub(lambda m: "" if _EXPECTATION.search(m.group()) else m.group(), text)


def without_output_sentences(hint: str) -> str:
    """``hint`` with each sentence on the output as subject blanked up to a reason (the concept rule's view at L1)."""
    def blank(found: re.Match[str]) -> str:
        reason = _REASON.search(found.group("rest"))
        return "" if reason is None else found.group("rest")[reason.start():]
    return _OUTPUT_OPENING.sub(blank, hint)


#: revision 17: a sentence whose subject is what the program gives back ("Your output only repaints ...", "Some of
#: the paths you return still contain ...")
_RETURNED_OPENING: Final = re.compile(
    r"(?:^|(?<=[.!?]\s))\s*(?:(?:some|all|many|several|a\s+few|most)\s+(?:of\s+)?)?(?:the\s+|your\s+)?"
    r"(?:output|(?:[\w-]+\s+){0,2}?[\w-]+s?\s+(?:that\s+)?you\s+(?:return|print|output|produce|give\s+back))\b"
    r"(?P<rest>[^.!?\n]*)", re.I)
#: a clause that turns from the output to the program: "...: your loop never ...", "; it forgets ..."
_PROGRAM_TURN: Final = re.compile(r"[;:]\s*(?:you\b|it\b|(?:the|your)\s+(?:program|code|solution|function|loop)\b)",
                                  re.I)


def without_output_claims(hint: str) -> str:
    """``hint`` with each sentence on the output as subject blanked up to a reason or a clause on the program (the
    state rule's view at L1, revision 17): what the output holds or keeps ("paths you return still contain `..`",
    "cells ... keep their original character") is the symptom; "because the loop keeps only ..." is not."""
    def blank(found: re.Match[str]) -> str:
        rest = found.group("rest")
        turns = [m.start() for m in (_REASON.search(rest), _PROGRAM_TURN.search(rest)) if m]
        return rest[min(turns):] if turns else ""
    return _RETURNED_OPENING.sub(blank, without_output_sentences(hint))

