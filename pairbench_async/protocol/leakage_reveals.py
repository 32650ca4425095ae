"""The leakage rules for Table II's middle rows: input pattern and state tracking (concept: :mod:`.leakage_concept`).

Seed 000, Table II: L1 reveals "only the observed incorrect behavior; no input pattern,
cause, or code location"; L2 "the type of input or edge case exposing the failure";
L3 "the information that the solution fails to preserve, update, or track
correctly"; L5 "the missing invariant, condition, or reasoning needed to handle the
scenario". So (:mod:`.boundaries`):

* ``input_pattern`` (L1 only): the hint says on what kind of input the program fails:
  a condition clause (``when``/``if``/``whenever``/``only when``) or a phrase like
  "on/for/with <inputs> that/with/where ..." naming an input feature (empty, single,
  duplicate, negative, large, sorted, mixed case, ties, touching, cycles, ``n = 1``,
  ...), "the input contains/has ...", an input noun described by such a feature
  ("every number in the array is negative"), or an "edge/corner case". A feature
  said of the *output* ("prints a negative number", "the answer is larger") is the
  symptom itself and passes.
* ``state`` (L1-L2): the hint says what the solution fails to keep: a negated memory
  verb ("does not keep/track/record/update", "fails to remember"), losing or
  overwriting or resetting what it holds ("loses track", "forgets", "overwrites the
  count"), state words ("running total", "so far", "already seen", "across
  iterations"); or it explains the cause through the solution
  ("because the program ..."), which Section IV-B says is where L3 starts: "L3
  identifies the missing state ..., moving from external behavior to internal
  reasoning".
* ``concept`` (L1-L4): the hint states the missing rule: a norm on the problem's
  objects ("ties must be resolved by name", "needs to distinguish", "has to be"),
  a classification ("counts as", "still overlap", "belong to the same"), a
  multiplicity ("used at most once", "counted twice"), or reasoning vocabulary
  ("invariant", "symmetric", "does not commute", "modular inverse", "strictly
  smaller", "not valid after", "the problem requires").

Issue 24 widened each to its class (the reviewer's misses were members): ``input_pattern``
also as a restrictive clause picking out tests or inputs ("on the tests in which no value is
positive", "for boards where ...", "handles meetings that share ...", "people who are exactly
18"), a condition whose subject is the input's ("whenever a digit of the number is 4", "once n
gets past 45"), an input noun against a bound ("inputs below -17.8"), unless the clause is
about the program, its output or the expected output; ``state`` also as the program's own
record ("the program's record of ..."), staleness ("lags behind"), what it has seen or
already changed, information held and unused ("nothing remembers", "never used later", a
passive "is ignored"), a cause through the program's parts ("because the conversion ...");
``concept`` also as a classification, a multiplicity ("adds ... twice"), an order of events, a
definition ("zero means ..."), a constraint ("can only start once ..."), but not the program's
own doing ("the table treats X as Y") nor a norm followed by a repair participle ("should be
compared", a direction). Round 3 (revision 6): a cardinality in a condition on the input ("as soon
as there are at least two coin values"), losing precision or digits and a cause through any named
program part ("since the parser ..."), a correction by contrast (", not for just one character")
unless its clause is about the program or output; a multiplicity guessed under a hedge is the
symptom (Table II's own L1 example), "ignores" is a concept only of a fact ("ignores that ...").
Revision 7: any plural noun with a feature ("for phrases with spaces"), "with k = 1", a condition
placed "in the input"; what compared data "still has"; "can never both"; not a classification
told of the program's own count, index or list.
Revision 8 (fresh14, an outside reviewer's set, and the false positives over every set): an input
named by its value anywhere ("Look at n = 36") or by example ("years like 1900"), a subject relative
clause with any verb ("withdrawals that take the account down to zero"), "all inputs except ...";
state as forgetting where/what, holding on to a value, its passive loss ("is thrown away"), a value
that stays at zero or keeps its initial value, where it starts ("cur starts from the wrong value"),
what the program's values still give or hold, what goes into its total; "how many times" alone is a
count word, not state; a concept as membership ("belongs to the sum", "is not part of the total"),
"at most once" with any verb, "are leap years only when/unless", ", not two", "... matters.", "has
no order"; not a passive "is treated as" (the program's doing described) nor "X counts <object>".

Revision 9: an input pattern at L1 also by construction, a plural noun with an example list or a
sentence-opening plural noun with its relative clause (:func:`.leakage_grammar.example_inputs`); the cause
rule of ``state`` not for a cause that is a classification or a multiplicity; a classification whose
subject is the program or a part of it, and a norm whose subject is a concrete part of the code, no
``concept``.

Revision 13: an input pattern needs a property of the input, not of the output: an elliptical condition
("reports two versions as equal when they are not") denies what the main clause says of the output, and a
class named with its complement ("NO for a perfect square, or YES for one that is not") picks none out.
Revision 14: a modal is no verb of what the program still holds ("while it should still have been a priority
car's turn" is what ought to have happened).

These read the hint only (no program, no hidden data). A rule is a lexicon of how
hints phrase one kind of information, not a list of examples: it errs on the side
of passing a hint, since the judge (:mod:`.judge`) can be asked about what the rules
accept. Each reason starts with the boundary's name and shows at most 40 characters
of the hint. Pure: no I/O.

Revision 16: below L3, the program that stops considering a thing is state; at L1 a condition whose input
subject takes a measure ("When a move takes more time than ...") picks out inputs.

Revision 17: a hedged guess at what the program's record says of an item ("It looks like a cell counts as visited in
every row as soon as ...") is state.

Revision 18: a loss denied ("so nothing is lost", "is not lost") is no value the program fails to keep.
"""

