"""Revision 10's leakage classes: each boundary's information recognised by how it is said, not by a sentence.

Revisions 8 and 9 raised the figures of the sets they were fitted to and not those of the blind sets
written after them (issue 24): a rule that lists a sentence's words generalises to nothing. These classes
are built from a mechanism each, checked on the design sets (fresh14-fresh16 and older) and measured on
the held sets (fresh17-fresh19, scored only in aggregate: ``python -m bench.validator_heldout``).

* ``state`` (below L3), a value attributed to what the program holds: the program's held quantity
  named as such, by a relative clause whose subject is the program and whose verb keeps ("the balance
  your program keeps", "the position you count from") or by a participle of keeping ("the recorded
  answer"); a held mark still in place ("is still marked unvisited", "still ends at 3"); a held value
  never changed or not reset, its subject a held quantity ("the block is never stretched", "the total is not
  reset", "nothing ever crossed it out", "the program never improves it"); stale or carried-over data ("the
  old count", "carries over", "from one query to the next");
  what a held thing ends up as ("the tally ends up keyed by ..."); a role only a program has (counter,
  accumulator, flag, pointer, ...) with a verb of changing or keeping.
* ``input_pattern`` (L1), a class of inputs as the failing subject: a plural noun with a modifier whose
  predicate is the failure ("Letters near the end of the alphabet come out wrong"); a singular input
  given by example ("for a word like xyz"); the failing inputs by a salient member ("on all inputs, including
  the first day of the year"). (:mod:`.leakage_reveals` takes "unless", "as long as", "provided" as conditions
  and "only the tests where ..." as a restrictive clause.)

Each reads the hint only; a clause about the output is the symptom and passes.

Tried and withdrawn: ``concept`` as a law of the problem's domain (a generic subject, "a/an/every X needs/must/
can only/never Ys", a bare plural law, a gerund defined, "is allowed", "the task wants"). It found 5 of the design
sets' missed concepts with no false positive there, and on the held sets none at all for 4 false positives (and
broke fresh17's floor): a restated rule of the problem is often public, and the design sets did not show it.
Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Final

from .leakage_grammar import CLOSED

__all__ = ["failing_class_reasons", "held_value_reasons"]

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
    # "the total is not reset", "the flag doesn't get cleared", "the count never resets between queries"
    _NOT_CHANGED := re.compile(r"\b(?:(?:is|are|was|were|gets?|got)\s+not|isn't|aren't|wasn't|weren't|(?:does|do|did)\s+"
                               r"not\s+get|(?:doesn't|don't|didn't)\s+get|never\s+gets?|(?:does|do|did)\s+not|doesn't|"
                               r"don't|didn't|never)\s+(?:again\s+)?(?P<verb>reset|resets|cleared|clear|clears|refreshed|"
                               r"refresh|refreshes|reinitiali[sz]ed|restarted|restart|restarts|emptied|empties|updated|"
                               r"update|updates|wrapped|wrap|wraps|rewound|moved\s+on|advanced|advance|advances)\b", re.I),
    # "the old count", "leftover marks", "carries over into the next case", "from one query to the next"
    re.compile(r"\b(?:old|stale|leftover|left-over|outdated)\s+(?:value|values|count|counts|total|sum|state|entry|"
               r"entries|result|results|contents?|data|marks?|flags?|one|ones)\b|\bcarr(?:y|ies|ied)\s+over\b|"
               r"\bfrom\s+one\s+(?:[\w-]+\s+)?(?:test|case|line|query|word|round|step|call|number|row|item|element|"
               r"pass|customer|event|day|turn)\s+to\s+the\s+next\b", re.I),
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
            if pattern in (_NEVER_CHANGED, _NOT_CHANGED) and not _HELD_NOUN.search(_clause_before(hint, found.start())):
                continue  # "some openers are never closed": a fact of the input, not a value the program holds
            return [f"state: attributes a value to what the program holds {_show(found.group())} "
                    "(reserved for L3 and above)"]
    return []


# --------------------------------------------------------------------------- input pattern

_FAILURE: Final = (r"(?:fail|fails|failed|come\s+out\s+wrong|comes\s+out\s+wrong|go\s+wrong|goes\s+wrong|break|"
                   r"trip\s+(?:it|the\s+program)\s+up|are\s+(?:wrong|where|the\s+(?:trigger|problem|issue|culprit)|"
                   r"mishandled|handled\s+wrong\w*)|trigger|cause\s+(?:it|the|this|that)|crash)\b")
_FAILING_CLASS: Final = re.compile(
    r"(?:^|[.;:!?]\s+|\bthat\s+)(?:(?:some|all|the|any|those|certain|only)\s+)?(?:[\w-]+\s+)?(?P<noun>[a-z][\w-]*[^s\W]s)\s+"
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


#: "on all inputs, including the first day of the year": the failing inputs' kind by its salient member
_INCLUDING: Final = re.compile(r"\b(?:on|for|with)\s+(?:all|every|many|most|several|some)\s+(?:[\w-]+\s+)?[a-z]+,?\s+"
                               r"(?:including|especially|particularly|notably|in\s+particular)\s+(?P<rest>[^.;:!?]{3,40})",
                               re.I)


def failing_class_reasons(hint: str) -> list[str]:
    """``input_pattern``: a class of inputs as the failing subject (see the module's docstring)."""
    for found in _FAILING_CLASS.finditer(hint):
        if found.group("noun").lower() in _NOT_INPUT_NOUN or _OUTPUT.search(found.group("rest")):
            continue
        return [f"input_pattern: a class of inputs as the failing subject {_show(found.group())} "
                "(reserved for L2 and above)"]
    for found in _INCLUDING.finditer(hint):
        if not (_OUTPUT.search(found.group("rest")) or re.match(r"(?:the\s+)?(?:tests?|cases?)\b|\d", found.group("rest"), re.I)):
            return [f"input_pattern: names a member of the failing inputs {_show(found.group())} "
                    "(reserved for L2 and above)"]
    for found in _SINGLE_EXAMPLE.finditer(hint):
        if found.group("noun").lower() in ("output", "answer", "result", "line", "message", "program", "moment"):
            continue
        return [f"input_pattern: gives an input by example {_show(found.group())} (reserved for L2 and above)"]
    return []


def _show(text: str) -> str:
    return repr(" ".join(text.split())[:40])
