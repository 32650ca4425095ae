"""Revision 10's leakage classes: each boundary's information recognised by how it is said, not by a sentence.

Revisions 8 and 9 raised the figures of the sets they were fitted to and not those of the blind sets
written after them (issue 24): a rule that lists a sentence's words generalises to nothing. These classes
are built from a mechanism each, checked on the design sets (fresh14-fresh16 and older) and measured on
the held sets (fresh17-fresh19, scored only in aggregate: ``python -m bench.validator_heldout``).

* ``state`` (below L3), a value attributed to what the program holds: the program's held quantity
  named as such, by a relative clause whose subject is the program and whose verb keeps ("the balance
  your program keeps", "the position you count from") or by a participle of keeping ("the recorded
  answer"); a held mark still in place ("is still marked unvisited", "still ends at 3"); a held value
  never changed ("is never stretched", "nothing ever crossed it out", "the program never improves it");
  what a held thing ends up as ("the tally ends up keyed by ..."); a role only a program has (counter,
  accumulator, flag, pointer, ...) with a verb of changing or keeping.
* ``concept`` (below L5), a law of the problem's domain: a generic subject (a, an, any, every, each and
  a noun that is not the program, a test or the output) with a law's predicate (needs, must, can only,
  never/always/only + verb, is allowed, counts as, ...); a gerund phrase defined ("counting k people
  includes ..."); what the task wants.
* ``input_pattern`` (L1), a class of inputs as the failing subject: a plural noun with a modifier whose
  predicate is the failure ("Letters near the end of the alphabet come out wrong"); a singular input
  given by example ("for a word like xyz").

Each reads the hint only; a clause about the output is the symptom and passes. Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Final

from .leakage_grammar import CLOSED

__all__ = ["held_value_reasons", "domain_law_reasons", "failing_class_reasons"]

#: what the candidate is shown the program produce: a clause whose subject holds these is the symptom
_OUTPUT: Final = re.compile(r"\b(?:outputs?|output\w*|print\w*|answers?|results?|expected|reports?\w*|shown|"
                            r"displayed|returned)\b", re.I)

_KEEP: Final = (r"(?:keeps|holds|tracks|records|stores|remembers|maintains|carries|updates|accumulates|builds|"
                r"counts\s+from|starts\s+from|works\s+with|moves|advances)")
_KEEP_YOU: Final = (r"(?:keep|hold|track|record|store|remember|maintain|carry|update|accumulate|build|"
                    r"count\s+from|start\s+from|work\s+with|move|advance)")
_HELD_PATTERNS: Final = (
    # "the balance your program keeps", "the position you count from": a program's held quantity
    re.compile(rf"\bthe\s+(?:[\w-]+\s+){{0,2}}?[a-z][\w-]*\s+(?:that\s+|which\s+)?(?:(?:your|the|its|this)\s+"
               rf"(?:program|code|solution|loop|function|search|algorithm)\s+(?:still\s+|only\s+)?{_KEEP}|"
               rf"you\s+(?:still\s+|only\s+)?{_KEEP_YOU})\b(?!\s+[a-z]+ing\b)", re.I),
    # "the recorded answer", "the stored best": a participle of keeping before the held quantity
    re.compile(r"\bthe\s+(?:recorded|stored|tracked|remembered|saved|cached|memoi[sz]ed|accumulated|carried|"
               r"tallied|kept|buffered)\s+(?!(?:in|on|by|as|at|for|with|from|to|and|or)\b)[a-z]{3,}", re.I),
    # "is still marked unvisited", "still ends at 3": a held mark or bound left in place
    re.compile(r"\b(?:is|are|was|were|remains?|stays?)\s+still\s+(?:marked|set|flagged|unvisited|visited|unset|"
               r"true|false|recorded|stored|cached|pending|active|counted|on\s+the\s+(?:stack|queue))\b|"
               r"\bstill\s+(?:marked|flagged|unvisited|ends\s+at|points\s+(?:at|to)|refers\s+to|sits\s+at|"
               r"set\s+to|equals?)\b", re.I),
    # "the program never improves it", "nothing ever crossed it out": a held value never changed
    _NEVER_ACTS := re.compile(r"(?:\bnothing\s+(?:in\s+the\s+(?:program|code)\s+)?(?:ever\s+)?|"
                              r"\b(?:the\s+(?:program|solution|code)|it)\s+never\s+)(?P<verb>[a-z]+)\s+"
                              r"(?:it|them|its|their|the|this|that|back)\b", re.I),
    # "the last block is never stretched to 5", "the flag is never cleared"
    _NEVER_CHANGED := re.compile(r"\b(?:is|are|was|were|gets?|got)\s+never\s+(?:again\s+)?(?P<verb>[a-z]+(?:ed|en)|"
                                 r"reset|set|put|kept|made)\b", re.I),
    # "the tally dictionary ends up keyed by the raw tokens", "ends up one place further along"
    re.compile(r"\bends?\s+up\s+(?:keyed|holding|storing|containing|pointing|indexed|one|two|\d+|being|as\s+an?)\b",
               re.I),
    # "the failure counter should go back to zero": a role only a program has, changing or kept
    re.compile(r"\b(?:counter|accumulator|flag|tally|pointer|marker|cursor|memo|cache|visited\s+(?:set|array|list|"
               r"marks?))\s+(?:(?:should|must|never|does\s+not|doesn't|is\s+not|isn't|only|still|always|also|then|"
               r"keeps|is|gets)\s+){0,2}(?:go(?:es)?\s+back|reset|resets|wraps?|advances?|moves?|increments?|"
               r"decrements?|grows?|drifts?|lags?|jumps?|skips?|cleared|updated|incremented|bumped|stale|behind|"
               r"ahead|(?:stays?|remains?|starts?)\s+(?:at|on|from))\b", re.I),
)
#: what a program holds: the subject a passive "is never <changed>" must have to be about the program's state
_HELD_NOUN: Final = re.compile(r"\b(?:flags?|marks?|markers?|counters?|count|total|sum|tally|balance|best|maximum|"
                               r"minimum|max|min|distances?|entry|entries|block|record|position|index|pointer|cursor|"
                               r"table|memo|cache|stack|queue|set|list|array|dict\w*|map|state|variable|accumulator|"
                               r"window|bound|current|running|stored|recorded|visited)\b", re.I)
#: verbs that are the symptom or control flow, not a change to a held value ("is never printed", "never
#: reaches the end", "is never entered"), or a rule the program misses ("never considers")
_NOT_CHANGE: Final = frozenset((
    "printed print prints output outputted shown show shows displayed display reported report returned return "
    "returns written write writes reached reach reaches called call calls executed execute run runs entered "
    "enter enters triggered trigger hit hits tested test tests checked check checks considered consider "
    "considers handled handle handles terminates terminate stops stop finishes finish ends end gets get "
    "fails fail passes pass gives give finds find sees see knows know produced produce produces seen "
    "given taken used happened visited reads read").split())


def _clause_before(hint: str, start: int) -> str:
    return hint[max((hint.rfind(mark, 0, start) for mark in ".;:!?\n"), default=-1) + 1: start]


def held_value_reasons(hint: str) -> list[str]:
    """``state``: a value attributed to what the program holds (see the module's docstring)."""
    for pattern in _HELD_PATTERNS:
        for found in pattern.finditer(hint):
            if _OUTPUT.search(_clause_before(hint, found.start())):
                continue  # "the printed line is never shown": of the output, the symptom
            if pattern in (_NEVER_ACTS, _NEVER_CHANGED) and (
                    found.group("verb").lower() in _NOT_CHANGE or found.group("verb").lower() in CLOSED):
                continue
            if pattern is _NEVER_CHANGED and not _HELD_NOUN.search(_clause_before(hint, found.start())):
                continue  # "some openers are never closed": a fact of the input, not a value the program holds
            return [f"state: attributes a value to what the program holds {_show(found.group())} "
                    "(reserved for L3 and above)"]
    return []


# --------------------------------------------------------------------------- concept

_CLAUSE_START: Final = r"(?:^|[.;:!?]\s+|,\s+(?:so|and|but|since|because|yet)\s+|\b(?:because|since|that|and)\s+)"
#: a law's predicate after a generic subject
_LAW: Final = (r"(?:needs|requires|must|has\s+to|can\s+only|may\s+only|cannot|can't|can\s+never|may\s+not|"
               r"is\s+(?:only\s+|never\s+|always\s+)?(?:allowed|valid|invalid|required|defined|permitted|forbidden)|"
               r"(?:only|never|always)\s+(?P<verb>[a-z]+s)|counts\s+as|forms|contributes|belongs)\b")
_GENERIC_LAW: Final = re.compile(
    rf"{_CLAUSE_START}(?P<np>(?:a|an|any|every|each)\s+(?:[\w'-]+\s+){{0,4}}?){_LAW}", re.I | re.M)
#: generic subjects that are the program, a test or the output: what happens, not a law
_NOT_DOMAIN: Final = re.compile(r"\b(?:program|code|solution|loop|function|variable|test|tests|case|output|answer|"
                                r"result|line\s+printed|printed|run|submission|attempt|hint|query\s+answer|update|"
                                r"check|comparison|branch|condition|call|step|iteration|pass|index|pointer|counter|"
                                r"list|array|dict\w*|table|stack|queue|statement|expression|assignment)\b", re.I)
#: "each value must be reduced ...": a change asked of the program (a direction), not a law
_CHANGE_ASKED: Final = re.compile(r"\s+(?:also\s+|first\s+|then\s+)?be\s+[a-z]+(?:ed|en)\b(?!\s+(?:as|by\s+the\s+"
                                  r"(?:problem|task|statement)))", re.I)
_SYMPTOM_VERBS: Final = frozenset("fails passes prints outputs returns crashes gives shows appears works breaks "
                                  "comes goes runs times errs".split())
_GERUND_DEFINED: Final = re.compile(
    rf"{_CLAUSE_START}(?P<gerund>[A-Za-z]+ing)\s+(?:[\w'-]+\s+){{0,5}}?(?:includes|means|requires|implies|involves|"
    r"amounts\s+to|counts\s+as|is\s+the\s+same\s+as)\b", re.I | re.M)
_TASK_WANTS: Final = re.compile(r"\b(?:the|this)\s+(?:task|problem|statement|exercise|specification|spec)\s+"
                                r"(?:wants|asks\s+for|calls\s+for|demands|needs|specifies|counts|means|treats)\b|"
                                r"\bwhat\s+the\s+(?:task|problem|statement)\s+(?:wants|asks\s+for|means)\b", re.I)


def domain_law_reasons(hint: str) -> list[str]:
    """``concept``: a law of the problem's domain (see the module's docstring)."""
    for found in _GENERIC_LAW.finditer(hint):
        verb = (found.group("verb") or "").lower()
        if (_NOT_DOMAIN.search(found.group("np")) or verb in _SYMPTOM_VERBS or verb in CLOSED
                or _CHANGE_ASKED.match(hint, found.end())):
            continue
        return [f"concept: states a law of the problem's domain {_show(found.group())} (reserved for L5 and above)"]
    for found in _GERUND_DEFINED.finditer(hint):
        if found.group("gerund").lower() in ("nothing", "something", "anything", "everything", "printing", "running"):
            continue
        return [f"concept: defines a notion of the problem {_show(found.group())} (reserved for L5 and above)"]
    found = _TASK_WANTS.search(hint)
    if found:
        return [f"concept: says what the task wants {_show(found.group())} (reserved for L5 and above)"]
    return []


# --------------------------------------------------------------------------- input pattern

_FAILURE: Final = (r"(?:fail|fails|failed|come\s+out\s+wrong|comes\s+out\s+wrong|go\s+wrong|goes\s+wrong|break|"
                   r"trip\s+(?:it|the\s+program)\s+up|are\s+(?:wrong|where|the\s+(?:trigger|problem|issue|culprit)|"
                   r"mishandled|handled\s+wrong\w*)|trigger|cause\s+(?:it|the|this|that)|crash)\b")
_FAILING_CLASS: Final = re.compile(
    r"(?:^|[.;:!?]\s+)(?:(?:some|all|the|any|those|certain|only)\s+)?(?:[\w-]+\s+)?(?P<noun>[a-z][\w-]*[^s\W]s)\s+"
    r"(?:near|ending|starting|beginning|containing|with|without|having|above|below|over|under|longer|shorter|"
    r"bigger|smaller|greater|past|beyond|close\s+to|made\s+of|of\s+(?:length|size))\b"
    rf"(?P<rest>[^.;:!?]{{0,50}}?)\b{_FAILURE}", re.I | re.M)
#: nouns of the program or the output, never a class of inputs
_NOT_INPUT_NOUN: Final = frozenset(("outputs answers results tests cases lines-printed values-printed loops "
                                    "functions variables programs solutions things parts errors bugs runs "
                                    "iterations steps checks branches conditions").split())
_SINGLE_EXAMPLE: Final = re.compile(r"\b(?:for|on|with|given)\s+(?:a|an)\s+(?:[\w-]+\s+)?(?P<noun>[a-z]+)\s+"
                                    r"(?:like|such\s+as)\s+(?!(?:this|that|these|those|it|the|a|an)\b)[\w\"'“‘(\[-]",
                                    re.I)


def failing_class_reasons(hint: str) -> list[str]:
    """``input_pattern``: a class of inputs as the failing subject (see the module's docstring)."""
    for found in _FAILING_CLASS.finditer(hint):
        if found.group("noun").lower() in _NOT_INPUT_NOUN or _OUTPUT.search(found.group("rest")):
            continue
        return [f"input_pattern: a class of inputs as the failing subject {_show(found.group())} "
                "(reserved for L2 and above)"]
    for found in _SINGLE_EXAMPLE.finditer(hint):
        if found.group("noun").lower() in ("output", "answer", "result", "line", "message", "program", "moment"):
            continue
        return [f"input_pattern: gives an input by example {_show(found.group())} (reserved for L2 and above)"]
    return []


def _show(text: str) -> str:
    return repr(" ".join(text.split())[:40])