from __future__ import annotations

import re
from typing import Final

from .leakage_grammar import example_inputs

__all__: list[str] = []

_CLAUSE_END: Final = re.compile(r"[,.;:!?()\n]|\b(?:while|but|although|though|because|whereas)\b", re.I)

#: what a failing input is made of
_INPUT_NOUN: Final = (
    r"(?:(?:test\s+)?inputs?|numbers?|integers?|values?|elements?|items?|entr(?:y|ies)|arrays?|lists?|"
    r"sequences?|strings?|texts?|lines?|words?|characters?|letters?|digits?|quer(?:y|ies)|graphs?|trees?|"
    r"nodes?|vertex|vertices|edges?|intervals?|ranges?|matri(?:x|ces)|grids?|rows?|columns?|points?|names?|"
    r"scores?|weights?|pairs?|data|[nmkq])"
)
#: what distinguishes a kind of input (the words an input-pattern hint is made of)
_FEATURE: Final = (
    r"(?:empty|blank|nothing\s+(?:at\s+all|to\s+(?:read|process))|no\s+(?:numbers|values|elements|items|input|"
    r"data|characters|letters|edges|lines|words)|single|only\s+one|just\s+one|one\s+(?:element|item|number|"
    r"value|character|letter|node|row|column|query|word|interval)|duplicat\w*|repeat\w*|repetitions?|"
    r"more\s+than\s+once|twice|several\s+times|distinct|(?:two|three|\d+)\s+or\s+more|at\s+least\s+(?:one|two|three|\d+)|"
    r"more\s+than\s+(?:one|two|\d+)\b(?!\s+(?:tests?|cases?|times))|multiple|many\s+times|the\s+same|equal|identical|tie[sd]?|negative|"
    r"zeros?|positive|large|larger|huge|big|long|longer|maximum|minimum|maximal|minimal|small|tiny|short|"
    r"sorted|unsorted|reversed?|descending|ascending|decreasing|increasing|odd|even|"
    r"upper[\s-]?case|lower[\s-]?case|mixed[\s-]?case|capital\w*|whitespace|spaces?|punctuation|special\s+"
    r"characters?|non-alphanumeric|symbols?|disconnected|isolated|cycles?|cyclic|self-loops?|"
    r"(?:multiple|parallel)\s+edges|touch\w*|overlap\w*|adjacent|nested|boundar\w*|extreme|"
    r"(?:first|last)\s+(?:element|position|index|item|character|node|interval|query)|"
    r"(?:size|length)\s+(?:(?:of|is|=)\s+)?(?:0|1|one|zero|two)|[nmkq]\s*(?:=|==|is|equals)\s*\d+|"
    r"billions?|millions?|(?:exact\s+)?multiples?\s+of|divisible|divides|primes?|perfect\s+squares?|"
    r"(?:at|near)\s+the\s+(?:very\s+)?(?:end|start|beginning|front)|"
    r"thousands?|10\s*\^\s*\d+|10\*\*\d+|1e\d+|\d{5,})"
)
#: a feature as an adjective in front of an input noun
FEATURE_ADJ: Final = (
    r"(?:empty|blank|single|one-element|single-element|duplicated?|repeated|identical|equal|tied|negative|"
    r"zero|positive|large|huge|big|long|small|tiny|short|sorted|unsorted|reversed|descending|ascending|"
    r"decreasing|increasing|odd|even|odd-length|even-length|upper-?case|lower-?case|mixed-case|capitali[sz]ed|"
    r"disconnected|isolated|cyclic|touching|overlapping|adjacent|nested|extreme|boundary|edge|corner|special|"
    r"degenerate|maximal|minimal|non-empty|multi-digit|one-character|two-element)"
)
#: words that put a feature on the output (the symptom), not on the input
OUTPUT_CUE: Final = re.compile(
    r"\b(?:outputs?|output\w*|print(?!ers?\b)\w*|return\w*|answers?|results?|expected|produc\w*|gives?|gave|"
    r"reports?|reported|shows?(?!\s+up)|displays?|prints?)\b",
    re.I,
)
_TRIGGER: Final = re.compile(
    # "as if": a comparison, not a condition (issue 24, round 3)
    r"\b(?:when(?:ever)?|(?<!\bas\s)if|once|as\s+soon\s+as|in\s+(?:the\s+)?cases?\s+(?:where|when|with|of)|"
    r"only\s+(?:for|on|with))\b",
    re.I,
)
_FEATURE_RE: Final = re.compile(rf"\b{_FEATURE}\b", re.I)
_DET: Final = r"(?:(?:an?|the|some|such|these|those|any|all|every|each)\s+)?"
_INPUT_PATTERNS: Final = (
    # "on empty input", "for large values of n", "with only negative numbers"
    re.compile(rf"\b(?:on|for|with|given|in)\s+{_DET}(?:(?:very|really|quite|extremely|especially|particularly|"
               rf"fairly|rather|unusually|only|all|strictly|many|two|several)\s+)?"
               rf"{FEATURE_ADJ}[\s-]+(?:[\w-]+\s+)?{_INPUT_NOUN}\b", re.I),
    # "on lines that mix uppercase ...", "for inputs of size one", "graphs that contain cycles"
    re.compile(rf"\b(?:on|for|with|given)\s+{_DET}{_INPUT_NOUN}\s+(?:that|which|where|whose|with|containing|"
               rf"having|of|in\s+which|without|made\s+of|consisting\s+of)\b[^,.;:!?]{{0,60}}?"
               rf"(?:\b{_FEATURE}\b|\b(?:contain|include|hold|mix|repeat|share|touch|overlap|exceed|span)\w*)",
               re.I),
    # "for years like 1900 that are divisible by 100": any plural noun described by a relative clause
    re.compile(r"\b(?:on|for|with|given)\s+(?:(?:an?|the|some|such|these|those|any|all|every|each)\s+)?"
               r"(?:[\w-]+\s+){0,2}?[a-z][\w-]*s\s+(?:like\s+[^\s,.;:]+\s+)?(?:that|which|where|whose)\s+"
               r"(?:are|is|have|has|contain|include|hold|end|start|begin|exceed|share|repeat|consist|mix|lack|"
               r"span|cross|touch|overlap)\b(?![^,.;:!?]*\b(?:print|output|return|answer)\w*)", re.I),
    # "years divisible by 100", "amounts that are multiples of 5"
    re.compile(r"\b[a-z][\w-]*s\s+(?:that\s+are\s+)?(?:divisible\s+by|multiples?\s+of|powers?\s+of)\s+\w+",
               re.I),
    # "the input contains ...", "the input is empty"
    re.compile(r"\b(?:the|an?|this|these|its|such)\s+inputs?\s+(?:contains?|has|have|includes?|holds?|"
               r"consists?|mix(?:es)?|with|is\s+(?:empty|blank|large|huge|small|long|short|sorted|a\s+single|"
               r"made|given|of))\b", re.I),
    # "inputs below -17.8 degrees", "values over 10^9": inputs picked out by a bound
    re.compile(rf"\b{_INPUT_NOUN}\s+(?:below|above|under|over|beyond|past|exceeding|(?:less|greater|more|fewer|larger|"
               rf"smaller|bigger|higher|lower)\s+than|of\s+at\s+(?:least|most))\s+-?\d", re.I),
    # "for phrases with spaces or punctuation in them": any plural noun holding a feature; "Even with
    # k = 1": a one-letter input given a value (issue 24, round 3)
    re.compile(rf"\b(?:on|for|given)\s+(?:(?:the|some|such|these|those|any|all)\s+)?(?:[\w-]+\s+)?[a-z][\w-]*s\s+"
               rf"(?:with|containing|having|that\s+(?:have|contain|include))\s+(?:[\w-]+\s+){{0,2}}?{_FEATURE}\b", re.I),
    # a one-letter input given a value anywhere ("Look at n = 36 or n = 49"): an input named by its value is a
    # member of the class of failing inputs, whatever preposition introduces it (revision 8)
    # (not a value of the output: "the output n = 4 is one too many")
    re.compile(r"(?<!output\s)(?<!outputs\s)(?<!prints\s)(?<!printed\s)(?<!answer\s)(?<!result\s)(?<!returns\s)"
               r"(?<![\w.\[(])[a-z]\s*(?:=|==|equal\s+to)\s*-?\d+\b(?!\s*[-+*/%]\s*\w)(?!\s*[\])])", re.I),
    # (inputs given by example, "in years like 1900 or 2100", revision 8's pattern: revision 9 reads them by
    # construction, :func:`.leakage_grammar.example_inputs`, which knows "looks like 1+2" is no plural noun)
    # "all inputs except the 1 x 1 grids": the failing inputs picked out by their exception (revision 8)
    re.compile(rf"\b(?:all|every|any|each)\s+(?:other\s+)?(?:[\w-]+\s+)?{_INPUT_NOUN}\s+(?:except|but|other\s+than|apart\s+from)\b",
               re.I),
    # "an edge case", "corner cases"
    re.compile(r"\b(?:edge|corner|boundary|degenerate|extreme)[\s-]+cases?\b", re.I),
    # a featured input as the subject: "Capitalised text makes ...", "Reverse-order edge lines lead to ..."
    re.compile(rf"(?:^|[.;!?]\s+)(?:{FEATURE_ADJ}|[\w]+-[\w-]+)[\s-]+(?:[\w-]+\s+)?{_INPUT_NOUN}\s+"
               r"(?:make|makes|made|cause|causes|lead|leads|trigger|triggers|break|breaks|fail|fails|"
               r"give|gives|come|comes|produce|produces)\b", re.I),
    # an input noun described as the subject: "Lists containing the maximum twice", "Lines such as 'b a b'"
    re.compile(rf"(?:^|[.;!?]\s+)(?:(?:the|some|any|all)\s+)?{_INPUT_NOUN}\s+(?:containing|that\s+contain|with|"
               rf"having|where|whose|in\s+which)\b[^,.;:!?]{{0,50}}?\b{_FEATURE}\b|"
               rf"(?:^|[.;!?]\s+)(?:(?:the|some|any|all)\s+)?{_INPUT_NOUN}\s+(?:such\s+as|like)\s+[\"'\d-]", re.I),
    # a concrete failing input: "prints 0 for -45" (not "on 3 tests", "for 2 of them")
    re.compile(r"\b(?:for|on|given)\s+(?:the\s+)?(?:input\s+)?-?\d+(?:\.\d+)?\b"
               r"(?!\s*(?:tests?|cases?|of|out|%|percent|inputs?|lines?|times?|more|fewer|less|digits?))", re.I),
)
#: "every number in the array is negative": an input noun described by a feature
_DESCRIBED_INPUT: Final = re.compile(
    rf"\b{_INPUT_NOUN}\b[^,.;:!?]{{0,40}}?\b(?:is|are|contains?|has|have|includes?|holds?|shows?\s+up|"
    rf"appears?|occurs?|repeats?|exceeds?|becomes?)\b[^,.;:!?]{{0,30}}?\b{_FEATURE}\b",
    re.I,
)


