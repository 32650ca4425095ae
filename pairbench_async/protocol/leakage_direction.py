"""The leakage rule for the direction row of Table II: a change asked of the programmer, reserved
for L6 (seed 000, Table II: L6 gives "the concrete repair direction"). Recognised by
construction (:mod:`.leakage_grammar`): an imperative, a request or a modal addressed to the
programmer whose verb does not merely point (look, compare, trace ...), or a passive asking for a
change ("should be reset"); the classes, revision by revision, are listed with the code and
location rules in :mod:`.leakage_patterns`. Revision 13: testing the program itself on some input ("Test it
with an expression whose quotient is negative") is an experiment, not a change, unless what it is fed is a
changed part of the program ("Test it with the loop reversed"). Revision 14 (first seen, repair phrasing was
wrong alone 12 times for 25 right, 3 of them at L1 where it was never right): at L1 a modal whose subject is
neither the programmer nor the program is the expected behaviour; a modal in a comparative ("fewer players than
should advance") is the expected output; at L5 a passive norm on a thing of the problem ("padding has to be added
at the high-order end") states what holds, as the active does; comparing a part with how another is done points
at two places; a noun and its infinitive heading a colon ("Invariant to maintain:") is no instruction. Revision 15
(the classes of revision 14's first-seen false positives): a pointing verb with a program name ("Check `col_index`,
the loop that ...") points as "Check the loop" does; a direction match in the contrast after a norm ("should own its
counts, but a change to one level's counts shows up ...") is what happens; "you need to reason about / think about"
asks for a way of thinking; a scenario set up before its expected output ("Use a garage with 2 levels ...:
... Expected ...") is a test. Revision 16: at L5 an invariant to keep, a way of seeing a thing of the world or a
definition stated imperatively is the concept; an e.g. clause is an example; "Wrong <noun phrase>" is a symptom.
Revision 17: a modal's predicate coordinated with an earlier clause ("cards ... still belong to the pot and must go to
the winner") takes that clause's subject; a program name after a determiner ("the current end") is the world's noun
in what follows a modal. Revision 18: at L5 a modal whose subject is generic ("an event should only change it if
...": a/an/each/every/any, then a noun neither the program's nor code's) is a norm over the problem's world; "be <a
value>" after a statement quoted in a code span ("should be n itself") asks for a change, a direction.
Reads the hint only. Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Final

from .leakage_grammar import (
    LEAD,
    adverbial,
    constructed_imperative,
    coordinated_imperative,
    exercise,
    lead_only,
    lone_verb,
    open_verb,
    pointing,
    request_verb,
    starts_with_lead,
)
from .leakage_modals import (
    CODE_NOUNS,
    DETERMINER,
    MODAL,
    REASONING,
    code_words,
    generic_norm,
    of_problem,
    patched_modal,
    problem_subject,
)
from .leakage_patterns import BULLET, SENTENCES

__all__ = ["direction_reasons"]


#: pointing verbs that also ask for a change in some frames ("Check for an empty list first", "Print the
#: count after the loop", "count a pair only while ..."): :func:`_imperative` reads them with its special
#: cases. Every other verb is read by construction (:mod:`.leakage_grammar`): revision 9 dropped the list
#: of change verbs that revisions 1-8 grew.
_POINTING_REPAIRS: Final = frozenset("check compare count print read remember run test verify walk".split())
#: a word after a sentence-initial verb that makes the verb a noun ("Sort order is ...")
_NOUN_AFTER: Final = frozenset("is are was were of order has have seems looks appears does did "
                               "can will would that".split())
#: "should/must ... be <participle>": a change to the program (passive), not a rule of the problem
_CHANGED: Final = (
    r"(?:initiali[sz]ed|increased|incremented|decremented|decreased|reset|changed|replaced|moved|added|"
    r"removed|swapped|stored|updated|used|called|set|appended|inserted|deleted|rewritten|revised|"
    r"converted|cast|clamped|wrapped|skipped|declared|defined|done\s+(?:with|by|using)|"
    r"computed\s+(?:with|by|using|from\s+(?:the\s+)?(?:right|left|end)|right\s+to\s+left|backwards|in\s+reverse)|"
    r"implemented|handled\s+(?:with|by|using)|moved|placed|started)"
)
#: a way of thinking the reader is asked for: no change to the program (revision 15)
_THINKING: Final = (r"(?:first\s+|also\s+|really\s+)?(?:reason\s+about|think\s+(?:about|of|in\s+terms\s+of)|"
                    r"understand|reali[sz]e|keep\s+in\s+mind)\b")
_DIRECTION: Final = re.compile(
    # ("you can see that ...", "you could notice" perceive the symptom, revision 8)
    r"\byou\s+(?:should|must|need\s+to|have\s+to|could|can|might\s+want\s+to|want\s+to|may\s+want\s+to)\b"
    r"(?!\s+(?:already\s+|easily\s+|clearly\s+)?(?:see|notice|tell|observe|spot|verify\s+that|check\s+that)\b)"
    # "You need to reason about object identity": a way of thinking named (the concept), no change (revision 15)
    rf"(?!\s+{_THINKING})"
    # "you might want to look at how the events get ordered": pointing at a place (L4), no change (revision 11)
    r"(?!\s+(?:(?:first|also|closely|carefully)\s+)?(?:look|inspect|examine|trace|revisit|re-?read|step\s+through|"
    r"take\s+(?:a|another|one\s+more)\s+(?:\w+\s+)?look)\b)"
    # "any sum you can actually get": what can be obtained, a relative clause on a quantity (revision 9)
    r"(?!\s+(?:actually\s+|ever\s+|possibly\s+)?(?:get|obtain|reach|achieve|form|make|buy|afford)\b)|"
    # a reminder is an instruction: "don't forget to output the last run", "remember to flush ..."
    r"\b(?:do\s+not|don['’]t|never)\s+forget\s+to\b|\bremember\s+to\b|"
    # the future or conditional of the same ask: "you'll want to record it", "you'd need to", "I'd suggest",
    # "it's worth keeping" (issue 24, round 3)
    r"\byou(?:['’]ll|['’]d|\s+will|\s+would)\s+(?:probably\s+|also\s+)?(?:want|need|have)\s+to\b|"
    r"\b(?:I|we)(?:['’]d|\s+would)?\s+(?:suggest|recommend|advise)\b|"
    r"\bit(?:['’]s|\s+is|\s+would\s+be|['’]d\s+be)\s+worth\s+[a-z]+ing\b|"
    rf"(?<!\bthat\s)(?<!\bwhich\s)(?<!\bwho\s)(?<!\bthere\s)\b(?:should|must|needs?\s+to|has\s+to|have\s+to)\s+"
    rf"(?:(?:also|now|instead|first|then|rather|only|not|never|always|still)\s+)?(?:(?:be|get)\s+{_CHANGED}\b|"
    r"(?:use|change|replace|switch|initiali[sz]e|add|remove|swap|move|reset|increment|decrement|insert|"
    r"modify|rewrite|update|store|keep|sort|iterate|loop|start|stop|skip|call|append|accept|check|"
    r"compare|subtract|process|traverse|visit|mark|convert|cast|clamp|wrap|guard|handle|allocate|"
    r"record|go|run|begin|restart|break|continue|exit|set)\b|be\s+(?:a|an)\s+(?:dict|dictionary|map|"
    r"hash\s*map|set|list|array|counter|stack|queue|heap|deque|tuple|integer|int|float|string|loop)\b|"
    r"be\s+(?!(?:decided|processed|handled|considered|counted|resolved|settled|seen|known)\b)[a-z]+(?:ed|en)\s+"
    r"(?:before|after|first|using|with|into|instead)\b)|"
    r"\b(?:use|using|try|do|call|apply|take|pick|choose)\b[^.\n]{0,40}\binstead\b|"
    r"\binstead\s+of\s+(?:using|calling|checking|computing|storing|adding|returning)\b|"
    r"\btry\s+(?:using|to|adding)\b|\bconsider\s+(?:using|adding|changing|"
    r"replacing|initiali[sz]ing)\b|\bmake\s+sure\b|\breplac(?:e|ing)\b|"
    # (not data told changing over time: "balances changing from one step to the next", revision 12)
    r"\bchang(?:e|ing)\b(?!\s+from\s+(?:one|each|step|day|call|turn|line|row|test)\b)[^.\n]"
    r"{0,40}\bto\b|\bthe\s+fix\s+is\b|"
    # "would fix it", "solves it", "is the remedy", "It would help to", "what is needed is", "ought to continue"
    r"\b(?:would|will|should|could|might)\s+(?:\w+\s+)?(?:fix|solve|repair|correct|resolve|cure|avoid|remove)\b|"
    r"\b(?:fix(?:es)?|solves?|repairs?|corrects?|resolves?|cures?)\s+(?:it|this|that|the\s+(?:bug|problem|issue|"
    r"error|count|output|answer|result))\b|\bthe\s+(?:fix|remedy|cure|repair|correction|right\s+move)\s+"
    r"(?:would\s+be|is|will\s+be|could\s+be)\b|\bis\s+the\s+(?:remedy|fix|cure|way\s+to\s+go|way\s+to\s+fix\w*)\b|"
    r"\b(?:it|this|that)\s+would\s+(?:help|work|be\s+(?:better|enough|correct|right))\b|\bwould\s+work\s+if\b|"
    r"\bwhat\s+is\s+needed\s+is\b|\bought\s+to\s+(?!be\s+\d|(?:get|receive|print|output|return|show|give|"
    rf"produce|yield)\b)\w+|\byou\s+need\b(?!\s*[:.;,)?!]|\s*$|\s+to\s+{_THINKING})|"
    # an expression asked for: "it needs 0 <= nr < h", "it should be (a - 1) // k" (issue 24, round 3)
    r"\b(?:needs|requires)\s+[`'\"(]*-?[\w.\[\]]+\)?\s*(?:<=|>=|==|!=|<|>)\s*[`'\"(]*-?[\w.\[\]]+|"
    r"\b(?:should|must|has\s+to|ought\s+to)\s+be\s+[`'\"(]*-?[\w.\[\]]+\)?\s*"
    r"(?:<=|>=|==|!=|<|>|\+|-(?=\s)|\*|//|%|/)\s*[`'\"(]*-?[\w.\[\]]+|"
    r"\bmakes?\s+the\s+\w+\s+(?:correct|right)\b|\bgives?\s+the\s+(?:right|correct)\s+(?:value|answer|result|output)\b|"
    r"\b(?:should|must|needs?\s+to|has\s+to)\s+be\s+(?:a|an)\s+[\w\s-]{0,30}?\s+rather\s+than\b|"
    # a change asked for with a gerund: "the hours just need reducing modulo 24", "wants resetting"
    r"\b(?:needs?|wants?|requires?)\s+(?:\w+\s+)?(?!(?:some|no|any|every)thing\b|being\b|having\b|knowing\b)"
    r"[a-z]+ing\b(?!\s+(?:of|that)\b)|"
    # "must become start + d"
    r"\b(?:should|must|needs?\s+to|has\s+to|ought\s+to)\s+(?:instead\s+)?become\b|"
    r"\b(?:needs|requires|is\s+missing|lacks)\s+(?:an?\s+|the\s+)?`?(?:abs|sorted|sort|set|min|max|sum|len|round|"
    r"int|str|reversed|range|break|return|continue|else|guard|modulo|mod)\b`?\s+(?:around|on|before|after|at|call|"
    r"here|there|to|in)\b|`?\b(?:abs|sorted|set|min|max|sum|len|round|reversed|break|return|continue|else)`?\s+"
    # ("the cross-product sum is missing one term": the sum lacks a term, the symptom, revision 12)
    r"(?:is|are)\s+missing\b(?!\s+(?:one|a|an|the|some|its|their|any|\d+)\b)|"
    # suggestions in other moods: "you might keep ...", "have you considered adding ...", "what you want
    # is to dedupe ...", "how about sorting ..."
    r"\byou\s+(?:might|may|could|would)\s+(?:also\s+|first\s+|instead\s+)?(?!be\b|see\b|get\b|notice\b|find\b|"
    r"expect\b|think\b|have\b|look\b|inspect\b|examine\b|trace\b|revisit\b|want\s+to\s+(?:look|inspect|examine|"
    r"trace|revisit)\b)[a-z]+\b|"
    r"\b(?:have|did)\s+you\s+(?:considered|tried|thought\s+(?:about|of))\s+[a-z]+ing\b|"
    r"\b(?:how|what)\s+about\s+[a-z]+ing\b|\bwhy\s+not\s+[a-z]+\b|"
    r"\bwhat\s+(?:you|the\s+(?:program|code|solution))\s+(?:want|need|should\s+do)\w*\s+(?:here\s+)?is\s+to\b|"
    r"\b(?:must|should|needs?\s+to|has\s+to)\s+not\s+(?:call|use|loop|scan|compute|recompute|iterate|sort|"
    r"append|print|add|subtract|reset)\b|"
    # "your stack-based search should push neighbours ...": the candidate's own code told what to do
    r"\byour\s+(?:[\w-]+\s+){0,3}?(?:should|must|needs?\s+to|has\s+to|ought\s+to)\s+(?:also\s+|instead\s+|"
    r"first\s+|then\s+)?(?!be\b|print|output|return|give|show|produce|report)[a-z]+\b|"
    # the part just named told to act otherwise, by contrast: "it should attach a's root, not a itself" (revision 12)
    r"\b(?:it|this)\s+(?:should|must|needs?\s+to|has\s+to|ought\s+to)\s+(?!be\b|have\b|give\b|print\b|output\b|"
    r"return\b|produce\b|show\b)[a-z]+\b[^.;!?\n]*?(?:,\s+not\s+|\brather\s+than\b|\binstead\s+of\b)|"
    # not in a comparative ("fewer players than should advance": the expected output, the symptom; revision 14)
    r"(?<!\bthat\s)(?<!\bwhich\s)(?<!\bthan\s)\b(?:should|must|needs?\s+to|has\s+to)\s+(?:also\s+|instead\s+|first\s+)?"
    r"(?:push|pop|explore|walk|step|reduce|wrap|round|apply|filter|drop|subtract|multiply|divide|merge|advance|"
    r"unmark|clear|truncate|cap|extend|shift|split|join|strip|negate|flip|invert|recompute|recurse)\b",
    re.IGNORECASE,
)
_LEAD: Final = frozenset("and then so just simply also first instead finally only".split())
#: a finite verb right after a sentence-initial repair verb makes that verb a noun, the sentence's
#: subject: "Count values are too small", "Output lines have ...", "Uppercase vowels are not counted"
_FINITE: Final = frozenset("is are was were has have had seems seem looks appears does do did can will "
                           "would pass passes fail fails print prints give gives come comes stay stays "
                           "contain contains exceed exceeds differ differs".split())
#: words that open a clause of their own inside an instruction ("Count values that are ...", "check for
#: an empty list first and print EMPTY")
_SUBORDINATE: Final = frozenset("that which who whose where when whenever if unless so because since until while "
                                "it they there we you he she as than once before after and or then what how whether".split())


#: words that open a verb's object (the verb is an instruction then)
_OBJECT_LEAD: Final = frozenset("the a an each every all both its their this that these those it them".split())
#: a complement that makes the verb before it a subject's predicate ("go wrong", "run out"); a degree
#: word makes it a noun with its adjective ("Output too large on ...", revision 8)
_COMPLEMENT: Final = frozenset("wrong right wrongly badly off astray awry missing unnoticed out "
                               "too very slightly much far".split())


#: verbs that also ask the programmer to observe, not to change, when their object is the output or a test
_OBSERVING: Final = frozenset("compare run test try trace start begin read".split())
_OBSERVED: Final = re.compile(r"\b(?:outputs?|expected|printed|answers?|results?|tests?|test\s+cases?|examples?|"
                              r"samples?|inputs?)\b", re.IGNORECASE)

#: testing the program itself on some input: the verb's object is the program, then what it is fed
_EXPERIMENT: Final = re.compile(r"(?:test|try|rerun|re-run)\s+(?:it|them|(?:the|your|this)\s+(?:program|function|code|"
                                r"solution))\s+(?:again\s+)?(?:with|on|against|using|for)\b", re.I)
_PROGRAM_PART: Final = re.compile(r"\b(?:loop|condition|check|comparison|branch|variable|counter|index|statement|call|"
                                  r"operator|assignment|initiali[sz]ation|fix|change|patch)s?\b", re.I)


def _imperative(clause: str, names: frozenset[str] = frozenset()) -> str | None:
    """The repair verb a clause opens with, as an instruction to the programmer (``names``: the
    program's identifiers, which after the verb are its object: "reset fails so ...")."""
    words: list[str] = re.findall(r"[A-Za-z0-9_'][\w'-]*", BULLET.sub("", clause))
    while words and words[0].lower() in _LEAD:
        words = words[1:]
    if not words or words[0].lower() not in _POINTING_REPAIRS:
        return None
    # "Count the islands by hand": an exercise for the candidate (revision 9)
    if exercise(clause):
        return None
    # "Code: print(f"...")": a call written out (code), not an instruction in words
    if re.match(r"\s*(?:\w+\s+)*?" + re.escape(words[0]) + r"\(", BULLET.sub("", clause)):
        return None
    # "Keep in mind that ...", "Remember that ...", "Bear in mind": a remark, not a repair
    if re.match(r"(?:keep|bear|remember|note|notice|observe|recall|mind)\s+(?:in\s+mind\b|that\b)",
                " ".join(words).lower()):
        return None
    # revision 15: a pointing verb with a program name as its object ("Check `col_index`, the loop that ...")
    # points at a place (L4), as with "the loop"; not "Check for ...", "Check whether ...", "check it before adding"
    if _pointed(words, clause):
        return None
    if len(words) > 1 and words[1] in names and words[1].lower() not in _NOUN_AFTER:
        return words[0]
    if len(words) > 1 and words[1].lower() in _NOUN_AFTER:
        return None
    # "Test 3 prints 9": a noun with a number; "Count values are ...": a noun phrase as subject
    # ("Add (900, ...)": a literal after the verb is its object, not a number naming a noun)
    literal = re.match(r"\s*[A-Za-z]+\s+[(\[{\"']", BULLET.sub("", clause))
    numbered = len(words) > 1 and words[1][0].isdigit() and not literal and (
        len(words) == 2 or words[2].lower() in _FINITE or words[2].lower() in ("of", "and", "or", "to"))
    if len(words) > 1 and (numbered or any(w.lower() in _FINITE for w in words[1:3])):
        return None
    # "Count values in the output are right": a bare noun after the verb and a finite verb later with no
    # clause of its own in between make the opening words the sentence's subject (revision 8)
    if len(words) > 2 and words[1].lower() not in (*_OBJECT_LEAD, "to") and words[1] not in names:
        for word in words[2:]:
            if word.lower() in _SUBORDINATE:
                break
            if word.lower() in _FINITE:
                return None
    # "Test lines with repeated words fail": a subject whose clause ends with its verb
    if words[-1].lower() in ("fail", "fails", "pass", "passes", "break", "breaks", "crash", "crashes"):
        return None
    # "Change amounts such as 5 ...", "Lowercase input like ff fails": a noun phrase with its example
    if len(words) > 2 and words[1].lower() not in _OBJECT_LEAD and words[2].lower() in ("such", "like", "containing",
                                                                                       "whose", "where"):
        return None
    # "..., and numbers one less than such squares, go wrong": a predicate, not an instruction
    if len(words) > 1 and words[1].lower() in _COMPLEMENT:
        return None
    # "Compare your output with the expected one", "Run the second test": observing the symptom (revision 8)
    if words[0].lower() in _OBSERVING and _OBSERVED.search(" ".join(words[1:])):
        return None
    # "compare it with how `rows` and `cols` are created": one part set beside how another is done, a pointer
    # to two places (L4), not a change to make (revision 14)
    if words[0].lower() == "compare" and re.search(r"\b(?:with|to|against)\s+(?:how|what|the\s+way)\b",
                                                   " ".join(words[1:]), re.I):
        return None
    # "Test it with an expression whose quotient is negative": an experiment on the program, no change (revision 13)
    # ("Try it with the loop reversed" feeds it a changed program: a direction)
    experiment = _EXPERIMENT.match(" ".join(words))
    if experiment and not _PROGRAM_PART.search(" ".join(words)[experiment.end():]):
        return None
    # "Check the loop ..." points at a place; "Check for an empty list first" asks for a new test
    if _pointed(words, clause):
        return None
    return words[0]


def _pointed(words: list[str], clause: str) -> bool:
    """Whether a clause opening with ``words`` points at a place: "Check the loop ...", "Inspect `total`"."""
    return words[0].lower() in ("check", "examine", "inspect", "look", "verify") and (
        len(words) < 2 or words[1].lower() not in ("for", "whether", "that", "if")) and not (
        words[0].lower() in ("check", "verify") and bool(re.search(r"\b(?:before|after)\s+\w+ing\b", clause)))


#: what comes right before a repair word that makes it part of a description: a relative clause with
#: its own subject ("the half that the division should keep is thrown away") or the program's choice
#: ("the condition that decides whether to replace best"): neither asks the programmer for a change (revision 8)
_DESCRIBED_CHOICE: Final = re.compile(
    r"(?:\b(?:that|which)\s+(?:the|its|this|each|every)\s+[\w-]+\s+|\bwhether\s+(?:or\s+not\s+)?to\s+)$", re.I)


#: "the solution subtracts the distance instead of adding it": what the program does, told against what it
#: should, describes it (state, L3), it does not ask for the change (revision 8)
_PROGRAM_DOES: Final = re.compile(r"\b(?:the\s+(?:solution|program|code|loop|function)|it)\s+(?:\w+ly\s+)?[a-z]+s\b"
                                  r"[^.;:!?]*$", re.I)


def _starts(sentence: str) -> list[str]:
    """Where an imperative may open in a sentence: its start, a clause after a colon or a spaced dash,
    after a lead word ("Also, require ..."), a clause opening with one ("..., so carry ..."), or the main
    clause after an adverbial one ("When the next is larger, subtract ..."); not a parenthetical between
    commas ("the first column, read from bottom to top, becomes ...": revision 9)."""
    pieces = _CLAUSE_SPLIT.split(sentence)
    parts, seps = pieces[0::2], pieces[1::2]
    starts = [parts[0]]
    for index, part in enumerate(parts[1:], 1):
        sep = seps[index - 1].strip()
        if sep and sep != "," or part[:1].islower() and (lead_only(parts[index - 1]) or adverbial(parts[0])
                                                         or starts_with_lead(part)):
            starts.append(part)
    return starts


def _constructed(sentence: str, names: frozenset[str]) -> str | None:
    """An imperative by construction (:mod:`.leakage_grammar`) at one of the sentence's :func:`_starts`,
    or a change coordinated with an imperative there."""
    for part in _starts(sentence):
        if _EXAMPLE_PART.match(part):
            continue  # revision 16: "e.g. amount 6 with ... should give 4" is an example, not an order
        # "Invariant to maintain: ...": a noun and its infinitive heading what follows, not an instruction
        # ("Switch to floats for the root" heads nothing; revision 14)
        if re.fullmatch(r"\W*[A-Za-z]+\s+to\s+[a-z]+\s*", part) and re.match(
                rf"{re.escape(part.strip())}\s*:", sentence.strip()):
            continue
        verb = constructed_imperative(part, names)
        if verb:
            return verb
        if _imperative_shape(part):
            verb = coordinated_imperative(part, names)
            if verb:
                return verb
    return None


#: where an imperative may also start inside a sentence: "In the loop, stop ...", "...: print", "... too
#: permissive - make it strict" (a spaced dash opens a clause; "out-of-range" does not, revision 8); the
#: marks are kept, since a colon or a spaced dash opens an instruction of its own and a comma only after
#: a lead word or an adverbial clause (revision 9)
_CLAUSE_SPLIT: Final = re.compile(r"(,\s*|:\s*|\s+[-–—]+\s+)")


def _imperative_shape(clause: str) -> bool:
    """Whether a clause opens with a bare verb, pointing or not ("Look one character ahead and ...")."""
    words: list[str] = re.findall(r"[A-Za-z][A-Za-z'-]*", clause)
    while words and words[0].lower() in LEAD:
        words = words[1:]
    return bool(words) and (pointing(words[0]) or open_verb(words[0]))


def _asked_expression(found: str, names: frozenset[str]) -> bool:
    """Whether a modal's "be <operand> <operator> ..." asks for an expression: its first operand is a
    program name or a number ("should be (a - 1) // k"), not a word ("has to be complete - 3 rows")."""
    operand = re.search(r"\bbe\s+[`'\"(]*-?([\w.\[\]]+)", found)
    if not operand or not re.search(r"(?:<=|>=|==|!=|<|>|\+|\s-\s|\*|//|%|/)", found[operand.end():]):
        return True
    token = operand.group(1)
    return token[0].isdigit() or re.split(r"[.\[]", token)[0] in names


def _reasoned(verb: str, sentence: str, names: frozenset[str], public: frozenset[str]) -> bool:
    """Whether an imperative only tells how to see a thing of the problem ("Treat the polygon as closed"),
    not what to change in the program ("Treat cur as a string")."""
    if verb.lower() not in REASONING:
        return False
    found = re.search(rf"\b{re.escape(verb)}\s+((?:[\w'-]+\s+){{1,4}}?)as\b", sentence)
    if not found:
        return False
    words = [w for w in re.findall(r"[A-Za-z_]\w*", found.group(1)) if w.lower() not in ("the", "a", "an", "each", "every")]
    return bool(words) and all(of_problem(w, names, public) for w in words)


#: after a modal, a verb that changes a program ("must reset", "should be appended"), not one that says what
#: a computation or the problem's things must do ("has to run over every edge", "must merge whole trees")
_CODE_CHANGE: Final = re.compile(
    rf"\s+(?:(?:also|now|instead|first|then|rather|only|always|still)\s+)?(?:(?:be|get)\s+{_CHANGED}\b|"
    # processing steps ordered: "have to be sorted before they are combined"
    r"be\s+\w+(?:ed|en)\s+(?:before|after|first|using|into|instead)\b|"
    r"(?:use|change|replace|switch|initiali[sz]e|add|remove|swap|move|reset|increment|decrement|insert|modify|"
    r"rewrite|update|store|keep|sort|call|append|set|copy|break|continue|return|print|check|compare|skip|"
    r"mark|convert|cast|clamp|guard|allocate|record|loop|iterate|test)\b)", re.I)
#: the subject of a modal that is the programmer or the program ("you must", "your loop should")
_PROGRAM_MODAL_SUBJECT: Final = frozenset("you your program code solution function method loop it search scan "
                                          "traversal recursion check test condition comparison branch variable "
                                          "counter index pointer stack queue".split())


def _statement_of_what_holds(hint: str, found: re.Match[str], names: frozenset[str], public: frozenset[str]) -> bool:
    """At L5, whether a modal states what must hold ("the shoelace sum has to run over every edge", "only a
    root may be re-pointed", "updating ... must never change what was recorded"): the invariant L5 gives,
    not an instruction to change the program (revision 12). An instruction: its verb changes a program
    (``_CODE_CHANGE``, not negated), its subject is the programmer or the program, or its clause names a
    program identifier (its subject: one that is not also a word of the problem, "day")."""
    rest = re.split(r"[.;:!?]", hint[found.end():], maxsplit=1)[0]
    if any(word in names and len(word) >= 2 for word in code_words(rest)):
        return False
    # a correction by contrast picks the program's way against another: "ought to be the right operand, not
    # the left", "test for upper case rather than for letters", "must begin at 1 instead"
    if re.search(r"\b(?:rather\s+than|instead)\b|,\s+not\s+(?:the|a|an|for|by|to|on)\b", rest):
        return False
    clause = re.split(r"[.;:,!?()]|\s[-–—]+\s", hint[:found.start()])[-1]
    subject = re.findall(r"[A-Za-z_]\w*", clause)
    if ({w.lower() for w in subject} & _PROGRAM_MODAL_SUBJECT
            or any(w in names and len(w) >= 2 and w.lower() not in public for w in subject)):
        return False
    modal = MODAL.match(found.group())
    after = found.start() + (modal.end() if modal else 0)
    negated = re.match(r"\s+(?:never|not)\b", hint[after:])
    # a passive on a thing of the problem ("padding has to be added at the high-order end") says what the
    # result must hold, as its active ("has to run over every edge") does; revision 14
    passive = re.match(rf"\s+(?:(?:also|now|only|always|still)\s+)?be\s+{_CHANGED}\b(?!\s+(?:before|after|first|"
                       r"using|into|instead)\b)", hint[after:], re.I)
    return bool(negated) or bool(passive) or not _CODE_CHANGE.match(hint, after)


def direction_reasons(hint: str, names: frozenset[str] = frozenset(), public: frozenset[str] = frozenset(),
                      level: int = 1) -> list[str]:
    """``direction`` reasons; ``names`` are the programs' identifiers, ``public`` the problem statement's
    words (lower-cased): an obligation or a way of seeing laid on a thing of the problem is no change; at
    ``level`` 5 a modal stating what must hold is L5's invariant."""
    reasons: list[str] = []
    sentences = SENTENCES.split(hint)
    for index, sentence in enumerate(sentences):
        if index and _EXAMPLE_PART.search(sentences[index - 1][-6:]):
            continue  # revision 16: the sentence split after "e.g.": the example's own words, not an order
        # revision 15: "Use a garage with 2 levels ...: park 'A' ..." before "Expected (1, 'compact')": a test
        # scenario set up, not a change to the program
        if _SCENARIO.match(sentence) and _EXPECTED_LATER.search(" ".join(sentences[index + 1:])):
            continue
        # "Lowercasing the line first ... rather than ...": a repair told as a gerund
        gerund = re.match(r"\s*([A-Z][a-z]+ing)\b[^.\n]{0,80}?\b(?:rather\s+than|instead\s+of)\b", sentence)
        if gerund and gerund.group(1).lower()[:-3] not in ("someth", "noth", "everyth", "anyth"):
            reasons.append(f"direction: a repair told as a gerund {gerund.group(1)!r}")
            break
        verb = next((v for part in _starts(sentence) if not _EXAMPLE_PART.match(part)
                     and (v := _imperative(part, names))), None)
        if verb and (_reasoned(verb, sentence, names, public) or _held_at_l5(verb, sentence, names, public, level)):
            continue
        if verb:
            reasons.append(f"direction: imperative {verb!r}")
            break
        # a lone word before a colon heads what follows ("Symptom: ..."), unless nothing follows ("Change:")
        verb = _constructed(sentence, names) or (
            lone_verb(sentence) if not sentence.rstrip().endswith(":") or index == len(sentences) - 1 else None)
        if verb and (_reasoned(verb, sentence, names, public) or _held_at_l5(verb, sentence, names, public, level)
                     or verb.lower() in _FAULT_ADJECTIVES and _noun_phrase_after(verb, sentence)):
            continue
        if verb:
            reasons.append(f"direction: imperative by construction {verb!r}")
            break
        verb = request_verb(sentence, names)
        if verb:
            reasons.append(f"direction: request {verb!r}")
            break
    found = next((m for m in _DIRECTION.finditer(hint) if not _DESCRIBED_CHOICE.search(hint, 0, m.start())
                  and not _observed_against_norm(hint, m)
                  and not (m.group().lower().startswith("instead") and _PROGRAM_DOES.search(hint, 0, m.start()))
                  and not (MODAL.match(m.group()) and not patched_modal(hint, m) and (problem_subject(hint, m, names, public)
                                                       or (level >= 5 and generic_norm(hint, m, names))
                                                       or not _asked_expression(m.group(), names)
                                                       or (level >= 5 and _asked_expression(m.group(), names)
                                                           and not re.search(r"\bbe\s+\S+\s*[-+*/%<>=]", m.group())
                                                           and _statement_of_what_holds(hint, m, names, public))))),
                 None)
    if found and not (level == 1 and MODAL.match(found.group()) and _expected_at_l1(hint, found, names)):
        reasons.append(f"direction: repair phrasing {found.group()[:30]!r}")
    elif not found and level > 1:
        # revision 18: an exact value asked for a statement quoted before it, "should be n itself", is a change
        patch = next((m for m in _VALUE_MODAL.finditer(hint) if patched_modal(hint, m)), None)
        if patch:
            reasons.append(f"direction: a value asked for a quoted statement {patch.group()[:30]!r}")
    return reasons


_VALUE_MODAL: Final = re.compile(r"(?<!\bthat\s)(?<!\bwhich\s)\b(?:should|must|needs?\s+to|has\s+to|have\s+to)\s+"
                                 r"(?:(?:also|now|instead|rather|only|still)\s+)?be\b", re.I)


#: revision 15: a scenario set up (an instance of the problem's thing with numbers), then its expected output
_SCENARIO: Final = re.compile(r"\s*(?:use|take|try|consider|imagine|picture|start\s+with|set\s+up)\s+(?:a|an|one)\s+"
                              r"[\w-]+\s+with\s+\d", re.I)
_EXPECTED_LATER: Final = re.compile(r"\bexpected\b|\bthe\s+(?:right|correct)\s+(?:answer|output|result)\s+is\b", re.I)


#: revision 15: a norm set against what happens ("Each level should own its own counts, but a change to one
#: level's counts shows up on every level"): the contrast clause is what the program does, an observation,
#: as revision 13 read it for concept; a modal or an imperative in the contrast keeps it a direction
_NORM_THEN_BUT: Final = re.compile(r"\b(?:should|must|ought\s+to|has\s+to|have\s+to|is\s+supposed\s+to)\b[^.;!?\n]*?"
                                   r"(?:,|;)?\s+(?:but|yet|whereas)\s+(?P<rest>[^.;!?\n]*)$", re.I)
_CONTRAST_MODAL: Final = re.compile(r"\b(?:should|must|need|needs|has\s+to|have\s+to|ought|you|fix|instead|rather)\b",
                                    re.I)


def _observed_against_norm(hint: str, found: re.Match[str]) -> bool:
    """Whether ``found`` lies in the contrast clause after a norm, one that tells what happens (see above)."""
    start = max(hint.rfind(mark, 0, found.start()) for mark in ".;!?\n") + 1
    stop = re.search(r"[.;!?\n]", hint[found.end():])
    clause = hint[start: found.end() + (stop.start() if stop else len(hint))]
    norm = _NORM_THEN_BUT.search(hint[start: found.start()])
    if not norm:
        return False
    contrast = clause[norm.start("rest"):]
    return not _CONTRAST_MODAL.search(contrast)


def _expected_at_l1(hint: str, found: re.Match[str], names: frozenset[str]) -> bool:
    """At L1, whether a modal is the expected behaviour, not a repair: its subject is neither the programmer
    nor the program ("fewer players than should advance", "intervals that ought to end up in one block").
    Revision 14: first seen, the repair phrasing rule fired at L1 three times, alone, and was never right."""
    clause = re.split(r"[.;:!?]", hint[:found.start()])[-1]
    subject = {w for w in re.findall(r"[A-Za-z_]\w*", clause)}
    return not ({w.lower() for w in subject} & _PROGRAM_MODAL_SUBJECT
                or any(w in names and len(w) >= 2 for w in subject))


#: revision 16: a clause opened by an example cue holds a test's input and expected output, not an order
_EXAMPLE_PART: Final = re.compile(r"\W*(?:e\.\s?g\.|i\.\s?e\.|for\s+(?:example|instance)|such\s+as)(?:\W|$)", re.I)
#: revision 16: adjectives of a fault that are also verbs: "Wrong room numbers on a few lines." is a symptom
_FAULT_ADJECTIVES: Final = frozenset({"wrong"})
#: revision 16: at L5, what an imperative asks to keep or see that is the concept: an invariant, a rule
_KEPT_CONCEPT: Final = re.compile(r"\b(?:keep|maintain|preserve|hold)\s+(?:the\s+|this\s+|an\s+)?"
                                  r"(?:invariant|property|rule|definition|condition\s+that)\b", re.I)


def _noun_phrase_after(verb: str, sentence: str) -> bool:
    """Whether ``verb`` heads a noun phrase (no determiner follows: "Wrong room numbers"), not an object."""
    found = re.search(rf"\b{re.escape(verb)}\s+([A-Za-z]+)", sentence)
    return found is not None and found.group(1).lower() not in DETERMINER


def _held_at_l5(verb: str, sentence: str, names: frozenset[str], public: frozenset[str], level: int) -> bool:
    """Revision 16: at L5, whether an imperative states the concept, not a change to the program: an invariant
    to keep ("Keep the invariant that [lo, hi] always contains ..."), a way of seeing a thing with no program name
    ("Treat each coin copy as a 0/1 item"), or a definition whose first word only looks like a verb ("Average pace
    for a whole run is total time divided by total distance": no determiner after it, a copula in its clause)."""
    if level < 5:
        return False
    if _KEPT_CONCEPT.search(sentence):
        return True
    clause = re.split(r"[:;,]", sentence, maxsplit=1)[0]
    if verb.lower() in REASONING:
        found = re.search(rf"\b{re.escape(verb)}\s+((?:[\w'/-]+\s+){{1,5}}?)as\s+(?:a|an)\b", clause)
        if not found:
            return False
        # "Treat each coin copy as a 0/1 item": a thing of the world, introduced by a determiner; "Treat day as
        # a multiple ..." (a program name used bare) or "the periods list" (a construct of code) is the program
        words = re.findall(r"[A-Za-z_]\w*", found.group(1))
        return (bool(words) and not _program_only(found.group(1), names, public)
                and not any(w.lower() in CODE_NOUNS for w in words)
                and (words[0].lower() in DETERMINER or not any(w in names for w in words)))
    return (sentence.lstrip().startswith(verb) and _noun_phrase_after(verb, sentence)
            and bool(re.search(r"\b(?:is|are|equals|means)\b", clause))
            # names read as words ("total time"), but no code: a span, an operator, a name only code writes
            and not re.search(r"[`=+*/<>%\[\]()]|\b[A-Za-z]+_\w*|\b[A-Za-z]+\d", clause))


def _program_only(text: str, names: frozenset[str], public: frozenset[str]) -> bool:
    """Whether ``text`` holds a name of the program that is no word of the problem ("cur", not "coin")."""
    return any(w in names and w.lower() not in public for w in re.findall(r"[A-Za-z_]\w*", text))
