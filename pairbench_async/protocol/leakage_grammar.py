"""Closed word classes, and the direction and input-pattern classes built from them (revision 9).

Revisions 1-8 recognised a repair instruction by its verb, from a list of change verbs fitted to the
labelled sets seen so far; hints written later by others used verbs no list held ("Seed the best
with ...", "Give the helper the two missing moves", "require the stack to be empty"). English has
few words of the closed classes (determiners, pronouns, prepositions, conjunctions, auxiliaries,
wh-words, common adverbs, numerals), and the verbs that only point at something to look at are a
small closed class too. So a direction is recognised by construction:

* an imperative: a clause (a sentence, the part after a colon or a spaced dash, a clause after a
  lead word such as "Also," or "Then", or the main clause after an adverbial "When ..., ...") whose
  first word is not a closed-class word, not an inflected form (``-s``, ``-ed``, ``-ing``, ``-ly``,
  a possessive), and is followed by a determiner, pronoun, possessive, number or one of the
  program's identifiers; its verb is a change request unless it is a pointing verb
  (:data:`POINTING`); a coordinated ``and <verb> <object>`` after an imperative is one too;
* a request: "could/can/would you <verb>", "please <verb>", "let's <verb>", "try <verb>ing" whose
  verb is not a pointing verb.

An input pattern is recognised by construction too: a plural noun qualified by an example list
("numerals such as IV, IX", "islands shaped like a U") or a relative clause over the plural noun
that opens a sentence ("Strings that open brackets and never close them ..."), unless the
clause is about the program or its output, or (revision 13) its predicate is the output's verdict on
the input ("passwords that should be reported as WEAK"). Revision 15: a base verb after "and" inside a plural
relative clause ("the lines that call `f` and multiply by ...") is that clause's verb, not a coordinated
imperative. Revision 17: "plus", "minus", "modulo" are closed (arithmetic's prepositions: "..., minus the
capacity"). Pure: no I/O.
"""

from __future__ import annotations

import builtins
import re
from typing import Final

__all__ = ["CLOSED", "LEAD", "POINTING", "adverbial", "constructed_imperative", "coordinated_imperative",
           "example_inputs", "exercise", "lead_only", "lone_verb", "open_verb", "pointing", "request_verb", "starts_with_lead"]

#: the closed classes: a clause opening with one of these is no imperative
CLOSED: Final = frozenset(
    # determiners and quantifiers
    "the a an this that these those each every all both some any no none either neither another such what which "
    "whose half several many much more most few fewer less least enough other "
    # pronouns and possessives
    "i you he she it we they me him her us them my your his its our their mine yours ours theirs one ones "
    "someone something nothing everything anyone anything everyone nobody somebody everybody itself "
    "yourself themselves here there "
    # prepositions
    "in on at by for with from to of into onto over under above below between among through during before "
    "after since until till upon about against around along across behind beyond near past per via without "
    "within like unlike than as despite except inside outside toward towards up down off out given "
    "including regarding beside besides "
    # the operators of arithmetic read as prepositions ("the charge plus the surplus, minus the capacity"; revision 17)
    "plus minus modulo "
    # conjunctions and subordinators
    "and or but nor yet so because although though while whereas if unless whether when whenever where "
    "wherever once whatever whichever "
    # auxiliaries and modals
    "is are was were be been being am do does did done have has had can could will would shall should may "
    "might must ought need needs dare isn't aren't wasn't weren't don't doesn't didn't can't couldn't won't "
    "wouldn't shouldn't mustn't haven't hasn't it's that's there's here's what's let's i'm you're we're "
    # wh-words
    "how why who whom "
    # common adverbs and interjections
    "not never always often sometimes usually now then also just only even still already again too very "
    "quite rather almost perhaps maybe probably possibly really actually instead otherwise however "
    "therefore thus hence yes hmm hm well ok okay oh ah so first second third finally currently clearly "
    "apparently right left back away together else exactly nearly roughly mostly somehow anyway "
    "meanwhile later earlier soon today true false same last next "
    # numerals
    "zero two three four five six seven eight nine ten hundred thousand million twice".split())