#: "too small", "one too high": a deviation from the expected output, the symptom itself
TOO: Final = re.compile(r"\btoo\s+\w+|\b(?:than|from)\s+(?:the\s+)?expected\b|"
                         r"\bthan\s+(?:it|they|this|that)\s+(?:should|ought\s+to|must)\b", re.I)


def _clauses(hint: str) -> list[str]:
    return [c for c in _CLAUSE_END.split(hint) if c and c.strip()]


#: a clause about the program, its output or the expected output: the symptom, never an input pattern
_ABOUT_PROGRAM: Final = re.compile(
    r"^\s*(?:(?:the|its|your|this|that|their)\s+)?(?:program|code|solution|algorithm|implementation|function|"
    r"search|loop|traversal|recursion|scan|output|outputs|answer|answers|result|results|expected|printed|it|"
    r"you|there|compared|run|executed|checked|tested)\b|\b(?:fail\w*|pass(?:es|ed)?|crash\w*|times?\s+out|timed\s+out|run\w*\s+out|errors?)\b",
    re.I,
)
#: "on the tests in which no value is positive", "for boards where the target sits ...": a set of
#: inputs picked out by a restrictive clause (a quantified condition over the test inputs)
_RESTRICTED: Final = re.compile(
    r"\b(?:on|for|in|with|across|among|only|from)\s+(?:(?:the|those|some|all|any|many|several|most|a\s+few|certain)\s+)?"
    r"(?:[\w-]+\s+){0,2}?[a-z][\w-]*s\s+(?P<rel>where|in\s+which|for\s+which|whose|such\s+that|"
    # "for withdrawals that take the account down to zero": any verb of a subject relative clause (revision 8)
    r"that\s+(?!(?:the|your|it|you|we|they|is|are|was|were|should|must|would|will|can|could)\b)[a-z]+|having|"
    r"containing)\s+(?P<clause>[^,.;:!?]{3,})",
    re.I,
)
#: a condition clause: "whenever a digit of the number is 4 or 9", "if no value is positive"
_CONDITION: Final = re.compile(r"(?<!\bas\s)(?<!\beven\s)(?<!\bof\s)\b(?:when(?:ever)?|if|as\s+soon\s+as|unless|"
                               r"as\s+long\s+as|provided(?:\s+that)?|except\s+when|in\s+case)\s+(?P<clause>[^,.;:!?]{3,})",
                               re.I)
