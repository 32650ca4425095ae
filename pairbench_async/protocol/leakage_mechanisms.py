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

Each reads the hint only; a clause about the output is the symptom and passes. Revision 14: a plural that
"comes out" wrong is a thing of the output, whatever its modifier ("Some section numbers come out wrong"; first
seen, the featured-failing rule fired on it alone and was never right on any set).

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
from .leakage_reveals import FEATURE_ADJ

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
    # "replaces the amount instead of adding to it", "is refreshed rather than extended": a held value
    # destroyed where it should grow
    re.compile(r"\b(?:replac|overwrit|reset|refresh|clobber|wip|clear|eras|restart|reinitiali[sz])\w*\b[^.;!?]{0,40}?"
               r"\b(?:instead\s+of|rather\s+than)\s+(?:being\s+)?(?:add|updat|extend|accumulat|sum|increment|"
               r"combin|merg|keep|grow|build|append|carr)\w*", re.I),
    # "only remembers the most recent deposit", "keeps just one", "only the newest value survives"
    re.compile(r"\b(?:only|just)\s+(?:ever\s+)?(?:remembers|keeps|stores|holds|records|tracks|retains|saves)\b|"
               r"\b(?:remembers|keeps|stores|holds|records|tracks|retains|saves)\s+(?:only|just)\b|"
               r"\bonly\s+the\s+(?:last|latest|newest|most\s+recent|first|oldest)\s+(?:[\w-]+\s+){0,3}?"
               r"(?:survives?|remains?|stays?|is\s+kept|is\s+stored|is\s+remembered)\b", re.I),
    # "the last amount seen for the account": a held value named by when the program met it
    re.compile(r"\b(?:last|latest|most\s+recent|newest)\s+(?:[\w-]+\s+){0,2}?(?:seen|met|encountered|"
               r"processed|stored|recorded|kept)\b", re.I),
    # "is not accumulated across lines", "does not build up", "never adds up"
    re.compile(r"\b(?:is|are|was|were|gets?|got)\s+(?:not|never)\s+(?:\w+\s+)?(?:accumulated|summed|added\s+up|built\s+up|"
               r"tallied|totall?ed|aggregated|combined|merged)\b|\b(?:does|do|did)\s*(?:not|n't)\s+(?:build|add|sum|pile)\s+up\b", re.I),
    # "the value it holds", "the amount kept for each account": a quantity the program holds, after its noun
    re.compile(r"\b(?:value|values|amount|amounts|count|counts|total|totals|sum|sums|number|figure|balance|entry|"
               r"entries|record|state|information|data|result)\s+(?:it|they)\s+(?:still\s+|only\s+)?(?:holds|keeps|stores|"
               r"records|tracks|remembers|maintains|carries|accumulates)\b|"
               r"\b(?:amount|amounts|count|counts|total|totals|sum|sums|figure|balance|entry|entries|state|information|"
               r"data)\s+(?:kept|stored|recorded|tracked|remembered|saved|maintained|accumulated|cached)\s+"
               r"(?:for|per|about|on|in)\b", re.I),
    # "its record of each account", "their tally of ...": the program's record, by a possessive
    re.compile(r"\b(?:its|their)\s+(?:own\s+)?(?:record|records|tally|memory|notion|idea|picture|view|bookkeeping|"
               r"copy|knowledge|estimate|count|counts|total|sum)\s+of\b", re.I),
    # "the history of an account is thrown out", "the dictionary entry is clobbered", "the totals from
    # before are gone": a held quantity destroyed (its subject a held noun: see held_value_reasons)
    _DESTROYED := re.compile(r"\b(?:is|are|was|were|gets?|got|being)\s+(?:\w+\s+)?(?:thrown\s+out|erased|clobbered|"
                             r"wiped|dropped|replaced|gone|deleted|removed|emptied)\b", re.I),
    # "marks remain blocked for the next search", "marks linger into the next one", "the program still
    # believes the cell is in use", "the bookkeeping is shared across all starts": state outliving its scope
    re.compile(r"\b(?:remains?|remained|stays?|stayed)\s+(?:still\s+)?(?:marked|set|flagged|blocked|taken|occupied|"
               r"locked|filled|visited|used|active|reserved)\b|\b(?:linger|lingers|lingered|lingering|persists?|"
               r"persisted|leaks?\s+into|leaked\s+into|bleeds?\s+into|spills?\s+(?:over\s+)?into)\b|"
               r"\b(?:program|solution|code|it)\s+(?:still\s+|wrongly\s+)?(?:believes|thinks|assumes|supposes)\b|"
               r"\b(?:is|are)\s+shared\s+(?:across|between|among|by\s+all)\b", re.I),
    # "the path's cells are not released", "is never unmarked": a held mark never undone (no held noun needed:
    # these verbs only undo what a program holds)
    re.compile(r"\b(?:(?:is|are|was|were|gets?|got)\s+(?:not|never)|isn't|aren't|never\s+gets?)\s+(?:again\s+)?"
               r"(?:released|freed|unmarked|undone|restored|rolled\s+back|unset|popped|backtracked)\b", re.I),
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
_HELD_NOUN: Final = re.compile(r"\b(?:flags?|marks?|markers?|counters?|counts?|totals?|sums?|tally|balances?|best|"
                               r"maximum|minimum|max|min|distances?|entry|entries|blocks?|records?|position|index|"
                               r"pointer|cursor|table|memo|cache|stack|queue|set|list|array|dict\w*|map|mapping|state|"
                               r"variable|accumulator|window|bound|current|running|stored|recorded|visited|history|"
                               r"memory|from\s+before|earlier\s+ones|previous\s+ones)\b", re.I)
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
            if (pattern in (_NEVER_CHANGED, _NOT_CHANGED, _DESTROYED)
                    and not _HELD_NOUN.search(_clause_before(hint, found.start()))):
                continue  # "some openers are never closed": a fact of the input, not a value the program holds
            return [f"state: attributes a value to what the program holds {_show(found.group())} "
                    "(reserved for L3 and above)"]
    return []