#: verbs that point at something to look at, think about or run: no change to the program
POINTING: Final = frozenset((
    "look check consider think compare trace inspect examine notice see note verify review re-read reread "
    "debug step walk run test print follow focus ask imagine suppose remember observe read study revisit "
    "reconsider suspect recall picture visualise visualize assume mind watch spot find figure work go trust "
    "count try simulate draw sketch explain describe tell say guess predict determine identify locate "
    "pin question wonder expect agree hand-trace dry-run list pay bear have doubt recheck double-check beware "
    "sanity-check reproduce confirm recognise recognize understand know realise realize "
    "cross-check reason ponder analyse analyze evaluate estimate measure profile log dump display show").split())

#: verbs whose object can be an input or a test: "give it an empty line", "feed the program ..."
_TESTING: Final = frozenset("give feed pass run try take".split())
_TESTED: Final = re.compile(r"\b(?:program|code|solution|function|it|inputs?|tests?|examples?|samples?|cases?|"
                            r"lines?|values?)\b", re.I)

#: what may follow an imperative verb: a determiner, pronoun, possessive or number opening its object
_OBJECT: Final = frozenset((
    "the a an this that these those each every all both some any no its their his her your my our them it "
    "him us me one two three four five six seven eight nine ten zero another either neither "
    "half").split())

#: words that open an imperative clause inside a sentence ("Also, seed ...", "Then give ...")
LEAD: Final = frozenset("also then now just please so and first finally instead simply next only".split())
#: an adverbial clause that may come before a main clause in the imperative ("When ..., subtract ...")
_ADVERBIAL: Final = frozenset(("if when whenever once before after while in on at for during unless as since "
                               "until inside within whenever where wherever for").split())

#: after a number, words that make it a verb's object ("Add 1 to the count")
_AFTER_NUMBER: Final = frozenset("to from with instead rather into more less as than before after between".split())
#: finite verbs that make the opening words a subject ("Odd n fails", "Seed values are too small")
_FINITE: Final = frozenset(("is are was were has have had fails fail passes pass gives give prints print seems seem "
                            "looks look appears does do did breaks crashes works returns outputs comes come goes "
                            "stays remains becomes gets decode decodes needs need implies means must should can "
                            "cannot will would may might could shall").split())

_WORD: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’-]*")


def _inflected(word: str) -> bool:
    """An inflected form (plural or third person, past, gerund, adverb, possessive): never a bare
    imperative ("Numerals such as ...", "Counting k people ...", "Islands ...")."""
    w = word.lower().replace("’", "'")
    vowel = re.compile(r"[aeiouy]")
    return ("'" in w
            or (w.endswith("ing") and bool(vowel.search(w[:-3])))  # not "bring", "string"
            or (w.endswith("ed") and not w.endswith("eed") and bool(vowel.search(w[:-2])))  # not "seed", "need"
            or (w.endswith("ly") and not w.endswith("ply") and len(w) > 4)  # not "apply", "multiply"
            or (w.endswith("s") and not w.endswith(("ss", "us", "is"))))


def _base(word: str) -> str:
    return word.lower().replace("’", "'")


#: Python's builtins and the methods of its containers and strings: names a hint can give as an object
_PYTHON_NAMES: Final = frozenset(n for t in (builtins, str, list, dict, set) for n in dir(t)
                                 if not n.startswith("_") and n.islower() and len(n) > 2
                                 and not _inflected(n)) - CLOSED - {"input", "object", "type"}

def exercise(clause: str) -> bool:
    """Whether ``clause`` sets the candidate an exercise ("by hand", "on paper"): pointing, not a change."""
    return bool(_EXERCISE.search(clause))


def pointing(verb: str) -> bool:
    """Whether ``verb`` (any form) is a pointing or diagnostic verb: the gerund's stem too."""
    w = _base(verb)
    if w.startswith("re") and len(w) > 4 and w[2:].lstrip("-") in POINTING:
        return True  # "retrace", "re-run", "reexamine": pointing again
    if w in POINTING:
        return True
    if w.endswith("ing"):
        stem = w[:-3]
        return any(c in POINTING for c in (stem, stem + "e", stem[:-1]))
    return False