#: the subject of a condition clause that is a thing of the input: a determiner and a noun, then a verb
_INPUT_SUBJECT: Final = re.compile(
    r"^\s*(?:(?:a|an|the|some|any|no|every|each|all|both|two|several|at\s+least\s+\w+|more\s+than\s+\w+|"
    r"exactly\s+\w+|none\s+of\s+the)\s+)?(?:[\w'-]+\s+){0,4}?(?:is|are|has|have|contains?|includes?|"
    r"appears?|occurs?|exceeds?|equals?|sits?|lies?|falls?|reaches|passes|crosses|carr(?:y|ies)|starts?|ends?|"
    r"shares?|repeats?|comes?|goes|gets?|holds?|consists?|arriv(?:e|es)|leaves?|joins?|enters?|overlaps?|"
    r"touch(?:es)?|sits?\s+idle|"
    # revision 16: a thing of the input that measures something ("When a player's move takes more time than ...")
    r"takes|lasts|costs|weighs|spans)\b",
    re.I,
)


#: revision 13: "reports two versions as equal when they are not": a condition whose predicate is elided
#: denies what the main clause says of the output (the symptom); it names no property of the input
_ELLIPTICAL: Final = re.compile(r"\s*(?:it|they|these|those|this|that|both|neither|either)\s+(?:is|are|was|were|"
                                r"do|does|did|has|have|had|should|would|could|can|must)(?:\s*n't|\s+not)?\s*", re.I)


#: a condition clause placed in the input: "once the minutes in the input add up to more than an hour"
_IN_INPUT: Final = re.compile(r"\b(?:when(?:ever)?|(?<!\bas\s)if|once|as\s+soon\s+as)\s+(?P<clause>[^,.;:!?]{0,60}?"
                              r"\b(?:in|of)\s+the\s+input\b[^,.;:!?]*)", re.I)