# --------------------------------------------------------------------------- input pattern

_FAILURE: Final = (r"(?:fail|fails|failed|comes?\s+out\s+(?:wrong|incorrect|bad)|go\s+wrong|goes\s+wrong|break|"
                   r"trip\s+(?:it|the\s+program|the\s+code|the\s+solution)\s+up|(?:produce|give|get)s?\s+(?:a\s+|the\s+)?"
                   r"(?:wrong|incorrect|bad)|throw\s+(?:it|the\s+\w+)\s+off|are\s+(?:wrong|where|the\s+(?:trigger|problem|issue|culprit)|"
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


#: "Repeated account names are where it goes wrong", "Negative amounts trip the program up": an input
#: feature on a plural subject whose predicate is the failure
_FEATURED_FAILING: Final = re.compile(
    rf"(?:^|[.;:!?]\s+|\bthat\s+)(?:(?:all|the|some|any|those)\s+)?(?:{FEATURE_ADJ}[\s-]+(?:[\w-]+\s+){{0,2}}?|"
    # any modifier of a sentence-opening plural ("Palindromic words get a wrong count"): its first word open-class
    rf"(?P<mod>[A-Za-z][\w-]+)\s+(?:[\w-]+\s+)?)(?P<noun>[a-z][\w-]*[^s\W]s)\s+(?:\w+\s+){{0,2}}?{_FAILURE}", re.I | re.M)
#: a plural subject that "comes out" wrong is a thing of the output, whatever its modifier ("Some section numbers
#: come out wrong"): first seen, the rule fired on it alone and was never right on any set (revision 14)
_COMES_OUT: Final = re.compile(r"\bcomes?\s+out\b", re.I)
#: "on inputs with several occurrences of ...": a quantity as the failing inputs' property
_WITH_QUANTITY: Final = re.compile(
    r"\b(?:on|for|in)\s+(?:the\s+)?(?:[\w-]+\s+)?[a-z]+s\s+(?:with|having|containing|that\s+have|that\s+contain)\s+"
    r"(?:several|many|multiple|two|three|more|fewer|no|only|a\s+lot|lots|at\s+least|at\s+most|exactly)\b", re.I)
#: "With two transactions for one account": a quantity of one input thing per another
_QUANTIFIED: Final = re.compile(
    r"\b(?:with|for|on|given|having|has|have)\s+(?:two|three|several|multiple|many|more\s+than\s+one|at\s+least\s+two)\s+"
    r"[a-z]+s\s+(?:for|in|on|per|of|with|about|to)\s+(?:one|a\s+single|the\s+same|one\s+and\s+the\s+same)\b", re.I)
#: "Any account with a withdrawal ends up ...": a quantified input subject picked out by a property
_ANY_WITH: Final = re.compile(
    r"(?:^|[.;:!?]\s+)(?:any|every|each|all)\s+(?:[\w-]+\s+)?(?P<noun>[a-z]+)\s+(?:with|having|containing|without|"
    r"whose|that\s+(?:has|have|contains?|includes?|holds?|receives?|gets?|appears?|occurs?))\s+", re.I | re.M)
#: "Only accounts mentioned once come out right": the passing inputs characterised
_ONLY_RIGHT: Final = re.compile(
    r"\bonly\s+(?:the\s+)?(?:[\w-]+\s+){0,3}?(?P<noun>[a-z]+s)\s+(?:[\w-]+\s+){0,3}?(?:come\s+out\s+right|"
    r"pass|work|are\s+(?:right|correct|fine|handled\s+(?:right|correctly)))\b", re.I)
#: subjects that are the program, a test or a measure of the output ("the number of components", "move counts")
_NOT_SUBJECT: Final = re.compile(r"\b(?:tests?|cases?|outputs?|answers?|results?|lines?\s+printed|values?\s+printed|"
                                 r"programs?|parts?|times?|runs?|number\s+of|counts|totals|sums)\b", re.I)

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
    for pattern in (_FEATURED_FAILING, _QUANTIFIED, _ANY_WITH, _ONLY_RIGHT, _WITH_QUANTITY):
        for found in pattern.finditer(hint):
            subject = found.group("noun") if pattern is _FEATURED_FAILING else found.group()
            if _NOT_SUBJECT.search(subject) or _OUTPUT.search(subject):
                continue
            if pattern is _FEATURED_FAILING and found.group("mod") and (
                    found.group("mod").lower() in CLOSED or _NOT_SUBJECT.search(hint, found.start(), found.end("noun"))
                    or _OUTPUT.search(found.group("mod")) or found.group("noun").lower() in _NOT_INPUT_NOUN):
                continue  # "Some tests fail", "Printed values come out wrong"
            if pattern is _FEATURED_FAILING and _COMES_OUT.search(found.group()):
                continue  # "Some section numbers come out wrong": what comes out is the output (revision 14)
            return [f"input_pattern: characterises the failing inputs {_show(found.group())} "
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