def _object(rest: list[str], names: frozenset[str], verb: str) -> bool:
    """Whether ``rest`` opens like a verb's object: a determiner, pronoun or possessive, a number used
    as a quantity, one of the program's names, a gerund ("keep searching"), or a preposition opening
    a complement ("Iterate over the string", "Sort by the pair")."""
    after = rest[0]
    if after[0].isdigit():
        # "Add 1 to ...", "put 5 between 10 and 1"; not a noun numbered ("line 3", "Position 1 in ...")
        return len(rest) > 1 and _base(rest[1]) in _AFTER_NUMBER
    if _base(after) in _OBJECT:
        return True
    if after in _PYTHON_NAMES:
        return True  # "call split with no argument", "use sorted here": a name of Python's, the object
    if after in names:
        # "Seed best with ..."; not "Hexadecimal digits ...", an adjective and its plural noun
        return not (verb[0].isupper() and _inflected(after))
    if _base(verb) in _ASPECTUAL and _base(after).endswith("ing") and _inflected(after):
        return True  # "keep searching to the left", "stop counting after ..."
    if _base(after) in _COMPLEMENT_PREP and len(rest) > 1:
        nxt = rest[1]
        return _base(nxt) in _OBJECT or nxt in names or nxt[0].isdigit() or not (
            _base(nxt) in CLOSED or _inflected(nxt) and not nxt.endswith("ing"))
    return False


#: nouns of attention in pointing idioms ("keep an eye on", "take a look", "take note", "pay attention")
_ATTENTION: Final = frozenset("look eye note attention mind glance peek".split())
#: a manner that makes an instruction an exercise: "by hand", "on paper", "in your head"
_EXERCISE: Final = re.compile(r"\b(?:by\s+hand|on\s+paper|in\s+your\s+head|mentally|for\s+yourself|"
                              r"yourself)\b", re.I)
#: verbs that take a gerund as their object (a closed class)
_ASPECTUAL: Final = frozenset("keep stop start begin continue resume quit finish avoid".split())
#: endings of nouns and adjectives that are no verb's ("Divisibility by 15 ...", "divisible by 4")
_NOMINAL: Final = re.compile(r"(?:ible|able|ous|ful|less|ity|ness|tion|sion|ism|ary|ory|ic|(?<!e)al)$")
#: verbs ending like a noun or an adjective
_VERBAL: Final = frozenset("enable disable signal total equal".split())
#: prepositions that open a verb's complement: "Iterate over ...", "Switch to ...", "Sort by ..."
_COMPLEMENT_PREP: Final = frozenset("by over to from into through across along toward towards onto".split())


def open_verb(word: str) -> bool:
    """Whether ``word`` may be an imperative verb: an open-class word (2+ letters), uninflected, not a
    pointing verb."""
    w = _base(word)
    return not (w in CLOSED or pointing(word) or _inflected(word) or (_NOMINAL.search(w) and w not in _VERBAL)
                or not re.fullmatch(r"[A-Za-z][a-z]+(?:-[a-z]+)*", word))


def constructed_imperative(clause: str, names: frozenset[str] = frozenset()) -> str | None:
    """The change verb a clause opens with as an imperative, by construction (no change-verb list)."""
    words: list[str] = _WORD.findall(clause)
    while words and _base(words[0]) in LEAD:
        words = words[1:]
    if len(words) < 2:
        return None
    verb, after = words[0], words[1]
    if not open_verb(verb):
        return None
    # the verb and its object are separate words of running text ("row[j]", "id = 7" are code)
    if re.search(rf"(?<![\w-]){re.escape(verb)}\s+[(\[{{]\s*[-\w\"']", clause):
        pass  # "Add (900, "CM") ...", "write (a + b - 1) // b there": a literal or expression as the object
    elif not re.search(rf"(?<![\w-]){re.escape(verb)}\s+[`'\"]?{re.escape(after)}\b", clause):
        return None
    elif not _object(words[1:], names, verb):
        return None
    # "Lowercase input like ff fails": a noun phrase with its example, not an instruction
    if len(words) > 2 and _base(words[2]) in ("such", "like", "containing", "whose", "where"):
        return None
    # "Odd n fails", "Suspect values are ...": a subject with its finite verb
    if any(_base(w) in _FINITE and w not in names for w in words[1:4]):
        return None
    # "Give it an empty line": testing the program on an input, not changing it
    if _base(verb) in _TESTING and _TESTED.search(" ".join(words[1:4])):
        return None
    # "Take a look at ...", "Keep an eye on ...", "Take note of ...": pointing idioms
    if any(_base(w) in _ATTENTION for w in words[1:4]):
        return None
    # "Start by tracing ...", "Begin with the smallest input": where to start looking
    if _base(verb) in ("start", "begin") and _base(after) in ("by", "with"):
        return None
    # "Compute the expected answer by hand": an exercise for the candidate, not a change to the program
    if exercise(clause):
        return None
    return verb