_HANDLED: Final = re.compile(
    r"\b(?:handles|handled|handle|treats|treated|processes|processed|deals\s+with|copes\s+with)\s+"
    r"(?:(?:the|some|any|all|those|such)\s+)?(?:[\w-]+\s+){0,2}?[a-z][\w-]*s\s+(?:that|which|where|whose|with|"
    r"containing|having)\s+(?P<clause>[^,.;:!?]{3,})", re.I)
#: "once" as a condition: its subject must be the input's (a problem variable or an input noun)
_ONCE: Final = re.compile(
    rf"\b(?:once|as\s+soon\s+as|after)\s+(?:the\s+)?(?:[a-z]|{_INPUT_NOUN}|number|amount|size|length|count\s+of\s+\w+)"
    r"\s+(?:is|are|gets|grows|exceeds|reaches|goes|passes|becomes|rises|climbs|hits)\s+"
    r"(?:past|over|above|beyond|below|under|more|less|larger|bigger|smaller|greater|at\s+least|\d)", re.I)


#: "some numbers are missing at the end": absent from the output, the symptom
_ABSENT: Final = re.compile(r"\b(?:missing|absent|lost|dropped|skipped|omitted|left\s+out|gone)\b", re.I)
#: "People who are exactly 18": an input picked out by a bound in a relative clause
_WHO_BOUND: Final = re.compile(
    r"\b(?:[a-z][\w-]*s|people|children|men|women)\s+(?:who|that|which|whose\s+\w+)\s+(?:are|is|were|was)\s+"
    r"(?:exactly|over|under|below|above|"
    r"at\s+least|at\s+most|(?:less|more|greater|fewer|older|younger|larger|smaller)\s+than)\s+-?\d", re.I)


def _in_output(hint: str, end: int) -> bool:
    """Whether the clause going on after ``end`` puts what was described in the output
    ("Lines such as 'bolt 0' appear in your output"): the symptom, not an input."""
    rest = hint[end:]
    stop = re.search(r"[.;!?\n]", rest)
    return bool(re.search(r"\b(?:in|into)\s+(?:the|your|its|their)\s+(?:\w+\s+)?output\b|\bare\s+(?:printed|"
                          r"reported|listed|shown|output)\b", rest[: stop.start()] if stop else rest, re.I))


#: revision 13: "answers NO for a number that is a perfect square, or YES for one that is not": a class named
#: with its complement covers every input (the problem's own yes/no criterion), and picks none out
_COMPLEMENT: Final = re.compile(r"\bor\b[^.;!?]{0,40}?\b(?:one|ones|those|the\s+others?)\s+(?:that|which|who)\s+"
                                r"(?:is|are|does|do|has|have)(?:n't|\s+not)\b", re.I)


def input_pattern_reasons(hint: str) -> list[str]:
    """``input_pattern`` reasons (below L2): a class of inputs picked out, unless named with its complement."""
    return [] if _COMPLEMENT.search(hint) else _input_pattern_reasons(hint)


def _input_pattern_reasons(hint: str) -> list[str]:
    # "how your solution handles meetings that share an endpoint": inputs picked out by what they hold
    found = _HANDLED.search(hint)
    if found and not OUTPUT_CUE.search(found.group("clause")):
        return [f"input_pattern: picks out the failing inputs {_show(found.group())} "
                "(reserved for L2 and above)"]
    found = _WHO_BOUND.search(hint)
    if found:
        return [f"input_pattern: picks out the failing inputs {_show(found.group())} "
                "(reserved for L2 and above)"]
    # "the problem appears once n gets past about 45"
    found = _ONCE.search(hint)
    if found:
        return [f"input_pattern: a condition on the input {_show(found.group())} "
                "(reserved for L2 and above)"]
    for found in _RESTRICTED.finditer(hint):
        clause = found.group("clause")
        if not _ABOUT_PROGRAM.search(clause) and not OUTPUT_CUE.search(clause) and not TOO.search(clause):
            return [f"input_pattern: picks out the failing inputs {_show(found.group())} "
                    "(reserved for L2 and above)"]
    for found in _CONDITION.finditer(hint):
        clause = found.group("clause")
        if _ELLIPTICAL.fullmatch(clause):
            continue
        if (_INPUT_SUBJECT.search(clause) and not _ABOUT_PROGRAM.search(clause)
                and not OUTPUT_CUE.search(clause) and not TOO.search(clause)):
            return [f"input_pattern: a condition on the input {_show(found.group())} "
                    "(reserved for L2 and above)"]
    for found in _IN_INPUT.finditer(hint):
        if not OUTPUT_CUE.search(found.group("clause")) and not TOO.search(found.group("clause")):
            return [f"input_pattern: a condition on the input {_show(found.group())} "
                    "(reserved for L2 and above)"]
    for trigger in _TRIGGER.finditer(hint):
        rest = hint[trigger.end():]
        end = _CLAUSE_END.search(rest)
        clause = rest[: end.start()] if end else rest
        feature = _FEATURE_RE.search(clause)
        if feature and not OUTPUT_CUE.search(clause[: feature.start()]) and not TOO.search(clause):
            return [f"input_pattern: names the failing input's kind {_show(trigger.group() + clause)} "
                    "(reserved for L2 and above)"]
    for pattern in _INPUT_PATTERNS:
        found = next((m for m in pattern.finditer(hint) if not OUTPUT_CUE.search(m.group())
                      and not _in_output(hint, m.end())), None)
        if found:
            return [f"input_pattern: names the failing input's kind {_show(found.group())} "
                    "(reserved for L2 and above)"]
    # "Numerals such as IV, IX or XC", "Strings that open brackets ...": a class of inputs by construction
    example = example_inputs(hint)
    if example:
        return [f"input_pattern: describes a class of inputs {_show(example)} (reserved for L2 and above)"]
    for clause in _clauses(hint):
        found = _DESCRIBED_INPUT.search(clause)
        if (found and not OUTPUT_CUE.search(clause[: found.end()]) and not TOO.search(clause)
                and not _ABSENT.search(found.group())):
            return [f"input_pattern: describes the failing input {_show(found.group())} "
                    "(reserved for L2 and above)"]
    return []


