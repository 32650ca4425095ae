"""Whose obligation a modal states, for the direction rule (:mod:`.leakage_direction`): a thing of the problem's world
("the pot must go to the winner": the concept), or the program and its code ("the loop must stop": a change). Split
from :mod:`.leakage_direction` (revisions 11-18: the subject of "should/must/has to", a coordinated predicate's
subject, a generic subject at L5, a program's name read as the world's noun, an exact value asked for a quoted
statement). Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Final

from .leakage_concept import patched_value

__all__ = ["CODE_NOUNS", "DETERMINER", "MODAL", "REASONING", "code_words", "generic_norm", "of_problem",
           "patched_modal", "problem_subject"]

DETERMINER: Final = frozenset("the a an this that these those each every all your its their it them my our".split())

#: nouns of the program, not of the problem's world: an obligation on one asks for a change (revision 11)
CODE_NOUNS: Final = frozenset("program code solution function method loop counter variable list array dict "
                               "dictionary map set index pointer flag condition check branch test comparison "
                               "accumulator sum total count result answer output value line statement call "
                               "it this that they you".split())
#: words between a subject and its modal that are not the subject ("the next part also must")
_SKIPPED: Final = frozenset("also still now then really always only all each just first instead that which "
                            "who".split())
#: verbs of a way of reasoning: "Treat the polygon as closed" tells how to see the problem (L5's concept)
REASONING: Final = frozenset("treat regard view consider think picture imagine see".split())


#: a match of :data:`.leakage_direction._DIRECTION` that lays an obligation ("must begin", "has to be paired with")
MODAL: Final = re.compile(r"(?:should|must|needs?\s+to|has\s+to|have\s+to|ought\s+to)\b", re.I)


def _stem(word: str) -> str:
    """A crude singular: "vertices" -> "vertex", "parties" -> "party", "edges" -> "edge"."""
    word = word.lower()
    if word.endswith("ices") and len(word) > 5:
        return word[:-4] + "ex"
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    return word[:-1] if word.endswith("s") and not word.endswith("ss") and len(word) > 3 else word


def of_problem(word: str, names: frozenset[str], public: frozenset[str]) -> bool:
    """Whether ``word`` names a thing of the problem statement's world (one of its words, singular or
    plural), not the program's (an identifier, a construct of code)."""
    return (word not in names and word.lower() not in CODE_NOUNS
            and _stem(word) in {_stem(w) for w in public})


def problem_subject(hint: str, found: re.Match[str], names: frozenset[str], public: frozenset[str]) -> bool:
    """Whether the obligation ``found`` is laid on a thing of the problem ("the last vertex has to be
    paired with the first", "the next part must begin counting from scratch"): what the computation must
    respect, told of the problem's objects, not a change asked of the program (revision 11). Not when the
    rest of its clause names the program ("must become start + d") or orders processing steps ("the words
    have to be normalised before they are used")."""
    start = found.start()
    rest = re.split(r"[.;:!?]", hint[found.end():], maxsplit=1)[0]
    if any(word in names and len(word) >= 2 for word in code_words(rest)):
        return False
    if re.search(r"\bbe\s+\w+(?:ed|en)\s+(?:before|after|first|using|into|instead)\b", found.group(), re.I):
        return False
    pieces = _SUBJECT_SPLIT.split(hint[:start])
    words = [w for w in re.findall(r"[A-Za-z_]\w*", pieces[-1]) if w.lower() not in _SKIPPED]
    if not words and len(pieces) > 2 and pieces[-2] == "and":
        # revision 17: a predicate coordinated with the one before ("cards set aside still belong to the pot and
        # must go to the winner"): its subject is the earlier clause's, the first noun of that clause
        return _coordinated_subject(pieces[-3], names, public)
    return bool(words) and of_problem(words[-1], names, public)


def generic_norm(hint: str, found: re.Match[str], names: frozenset[str]) -> bool:
    """At L5, whether a modal's subject is generic, "an event", "every car", "any reading" (an indefinite or
    universal determiner, then a noun that is neither the program's name nor a construct of code), and its clause
    names nothing of the program: a thing of the problem's world whether or not the statement uses the word, so the
    obligation, whatever its verb ("an event should only change the occupancy if ..."), is a norm over that world,
    the invariant L5 gives (revision 18). Below L5 a change verb keeps it a direction ("Each sailing should reset
    the seat count")."""
    subject = _GENERIC_SUBJECT.search(_SUBJECT_SPLIT.split(hint[:found.start()])[-1] or "")
    if subject is None:
        return False
    rest = re.split(r"[.;:!?]", hint[found.end():], maxsplit=1)[0]
    noun = subject.group(1)
    return (noun not in names and noun.lower() not in CODE_NOUNS and _stem(noun) not in CODE_NOUNS
            and not any(word in names and len(word) >= 2 for word in code_words(rest)))


def patched_modal(hint: str, found: re.Match[str]) -> bool:
    """Whether a modal's "be" gives an exact value to a statement the hint quoted before it ("The bug is in
    `lo, hi = 1, n - 1`. The upper bound should be n itself."): a change in words, a direction whatever its subject
    (revision 18; :func:`.leakage_concept.patched_value`)."""
    be = re.search(r"\bbe\b", found.group())
    return be is not None and patched_value(hint, found.start() + be.end())


#: revision 18: a clause's subject made generic by its determiner, just before the modal ("an event should")
_GENERIC_SUBJECT: Final = re.compile(r"^\s*(?:a|an|each|every|any|no)\s+([a-z]\w*)\s+(?:(?:also|still|only|always|"
                                     r"just|never)\s+)?$", re.I)


#: where the clause holding a modal's subject starts; the separator is kept (revision 17 reads "and")
_SUBJECT_SPLIT: Final = re.compile(r"[.;:,!?()]|\s[-–—]+\s|\b(so|and|but|because|since|once|then|while|when|if|"
                                   r"where)\b")


def code_words(text: str) -> list[str]:
    """The words of ``text`` that may be the program's names: not a word used as a noun after a determiner ("the
    current end", "a later row": the world's quantity, though the program also calls a variable so; revision 17),
    unless a construct of code follows it ("the end variable"). A bare or quoted name ("must become start + d",
    "`end`") stays."""
    common = {m.group(1) for m in re.finditer(r"\b(?:the|a|an|each|every|this|that|its|their)\s+(?:[a-z]+\s+)?"
                                              r"([a-z]+)\b(?!`)(?:\s+(\w+))?", text)
              if (m.group(2) or "").lower() not in CODE_NOUNS}
    return [w for w in re.findall(r"`[^`]*`|[A-Za-z_]\w*", text) if w not in common
            for w in re.findall(r"[A-Za-z_]\w*", w)]


def _coordinated_subject(clause: str, names: frozenset[str], public: frozenset[str]) -> bool:
    """Whether the subject of ``clause`` (its first word past determiners) is a thing of the problem, and no code
    span or program-only name stands before its verb."""
    words = [w for w in re.findall(r"[A-Za-z_]\w*", clause) if w.lower() not in _SKIPPED | DETERMINER]
    return bool(words) and of_problem(words[0], names, public) and "`" not in clause.split(words[0], 1)[0]