def lone_verb(sentence: str) -> str | None:
    """A sentence of one open-class word ("Add.", "Reset", "Change:"): an instruction, its object left out."""
    words: list[str] = _WORD.findall(sentence)
    return words[0] if len(words) == 1 and open_verb(words[0]) and not words[0].isupper() else None


def coordinated_imperative(clause: str, names: frozenset[str] = frozenset()) -> str | None:
    """A change verb coordinated with an imperative or request ("look one character ahead and subtract
    the current value"): ``and <verb> <object>`` after an opening verb."""
    for found in re.finditer(r"\band\s+(?:then\s+|also\s+)?(?=[a-z])", clause):
        # revision 15: "the two lines that call `f` and multiply by ...": a base verb after "and" shares the
        # form of a plural relative clause's verb, so it is that clause's (what the program does), not an
        # imperative; after "the loop that sums ... and reset", a verb in -s, it is the reader's
        relative = list(re.finditer(r"\b(?:that|which)\s+([a-z]+)\b", clause[:found.start()]))
        if relative and not re.search(r"(?:s|ed)$", relative[-1].group(1)) and relative[-1].group(1) not in CLOSED:
            continue
        verb = constructed_imperative(clause[found.end():], names)
        if verb:
            return verb
    return None


#: "could you look ...", "can you please make ...", "please seed ...", "let's give ...", "try seeding ..."
_REQUEST: Final = re.compile(
    r"\b(?:(?:could|can|would|will)\s+you|please|let['’]s|let\s+us)\s+"
    r"(?:please\s+|also\s+|just\s+|maybe\s+|perhaps\s+)?"
    r"(?P<verb>[a-z][a-z-]*)\b|\btry\s+(?P<gerund>[a-z]+ing)\b",
    re.I,
)


def request_verb(sentence: str, names: frozenset[str] = frozenset()) -> str | None:
    """The change verb of a request in ``sentence`` (or of a change coordinated with a pointing verb)."""
    for found in _REQUEST.finditer(sentence):
        verb = found.group("verb") or found.group("gerund")
        if _base(verb) in CLOSED and not found.group("gerund"):
            continue
        # "Could you take another look at ...", "would you keep an eye on ...": a pointing idiom (revision 11)
        if any(_base(w) in _ATTENTION for w in _WORD.findall(sentence[found.end():])[:3]):
            continue
        if not pointing(verb) and not _inflected(verb if not found.group("gerund") else "x"):
            return verb
        rest = sentence[found.end():]
        clause = re.split(r"[.;:!?]", rest, maxsplit=1)[0]
        coordinated = coordinated_imperative(clause, names)
        if coordinated:
            return coordinated
    return None


def adverbial(clause: str) -> bool:
    """Whether ``clause`` opens as an adverbial ("When the next one is larger", "In the loop body")."""
    words: list[str] = _WORD.findall(clause)
    return bool(words) and _base(words[0]) in _ADVERBIAL


def starts_with_lead(clause: str) -> bool:
    """Whether ``clause`` opens with a lead word ("so carry the excess ...", "then give ...")."""
    words: list[str] = _WORD.findall(clause)
    return bool(words) and _base(words[0]) in LEAD and _base(words[0]) != "and"


def lead_only(clause: str) -> bool:
    """Whether ``clause`` is only lead words ("Also", "Then", "So now")."""
    words: list[str] = _WORD.findall(clause)
    return bool(words) and all(_base(w) in LEAD for w in words)


# --------------------------------------------------------------------------- input pattern