# --------------------------------------------------------------------------- state

_MEMORY_VERB: Final = (
    r"(?:keep\w*|track\w*|remember\w*|record\w*|stor(?:e|es|ed|ing)|retain\w*|preserv\w*|maintain\w*|"
    r"sav(?:e|es|ed|ing)|updat\w*|carr(?:y|ies|ied)|accumulat\w*|memori[sz]\w*)"
)
_HELD: Final = (
    r"(?:track|count|counts|counter|information|info|state|running|previous|earlier|prior|sum|total|maximum|"
    r"minimum|max|min|best|position|index|history|memory|frequenc\w*|occurrences|value\s+of|values\s+seen|"
    r"precision|accuracy|(?:the\s+|its\s+)?(?:rest|remainder)\s+of\s+(?:the|its)|(?:the\s+|its\s+)?(?:low|lower|last|"
    r"trailing|extra)\s+(?:digits|bits)|"
    r"what\s+it|which|how\s+many|its\s+\w+|where\s+(?:the|it|its)\b|what\s+(?:the|its)\b|the\s+(?:count|counter|sum|total|information|state|running|"
    r"previous|earlier|best|current|maximum|minimum|position|index|value|values|result|results|frequenc\w*))"
)
#: revision 17: a guess at what the program's record says of an item ("It looks like a cell counts as visited in
#: every row as soon as it has been visited in one"): a hedge, then the item classed in a state the program marks;
#: what the program holds (L3), not a rule of the world ("a cell counts as connected when ...")
GUESSED_MARK: Final = re.compile(
    r"\b(?:it\s+(?:looks|seems)\s+(?:like|as\s+if|as\s+though|that)|apparently|seemingly)\s+[^.;!?]{0,60}?"
    r"\b(?:counts?\s+as|is\s+(?:treated|regarded|taken)\s+as|(?:is|are|gets?)\s+marked(?:\s+as)?|is\s+seen\s+as)\s+"
    r"(?:already\s+)?(?:visited|seen|marked|used|taken|filled|done|processed|occupied|booked|counted)\b", re.I)
_STATE_PATTERNS: Final = (
    GUESSED_MARK,
    # revision 16: what the program stops holding in view ("the matcher stops considering the unread part")
    re.compile(r"\b(?:stops?|stopped|ceases?|ceased)\s+(?:considering|tracking|keeping\s+track\s+of|remembering|"
               r"counting|looking\s+at)\b", re.I),
    re.compile(rf"\b(?:does\s+not|doesn't|do\s+not|don't|did\s+not|didn't|never|fails?\s+to|failing\s+to|"
               rf"forgets?\s+to|without|no\s+longer|cannot|can't)\s+(?:\w+\s+)?{_MEMORY_VERB}\b", re.I),
    re.compile(rf"\b(?:los(?:e|es|t|ing)|forg(?:et|ets|ot|otten|etting)|overwrit\w*|discard\w*|reset\w*|"
               rf"clear(?:s|ed|ing)|throws?\s+away|drops?|dropped|mix(?:es|ed)?\s+up)\s+(?:all\s+)?{_HELD}\b",
               re.I),
    re.compile(r"\bkeeps?\s+(?:only|just)\s+(?:the\s+)?(?:last|first|latest|most\s+recent|current|one)\b", re.I),
    re.compile(r"\brunning\s+(?:total|sum|count|maximum|minimum|max|min|product|value|balance|best)\b|"
               r"\bso\s+far\b|\b(?:across|between|over|from\s+one)\s+(?:the\s+)?(?:loop\s+)?iterations?\b|"
               r"\balready\s+(?:seen|visited|reached|processed|counted|used|handled|met|added)\b|"
               r"\b(?:information|info|bookkeeping)\s+(?:about|on|of)\b|\bvisited\s+(?:nodes|cells|states|vertices|positions)\b|"
               r"\b(?:previous(?:ly)?|earlier|prior)\s+(?:seen|values?|elements?|items?|state|results?|counts?|sums?)\b|"
               r"\bintermediate\s+(?:results?|values?|sums?|state)\b|\b(?:its|the\s+program's|the\s+"
               r"solution's|internal)\s+state\b", re.I),
    # "has no memory of the balance", "is not retained anywhere", "the balance the program works with"
    # "the program's record of when the clerk is next free", "the search's picture of ..."
    re.compile(r"\b(?:program|solution|code|algorithm|implementation|function|search|loop|traversal)['’]s\s+"
               r"(?:[\w-]+\s+){0,2}?(?:record|records|tally|count|counts|counter|total|sum|note|notes|notion|idea|"
               r"memory|estimate|knowledge|bookkeeping|picture|view|copy|value|values|track|state|marker|marks|"
               r"flags?|pointer|position|index|guess|belief|understanding|list|set|map|table|running|current|best|"
               r"last|latest)\b", re.I),
    # held information gone stale: "falls behind", "lags behind", "out of date", "stays around"
    re.compile(r"\b(?:falls?|fell|falling|lags?|lagged|lagging|stays?|stayed|left|remains?)\s+"
               r"(?:behind|out\s+of\s+date|around|over\s+from)\b|\bout\s+of\s+date\b|"
               r"\bnever\s+(?:refreshed|advanced|brought\s+up\s+to\s+date|moved\s+forward|caught\s+up)\b", re.I),
    # what the program has seen: "a node it has visited before", "anything seen before"
    re.compile(r"\b(?:it|the\s+(?:program|solution|code|search|loop|algorithm))\s+(?:has|had)\s+(?:already\s+|previously\s+)?"
               r"(?:seen|visited|met|processed|counted|encountered|handled|used|reached)\b|"
               r"\b(?:seen|visited|met|encountered|processed|reached)\s+(?:before|earlier|previously)\b", re.I),
    # information held and not used: "nothing remembers which word came first", "forgets about it",
    # "the count read on the first line is never used later", "is ignored", "are ever looked at"
    re.compile(r"\b(?:nothing|no\s+(?:variable|part\s+of\s+the\s+(?:program|code)))\s+(?:in\s+the\s+(?:program|code)\s+)?"
               r"(?:remembers|records|keeps|tracks|stores|knows|holds)\b|"
               r"\bforg(?:et|ets|ot|otten|etting)\s+about\b|"
               r"\b(?:is|are|was|were)\s+never\s+(?:used|read|consulted|looked\s+at|taken\s+into\s+account)\s+"
               r"(?:again|later|afterwards|after\s+that|anywhere)\b|"
               r"\b(?:is|are|was|were|gets|get)\s+(?:simply\s+|just\s+|then\s+)?ignored\b|"
               r"\b(?:is|are)\s+(?:ever|only\s+ever)\s+(?:looked\s+at|examined|compared|considered|inspected)\b|"
               r"\bthe\s+(?:program|solution|code)\s+(?:tallies|tracks|records|accumulates|collects)\b", re.I),
    # what the program's data still holds: "the cleaned-up text that ends up being compared still has
    # the punctuation in it" (issue 24, round 3; of the output it is the symptom: see state_reasons)
    re.compile(r"\b(?:compared|stored|kept|built|computed|cleaned|processed|used|checked|saved|held)\b[^.;!?]{0,40}?"
               r"\bstill\s+(?:has|have|holds?|contains?|includes?|carries|keeps|attached|there|present|in\s+(?:it|them|place))\b|"
               # "the month lengths you add up still give February 29 days": what the values the program
               # works with still hold (revision 8)
               # (revision 14: not a modal, "while it should still have been a priority car's turn": what ought to
               # have happened, the expected output)
               r"\b(?:you|it|the\s+(?:program|solution|code|loop))\s+(?!(?:should|would|could|must|might|may|can|will|"
               r"shall)\b)[a-z]+(?:\s+(?:up|in|together|on|over))?\s+"
               r"still\s+(?:has|have|holds?|contains?|includes?|gives?|counts?|uses?|treats?)\b|"
               # "the set of letters the program checks against holds one letter too many"
               # (a verb between: "it only holds for small n" is a claim, not what the program holds)
               r"\b(?:the\s+(?:program|solution|code)|it)\s+(?!(?:only|still|also|always|never|clearly|just|then|"
               r"no\s+longer)\b)[a-z]+(?:\s+(?:against|with|on|from|in|over|up))?\s+holds?\b", re.I),
    # what the program's record takes in: "every value read goes into the total" (revision 8)
    re.compile(r"\b(?:goes|go|went|gets\s+added|get\s+added|is\s+added|are\s+added)\s+(?:in)?to\s+the\s+"
               r"(?:running\s+)?(?:total|sum|count|result|list|set|tally)\b", re.I),
    # a value the program holds on to: "the count of the last run is held onto but never ...", "only holds on
    # to the top two values" (revision 8)
    re.compile(r"\b(?:held|holds?|holding|hangs?|hanging|hung|kept|keeps?|keeping)\s+on(?:to|\s+to)\b", re.I),
    # the same loss in the passive: "the half the division should keep is thrown away", "the last run is lost"
    # (revision 8; of the output it is the symptom: see _LOST)
    _LOST := re.compile(r"\b(?:is|are|was|were|gets?|got|being)\s+(?:\w+\s+)?(?:thrown\s+away|discarded|lost|"
                        r"overwritten|forgotten|wiped(?:\s+out)?)\b", re.I),
    # a held value that does not evolve over the run: "the tracked minimum stays at zero", "nodes keep their
    # initial colour", "cur stays 0" (revision 8; "the output stays the same" is the symptom: see _of_output)
    # where a held value starts: "cur starts from the wrong value", "the program starts counting from the
    # second number" (revision 8; "the output starts with" is the symptom)
    _STARTS := re.compile(r"\b(?:starts?|begins?|started|began)\s+(?:counting\s+)?(?:from|at|with)\s+(?:the\s+|a\s+)?"
                          r"(?:wrong|second|zero|0|1|one)\b", re.I),
    _STAYS := re.compile(r"\b(?:stays?|stayed|remains?|remained|keeps?|kept)\s+(?:at\s+)?(?:its|their)\s+(?:initial|"
                         r"starting|original|default|first)\b|\b(?:stays?|stayed|remains?|remained)\s+(?:at\s+)?"
                         r"(?:0|zero|-1|unchanged|empty|constant|fixed)\b", re.I),
    # what the program holds while it runs: "the run it is still counting"
    re.compile(r"\b(?:it|the\s+(?:program|solution|code|loop))\s+(?:is|was)\s+still\s+(?:counting|holding|tracking|"
               r"building|keeping|accumulating|collecting|storing)\b", re.I),
    # a value used after it was changed: "a neighbour that was already updated", "the one it has just changed"
    re.compile(r"\b(?:already|just)\s+(?:been\s+)?(?:updated|changed|overwritten|modified|replaced|consumed|"
               r"advanced|incremented|decremented)\b", re.I),
    re.compile(r"\bno\s+(?:memory|record|recollection|trace|knowledge)\s+of\b|"
               r"\b(?:is|are|was|were|gets?|got)\s+(?:not|never)\s+(?:\w+\s+)?(?:retained|kept|stored|remembered|"
               r"recorded|tracked|preserved|saved|carried(?:\s+over|\s+forward)?|maintained)\b|"
               r"\bthe\s+(?:program|solution|code)\s+(?:holds|keeps|stores|works\s+with|remembers|maintains|"
               r"carries)\b|\bstale\b|\bnever\s+carries\b", re.I),
)
#: the cause, told through what the solution does (L3's "internal reasoning")
_CAUSE: Final = re.compile(
    r"\b(?:because|since|as\s+a\s+result\s+of|due\s+to|caused\s+by|the\s+reason\s+is(?:\s+that)?)\s+"
    r"(?:the\s+|this\s+|its\s+|your\s+)?(?:[\w-]+\s+)?(?:solution|program|code|algorithm|implementation|function|loop|"
    r"search|traversal|recursion|scan|conversion|calculation|computation|division|formula|update|rounding|"
    r"truncation|parsing|lookup|comparison|check|counter|it|parser|reader|tokeni[sz]er|table|array|dictionary|"
    r"dict|stack|queue|heap|clock|accumulator|variable|index|pointer|cache|memo|recurrence|dp|bounds?\s+check|"
    r"branch|condition|update|check|test|guard|step)\b",
    re.I,
)