#: a plural noun (after a sentence start, a determiner or a preposition) with an example list:
#: "numerals such as IV, IX", "islands shaped like a U", "strings like '(('", "years, e.g. 1900"
_EXAMPLE: Final = r"(?-i:[\"'“‘`(\[{]|-?\d|[A-Z]{1,4}\b|(?:[Aa]n?\s+)?[A-Z]\b|(?:[Aa]n?\s+)[\"'“‘])"
_PLURAL_EXAMPLES: Final = re.compile(
    r"(?:^|[.;:!?]\s+|\b(?:the|some|any|all|those|these|on|for|with|in|of|to|hmm,?|many|certain)\s+)"
    r"(?:[A-Za-z][\w-]*\s+)?(?P<noun>[A-Za-z][\w-]*[^s\W]s)\b(?:\s+[a-z]+ed)?,?\s+"
    r"(?:(?:like|say)\s+" + _EXAMPLE + r"|(?:such\s+as|e\.\s?g\.,?|for\s+example|for\s+instance),?\s+(?:" + _EXAMPLE
    + r"|(?!(?:this|that|these|those|it|them|the|a|an)\b)\w+))",
    re.I | re.M,
)
#: "Strings that open brackets ...": a plural noun opening a sentence, with its relative clause
_PLURAL_RELATIVE: Final = re.compile(
    r"(?:^|[.;!?]\s+)(?:(?:hmm|so|well|now|oh),?\s+)?(?:(?:the|some|any|all|those|certain)\s+)?"
    r"(?:[a-z][\w-]*\s+)?(?P<noun>[a-z][\w-]*[^s\W]s)\s+(?:that|which|whose|where)\s+(?P<rel>[^.;!?]{3,80})",
    re.I | re.M,
)
#: nouns that are the program's or the output's, or verbs ending in -s: not a class of inputs
_NOT_INPUT: Final = frozenset((
    "outputs answers results values-printed tests cases things looks seems sounds feels works acts behaves "
    "reads gives returns prints counts means goes does says makes takes keeps fails passes errors bugs issues "
    "problems mistakes variables loops functions branches checks conditions statements lines-of-code "
    "iterations steps updates programs solutions parts places spots times ways attempts runs").split())
_ABOUT_OUTPUT: Final = re.compile(r"\b(?:program|code|solution|loop|function|it|you|your|output\w*|print\w*|"
                                  r"return\w*|answer\w*|result\w*|expected|fail\w*|pass(?:es|ed)?)\b", re.I)


#: a relative clause whose predicate is the output's verdict on the input, expected or given: "that should be
#: reported as WEAK", "which are printed as OK", "that ought to be accepted" (revision 13)
_VERDICT: Final = re.compile(r"\s*(?:(?:should|must|ought\s+to|would|will|need\s+to)\s+)?(?:not\s+)?(?:be|are|is|were|was|"
                             r"get|gets|got)\s+(?:(?:correctly|wrongly|incorrectly|then|also|still)\s+)?(?:reported|printed|"
                             r"returned|shown|listed|output|accepted|rejected|classified|rated|marked|labell?ed|flagged|"
                             r"answered|judged|declared|reported)\b", re.I)


#: where the examples are the output's: "... appear in your output", "... are printed"
_IN_OUTPUT: Final = re.compile(r"\b(?:appears?|shows?\s+up|(?:are|is|get|gets|got)\s+printed)\b|"
                               r"\b(?:in|of|from)\s+(?:your|the|its)\s+(?:output|answer|result)s?\b", re.I)


def example_inputs(hint: str) -> str | None:
    """A class of inputs described by example or by a relative clause (L1 forbids it), or None."""
    for found in _PLURAL_EXAMPLES.finditer(hint):
        rest = re.split(r"[.;!?](?:\s|$)", hint[found.end():], maxsplit=1)[0]
        # "Lines such as 'bolt 0' appear in your output": examples of the output, the symptom
        if found.group("noun").lower() not in _NOT_INPUT and not _IN_OUTPUT.search(rest):
            return found.group().strip(" .;:!?")
    for found in _PLURAL_RELATIVE.finditer(hint):
        if found.group("noun").lower() in _NOT_INPUT:
            continue
        rel = found.group("rel")
        # "... that the program prints", "... where it fails": about the program or its output
        if _ABOUT_OUTPUT.search(" ".join(rel.split()[:3])):
            continue
        # "passwords that should be reported as WEAK": inputs picked out by their verdict, the output (revision 13)
        if _VERDICT.match(rel):
            continue
        return found.group().strip(" .;:!?")
    return None