def _of_output(hint: str, found: re.Match[str]) -> bool:
    """Whether the clause of ``found`` is about the output ("some lines of the output are lost"): the
    symptom, not what the program fails to keep. Only its subject counts ("... is thrown away before
    printing" is still the program's loss)."""
    start = max((hint.rfind(mark, 0, found.start()) for mark in ".;:!?\n"), default=-1) + 1
    return bool(OUTPUT_CUE.search(hint, start, found.start()))


#: a cause that is a classification or a multiplicity ("because the solution treats 'Word' and 'word' as
#: different words", "allows the same item to be counted more than once"): the rule the program breaks
#: (concept, L5), not what it fails to keep; the cause rule fired on 6 hints labelled otherwise of 20 (revision 9)
_CLASSIFIES: Final = re.compile(r"\btreats?\b[^.;!?]*\bas\b(?!\s+(?:if|though)\b)|\ballows?\b|"
                                r"\bmore\s+than\s+once\b|\btwice\b|\bas\s+(?:one|the\s+same|different|distinct|separate)\b", re.I)


def _sentence_rest(hint: str, start: int) -> str:
    return re.split(r"[.;!?](?:\s|$)", hint[start:], maxsplit=1)[0]


def state_reasons(hint: str) -> list[str]:
    for pattern in _STATE_PATTERNS:
        found = next((m for m in pattern.finditer(hint) if not (pattern in (_LOST, _STAYS, _STARTS) and _of_output(hint, m))
                      and not (pattern is _LOST and _denied(hint, m))), None)
        if found:
            return [f"state: says what the solution fails to keep {_show(found.group())} "
                    "(reserved for L3 and above)"]
    found = next((m for m in _CAUSE.finditer(hint) if not _CLASSIFIES.search(_sentence_rest(hint, m.end()))), None)
    if found:
        return [f"state: explains the cause through the solution {_show(found.group())} "
                "(reserved for L3 and above)"]
    return []

#: revision 18: a loss denied, by its subject ("nothing is lost", "no hour gets dropped") or its verb ("is not lost")
_NO_SUBJECT: Final = re.compile(r"\b(?:nothing|none|no\s+[\w-]+(?:\s+[\w-]+)?)\s+$", re.I)


def _denied(hint: str, found: re.Match[str]) -> bool:
    """Whether a loss is denied ("The two numbers still add up to the total, so nothing is lost"): it says the
    program keeps what it should, no value it fails to keep, so no state (revision 18)."""
    return bool(re.search(r"\b(?:not|never)\b", found.group(), re.I)
                or _NO_SUBJECT.search(hint, 0, found.start()))


def _show(text: str) -> str:
    return repr(" ".join(text.split())[:40])
